"""A training job's MFU: the latest measurement of its recipe at its shape, or the census's assumption, named as such.

``scripts/bench_mfu.py`` writes ``figures/gpu/<device>/mfu-<date>.json`` on a GPU. Two formats are read:

* the current one: ``rows``, one per (model, rung), each with its ``model`` (``dap-128``, ``tr-1024``,
  ``hictl-large``, ``vmsst``: the recipe, with the pairs per step for DAP and TR), ``rows`` (pairs or examples per
  GPU), ``length`` and ``mfu`` (or ``failed``);
* the earlier one: ``variants`` (``TR``, ``DAP``: the eager step) at the file's ``batch`` pairs and ``max_length``.

A job matches a measurement where the bench's recipe is the job's (``RECIPES``: the bench builds these jobs' models
and batches) and its rows per GPU and length are the job's micro batch and ``max_length``. The trainer's step is
eager (not compiled): of the current format's rungs only the eager ones count (``EAGER_RUNGS``), the best of them.
The latest file (by the date in its name) holding a match gives the figure; a measurement on one GPU kind prices the
job on both (its A100 and H100 wall times). Where no file matches, the job is priced at the assumed MFU.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from common.config import ROOT
from common.io import read_json

FIGURES = ROOT / "figures" / "gpu"
# (paper, census job) -> the recipe of scripts/bench_mfu.py that builds that job's model and batch
RECIPES = {("dap", "mbert/tr"): "tr", ("dap", "mbert/dap"): "dap", ("hictl", "xlmr_large/hictl_hns"): "hictl-large",
           ("vmsst", "l6/vmsst"): "vmsst"}
EAGER_RUNGS = ("current", "one call")
ASSUMED = "assumed"


@dataclass(frozen=True)
class Mfu:
    value: float
    source: str  # the measurement's file (relative to the repository), or ASSUMED
    rung: str = ""  # the bench's rung measured ("eager" for the earlier format)


def measurements(path: Path) -> dict[tuple[str, int, int], tuple[float, str]]:
    """(recipe, rows, length) -> (best MFU, its rung) of one bench file; none for a CPU run or a file without a
    peak. Raises ``ValueError`` naming the file where a row lacks a field."""
    m = read_json(path)
    if not isinstance(m, dict) or m.get("device", "cpu") == "cpu" or "peak_flops" not in m:
        return {}
    found: dict[tuple[str, int, int], tuple[float, str]] = {}
    try:
        if "rows" in m:
            entries = [(re.sub(r"-\d+$", "", r["model"]), int(r["rows"]), int(r["length"]), float(r["mfu"]), r["rung"])
                       for r in m["rows"] if "mfu" in r and r["rung"] in EAGER_RUNGS]
        else:
            entries = [(label.lower(), int(m["batch"]), int(m["max_length"]), float(v["mfu"]), "eager")
                       for label, v in m.get("variants", {}).items()]
    except (KeyError, TypeError, ValueError) as e:
        raise ValueError(f"{path}: not a scripts/bench_mfu.py file ({type(e).__name__}: {e})") from None
    for recipe, rows, length, mfu, rung in entries:
        key = (recipe, rows, length)
        if key not in found or mfu > found[key][0]:
            found[key] = (mfu, rung)
    return found


def job_mfu(paper: str, job: str, rows: float, length: int, assumed: float, root: Path = FIGURES) -> Mfu:
    """The MFU of ``paper``'s ``job`` at ``rows`` per GPU of ``length`` tokens: the latest matching measurement
    under ``root`` (``<device>/mfu-<date>.json``), else ``assumed`` with source ASSUMED."""
    recipe = RECIPES.get((paper, job))
    if recipe is None or rows != int(rows):
        return Mfu(assumed, ASSUMED)
    files = sorted(root.glob("*/mfu-*.json"), key=lambda p: (p.stem, str(p)), reverse=True)  # the latest first
    for path in files:
        hit = measurements(path).get((recipe, int(rows), int(length)))
        if hit is not None:
            shown = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
            return Mfu(hit[0], str(shown), hit[1])
    return Mfu(assumed, ASSUMED)
