"""Outside models on the leaderboard: untrained rows beside the trained methods, scored by the same tasks.

The workflow's ``models`` list (``--config models='[...]'``) names them: a key of the scale config's
``outside_models``, or a model as ``python -m common.eval --model`` takes it (``NAME@REVISION``, ``package:...``, a
folder; :mod:`common.models.outside`). A config entry is either ``{model: <spec>}`` or ``{build: {...}}``, a model
built here, deterministically, from a packaged one (:func:`build`): another pooling, and/or a Dense projection
with seeded orthonormal rows and a Normalize module. Each row reads ``eval/outside/<name>/<task>.json`` (the tasks'
data from the evaluation-only corpus), is truncated at the leaderboard's ``eval.max_length`` like every trained
method, and says where its weights came from (:func:`origin`).
"""
from __future__ import annotations

import argparse
import logging
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)
INIT = "outside"  # the init of an outside row's paths: eval/outside/<name>/seed1


@dataclass(frozen=True)
class OutsideModel:
    name: str  # the row's name (a path component)
    spec: str | None  # what common.eval --model takes; None for a model built here
    build: dict[str, Any] = field(default_factory=dict)  # the recipe of a model built here
    note: str = ""


def slug(spec: str) -> str:
    """A path-safe row name for a model given directly (``org/name@rev`` -> ``org--name@rev``)."""
    return re.sub(r"[^\w.@-]+", "-", spec.replace("package:", "").replace("/", "--")).strip("-")


def outside_models(cfg: dict[str, Any], names: list[str] | None) -> list[OutsideModel]:
    """The outside rows the workflow's ``models`` asks for (``cfg``: the leaderboard config)."""
    known = cfg.get("outside_models", {})
    out = []
    for name in names or []:
        entry = known.get(name)
        if entry is None:
            out.append(OutsideModel(slug(name), name))
        elif "model" in entry:
            out.append(OutsideModel(name, entry["model"], note=entry.get("note", "")))
        else:
            out.append(OutsideModel(name, None, dict(entry["build"]), entry.get("note", "")))
    dup = sorted({m.name for m in out if [x.name for x in out].count(m.name) > 1})
    if dup:
        raise ValueError(f"models: {dup} named twice")
    return out


def revision(m: OutsideModel) -> str:
    """The revision an outside row's export is filed under: the Hub commit, the package's version, else 'local'."""
    if m.spec is None:
        return "local"
    from common.models import outside

    return outside.resolve(m.spec).revision or "local"


def origin(m: OutsideModel, described: dict[str, Any]) -> str:
    """Where the row's weights came from, for the table's notes (``described``: its results JSON's model record)."""
    digest = f"weights sha256 {str(described.get('weights_sha256'))[:12]}"
    if m.spec is None:
        b = m.build
        parts = [f"pooling {b['pooling']}" if b.get("pooling") else None,
                 f"a Dense projection to {b['dense']} dimensions with orthonormal rows drawn from seed {b['seed']}"
                 if b.get("dense") else None, "a Normalize module" if b.get("normalize") else None]
        return (f"built here from {b['from']} with " + ", ".join(p for p in parts if p)
                + f" (python -m common.leaderboard.outside; {digest})")
    where = {"hub": "the Hugging Face Hub", "package": "the installed Python package",
             "path": "a local folder"}.get(str(described.get("origin")), "?")
    return (f"{described.get('name')} at revision {described.get('revision') or '–'}, from {where} "
            f"({m.spec}; {digest})")


def build(recipe: dict[str, Any], out: str | Path) -> Path:
    """A sentence-transformers folder from ``recipe``: ``from`` (a packaged or local model), optional ``pooling``,
    ``dense`` (output width) with ``seed``, ``normalize``. Deterministic: the same recipe gives the same bytes of
    weights."""
    import torch

    from common.models import st_format
    from common.models.encoder import SentenceEncoder
    from common.models.outside import resolve
    from common.models.tokenizer import load_tokenizer

    src = resolve(recipe["from"]).folder
    modules = st_format.read_modules(src)
    encoder = SentenceEncoder.load(src)
    if recipe.get("pooling"):
        encoder.pooling = recipe["pooling"]
    sbert = st_format.sentence_bert_config(src)
    out = Path(out)
    tmp = out.with_name(out.name + ".tmp")
    encoder.save(tmp, load_tokenizer(src), max_seq_length=int(sbert.get("max_seq_length", 256)))
    chain = [m for m in modules[:2]]
    if recipe.get("dense"):
        width = encoder.backbone.config.hidden_size * len(encoder.pooling.split("+"))
        g = torch.Generator().manual_seed(int(recipe["seed"]))
        gaussian = torch.randn(width, int(recipe["dense"]), generator=g, dtype=torch.float64)  # (D, D')
        q, _ = torch.linalg.qr(gaussian)  # (D, D') orthonormal columns
        chain.append(st_format.Module("Dense", f"{len(chain)}_Dense"))
        st_format.write_dense(tmp / chain[-1].path, q.T.float())  # weight (D', D): orthonormal rows
    if recipe.get("normalize"):
        chain.append(st_format.Module("Normalize", f"{len(chain)}_Normalize"))
        (tmp / chain[-1].path).mkdir(parents=True, exist_ok=True)
    st_format.write_modules(tmp, chain)
    (tmp / "README.md").write_text(
        "---\nlibrary_name: sentence-transformers\npipeline_tag: sentence-similarity\n---\n\n"
        f"# {recipe['from']}, rebuilt\n\nBuilt by `python -m common.leaderboard.outside` from `{recipe['from']}` "
        f"with the recipe `{recipe}`: modules {' → '.join(m.name for m in chain)}. An untrained reference row of "
        "the cross-paper leaderboard (docs/leaderboard.md), not a trained model.\n")
    if out.exists():
        import shutil

        shutil.rmtree(out)
    tmp.rename(out)
    return out


def main(argv: list[str] | None = None) -> None:
    from common.config import load_leaderboard_config

    p = argparse.ArgumentParser(description="Build a leaderboard config's outside model that is built here")
    p.add_argument("--scale", required=True)
    p.add_argument("--name", required=True, help="a key of the config's outside_models with a 'build' recipe")
    p.add_argument("--out", required=True)
    a = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    entry = load_leaderboard_config(a.scale).get("outside_models", {}).get(a.name)
    if entry is None or "build" not in entry:
        raise SystemExit(f"outside_models.{a.name}: no such entry with a 'build' recipe in the {a.scale} config")
    log.info("built %s", build(entry["build"], a.out))


if __name__ == "__main__":
    main()
