"""Results in MTEB's results layout: ``<root>/<model name>/<revision>/<task>.json`` and ``model_meta.json``.

One JSON per task, as MTEB writes them: ``task_name``, ``dataset_revision`` (here the sha256 of the data files the
evaluation read), ``mteb_version`` (none: MTEB did not run), ``evaluation_time``, ``kg_co2_emissions`` (not
measured) and ``scores: {<split>: [{"main_score", "hf_subset": "default", "languages", ...}]}``, the main score as
a fraction (MTEB's scale; ours are in %), the task's other top-level numbers beside it. The task names are this
repository's ids (``tatoeba@cosine``): each protocol is ours, and docs/evaluation.md says, task by task, whether it
equals MTEB's task of the same name or how it differs. ``model_meta.json`` names the model and its revision.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from common.io import write_json

PERCENT = 100.0  # our scores are in %, MTEB's are fractions


def model_folder(root: str | Path, name: str, revision: str | None) -> Path:
    """MTEB's folder of a model: its name with ``/`` as ``__``, then the revision."""
    return Path(root) / name.replace("/", "__") / (revision or "no_revision_available")


def task_json(record: dict[str, Any]) -> dict[str, Any]:
    """A results JSON of ours (:class:`common.eval.results.ResultRecord` as a dict) in MTEB's form."""
    scores = record["scores"]
    extra = {k: v / PERCENT for k, v in scores.items()
             if k != "main_score" and isinstance(v, int | float) and not isinstance(v, bool)}
    return {"task_name": record["task_name"], "dataset_revision": record["data_sha256"], "mteb_version": None,
            "evaluation_time": record["evaluation_time"], "kg_co2_emissions": None,
            "scores": {record["split"]: [{"main_score": scores["main_score"] / PERCENT, "hf_subset": "default",
                                          "languages": record["languages"], **extra}]}}


def export(root: str | Path, name: str, revision: str | None, records: list[dict[str, Any]],
           meta: dict[str, Any]) -> list[Path]:
    """Write one model's results (``records``) and its ``model_meta.json``; returns the files written."""
    folder = model_folder(root, name, revision)
    written = []
    for record in records:
        path = folder / f"{record['task_name']}.json"
        write_json(path, task_json(record))
        written.append(path)
    write_json(folder / "model_meta.json", {"name": name, "revision": revision, **meta})
    return [*written, folder / "model_meta.json"]
