"""Corpus preparation: training pairs after the leakage rule, plus where every evaluation set is.

``prepare(kind, out, data_root, spec)`` writes under ``out``:

* ``train/{lang}-en.tsv`` — ``non_english<TAB>english`` pairs, leakage-filtered;
* ``bucc/`` — BUCC-format mining sets (synthetic, or built from real held-out data);
* ``manifest.json`` — languages, the evaluation folders to read, and the leakage counts.

Each kind is built by its own module, which registers itself (:mod:`common.data.corpora`): ``synthetic``
(smoke, :mod:`common.data.corpus_synthetic`), ``mini`` (:mod:`common.data.corpus_mini`), ``paper`` (DAP,
:mod:`common.data.corpus_paper`), ``paper_enzh`` / ``paper_hictl`` / ``paper_vmsst`` (MoCo-BERT, HICTL, VMSST).
"""
from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path
from typing import Any

from common.data import corpora
from common.data.cleaning import PairCleaner
from common.data.manifest import write_manifest
from common.io import write_json

log = logging.getLogger(__name__)


def prepare(kind: str, out: str | Path, data_root: str | Path, spec: dict[str, Any], base_url: str | None = None,
            pins: dict[str, str] | None = None, evaluation_only: bool = False) -> dict[str, Any]:
    """Write the corpus of ``kind``; paper corpora download from ``base_url`` (a mirror) when given, with ``pins``
    replacing the pins of the resources they name (the rehearsal mirror's own digests). The downloaded training
    bitext of the paper kinds passes a :class:`common.data.cleaning.PairCleaner` (``spec.max_chars``); its counts
    are the manifest's ``cleaning``."""
    from common.data import download as dl

    out = Path(out)
    d = dl.Downloader(out / "downloads", base_url=base_url, pins=pins)
    cleaner = PairCleaner(spec.get("max_chars", 1000))  # the downloaded training bitext (paper kinds)
    build = corpora.builder(kind)
    if evaluation_only:  # the evaluation data alone (scoring a model not trained here)
        if kind not in corpora.EVALUATION_ONLY_KINDS:
            raise ValueError(f"corpus kind {kind!r} has no evaluation-only build; kinds that have one: "
                             f"{sorted(corpora.EVALUATION_ONLY_KINDS)} (score on the experiment's full corpus)")
        spec = {**spec, corpora.EVALUATION_ONLY: True}
    manifest = build(out, Path(data_root), spec, d, cleaner)
    if kind.startswith("paper"):
        manifest["cleaning"] = cleaner.report()  # what was dropped from each downloaded source, and why
    write_json(out / "leakage.json", manifest["leakage"])
    write_manifest(out, manifest)
    log.info("corpus %s: %s training pairs, %d dropped by the leakage rule", kind,
             {k: sum(1 for _ in open(v, encoding="utf-8")) for k, v in manifest["train"].items()},
             manifest["leakage"]["dropped_total"])
    return manifest


def main(argv: list[str] | None = None) -> None:
    from common.config import load_config

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--experiment", required=True, help="a paper, or 'leaderboard' (whose corpus config to use)")
    p.add_argument("--scale", required=True)
    p.add_argument("--data-root", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--base-url", default=None, help="mirror replacing the scheme and host of download URLs")
    p.add_argument("--mirror", default=None, help="serve this rehearsal mirror folder and download from it")
    p.add_argument("--corpus", default=None, help="a corpus section (JSON) replacing the config's (the workflow "
                   "config's corpus: your own data)")
    p.add_argument("--evaluation-only", action="store_true",
                   help="the evaluation data alone, no training files (scoring a model that is not trained here)")
    a = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    from common.data.mirror_server import place_manual, serving

    cfg = json.loads(a.corpus) if a.corpus else load_config(a.experiment, a.scale)["corpus"]
    place_manual(a.mirror, a.experiment, Path(a.out))  # what a user places by hand at paper scale
    with serving(a.mirror, a.base_url) as (base_url, pins):
        prepare(cfg["kind"], a.out, a.data_root, cfg.get(cfg["kind"], {}), base_url, pins, a.evaluation_only)


if __name__ == "__main__":
    main()
