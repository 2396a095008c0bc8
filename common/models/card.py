"""The model card (``README.md``) of every model folder the repository saves, generated from ``card.json`` beside it.

``card.json`` holds what the training job knew when it saved the model (:func:`training_facts`: the method and its
paper, the initial encoder, the training data with its counts and the leakage rule, the hyper-parameters, the seed,
the commit and the data digests) and, once a report has read them, the model's evaluation results with their 95 %
intervals over the test items (:func:`add_results`, called by :mod:`common.report.cards`). Every change re-renders
``README.md`` with the sentence-transformers front matter, so the folder reads as a complete model on its own.
"""
from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from common.io import atomic_write, read_json, sha256_file, write_json

CARD = "card.json"
README = "README.md"
HASH_LIMIT = 1 << 30  # training files are hashed into the card up to 1 GiB in all (a paper-scale corpus is larger)


def corpus_facts(manifest_path: str | Path) -> dict[str, Any]:
    """The training data of a corpus manifest: languages and their files, the leakage rule's counts, digests."""
    manifest_path = Path(manifest_path)
    m = read_json(manifest_path)
    files = {lang: Path(path) for lang, path in sorted(m.get("train", {}).items())}
    size = sum(p.stat().st_size for p in files.values() if p.exists())
    digests = ({lang: sha256_file(p) for lang, p in files.items() if p.exists()} if size <= HASH_LIMIT else None)
    leak = m.get("leakage", {})
    return {"manifest": str(manifest_path), "manifest_sha256": sha256_file(manifest_path), "kind": m.get("kind"),
            "languages": sorted(files), "train_files_sha256": digests, "train_bytes": size,
            "leakage": {k: leak[k] for k in ("dropped_total", "dropped", "pairs_before", "eval_sentences",
                                             "by_source") if k in leak}}


def training_facts(resolved: dict[str, Any], source: str | None, modules: list[str], kind: str,
                   commit: str | None, versions: dict[str, str]) -> dict[str, Any]:
    """What a training job's card says (``resolved``: the config the job saved beside the model)."""
    run, cfg = resolved["run"], resolved["config"]
    return {"paper": resolved["paper"], "paper_source": source, "experiment": resolved.get("experiment"),
            "method": run["method"], "method_settings": resolved.get("method", {}), "scale": run["scale"],
            "init": run["init"], "initial_encoder": cfg["encoders"][run["init"]], "seed": run["seed"],
            "training": cfg.get("training", {}), "n_examples": resolved.get("n_examples"),
            "snapshot_step": resolved.get("snapshot_step"), "data": corpus_facts(run["corpus"]),
            "kind": kind, "modules": modules, "commit": commit, "versions": versions}


@contextmanager
def locked(model_dir: Path) -> Iterator[None]:
    """One writer of a folder's card at a time (several evaluations' reports may add results)."""
    with open(model_dir / ".card.lock", "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def write_card(model_dir: str | Path, facts: dict[str, Any]) -> None:
    """Start a folder's card from its training facts (no results yet)."""
    model_dir = Path(model_dir)
    write_json(model_dir / CARD, {"facts": facts, "results": {}})
    render(model_dir)


def has_card(model_dir: str | Path) -> bool:
    return (Path(model_dir) / CARD).exists()


def add_results(model_dir: str | Path, results: dict[str, dict[str, Any]]) -> None:
    """Add or replace evaluation results: task -> ``{main_score, lo, hi, main_score_is, scale, split}``."""
    model_dir = Path(model_dir)
    with locked(model_dir):
        card = read_json(model_dir / CARD)
        card["results"] = {**card.get("results", {}), **results}
        write_json(model_dir / CARD, card)
        render(model_dir)


def _interval(result: dict[str, Any]) -> str:
    """``[lo, hi]``, or a dash where the task type has no item-level interval."""
    if result.get("lo") is None or result.get("hi") is None:
        return "–"
    return f"[{result['lo']:.2f}, {result['hi']:.2f}]"


def _table(rows: list[tuple[str, str]]) -> list[str]:
    return ["| setting | value |", "|---|---|", *(f"| {k} | {v} |" for k, v in rows)]


def render(model_dir: str | Path) -> str:
    """Write ``README.md`` from ``card.json``; returns the text."""
    model_dir = Path(model_dir)
    card = read_json(model_dir / CARD)
    f, results = card["facts"], card.get("results", {})
    enc = f["initial_encoder"]
    base = enc.get("pretrained") if isinstance(enc, dict) and "pretrained" in enc else None
    lines = ["---", "library_name: sentence-transformers", "pipeline_tag: sentence-similarity",
             "tags: [sentence-transformers, feature-extraction, sentence-similarity, cross-lingual]",
             *([f"base_model: {base}"] if base and not str(base).startswith(("package:", "/", ".")) else []),
             "---", "",
             f"# {f['method']} ({f['paper_source'] or f['paper']}), seed {f['seed']}", "",
             f"Method `{f['method']}` as the {f['paper']} recipe of this repository trains it "
             f"(papers/{f['paper']}/README.md), experiment `{f['experiment']}`, scale `{f['scale']}`"
             + (f", snapshot of step {f['snapshot_step']}" if f.get("snapshot_step") is not None else "") + ".", "",
             "## Use", "", "```python", "from sentence_transformers import SentenceTransformer", "",
             "model = SentenceTransformer(\"path/to/this/folder\")"]
    if f["kind"] == "dual-encoder":
        lines += ["english = model.encode([\"A dog runs.\"], task=\"en\")  # English goes to the en encoder",
                  "other = model.encode([\"Ein Hund rennt.\"], task=\"xx\")  # every other language to xx"]
    else:
        lines += ["vectors = model.encode([\"A dog runs.\", \"Ein Hund rennt.\"])"]
    lines += ["```", "", f"Modules: {' → '.join(f['modules'])}. Similarity: cosine.", "",
              "## Initial encoder", "", f"`{f['init']}`: `{enc}`", "", "## Training data", ""]
    d = f["data"]
    leak = d["leakage"]
    lines += [f"Corpus `{d['kind']}` (manifest `{d['manifest']}`), {f['n_examples']} training examples, languages "
              f"paired with English: {', '.join(d['languages']) or '–'}.",
              f"Leakage rule (docs/data.md): every training pair with either side in an evaluation set is dropped; "
              f"here {leak.get('dropped_total', '–')} pairs"
              + (" (per language: " + ", ".join(f"{k} {v}" for k, v in sorted(leak['dropped'].items())) + ")"
                 if leak.get("dropped") else "") + ".", ""]
    lines += ["## Hyper-parameters", "", *_table(sorted((k, f"`{v}`") for k, v in f["training"].items())), "",
              f"Method settings: `{f['method_settings']}`", "", "## Seed and provenance", "",
              *_table([("seed", str(f["seed"])), ("commit", f"`{f['commit']}`"),
                       ("corpus manifest sha256", f"`{d['manifest_sha256']}`"),
                       ("training files sha256", "; ".join(f"{k} `{v}`" for k, v in d["train_files_sha256"].items())
                        if d["train_files_sha256"] else f"not hashed ({d['train_bytes']:,} bytes)"),
                       ("versions", ", ".join(f"{k} {v}" for k, v in sorted(f["versions"].items())))]), "",
              "## Evaluation results", ""]
    if results:
        lines += ["| task | main score | 95% CI (test items) | main score is |", "|---|---|---|---|"]
        lines += [f"| {t} | {r['main_score']:.2f} | {_interval(r)} | {r['main_score_is']} |"
                  for t, r in sorted(results.items())]
        lines += ["", "Intervals: a cluster bootstrap over the test items (common/report/claims.py)."]
    else:
        lines += ["Not evaluated yet: the experiment's report adds each task's score here."]
    text = "\n".join(lines) + "\n"
    with atomic_write(model_dir / README) as fh:
        fh.write(text)
    os.chmod(model_dir / README, 0o644)
    return text
