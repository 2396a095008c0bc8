"""The BUCC-style set the mining benchmark measures the approximate index's F1 on: the mini scale's
held-out real translations (:func:`common.data.bucc_mini.build` with DAP's mini-scale settings), for the
language pairs the benchmark config names.

    python -m bench.bucc_set --data-root ../shared/data --pairs de fr --out results/bench/bucc
"""
from __future__ import annotations

import argparse
import logging
import shutil
import tempfile
from pathlib import Path

from common.config import load_paper_config
from common.data import bucc_mini
from common.io import write_json


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data-root", required=True)
    p.add_argument("--pairs", nargs="+", required=True)
    p.add_argument("--out", required=True)
    a = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    spec = load_paper_config("dap", "mini")["corpus"]["mini"]["bucc"] | {"pairs": a.pairs}
    out = Path(a.out)
    with tempfile.TemporaryDirectory(dir=out.parent if out.parent.exists() else None) as tmp:
        pairs, stats = bucc_mini.build(Path(tmp) / "bucc", Path(a.data_root), spec)
        write_json(Path(tmp) / "bucc" / "stats.json", {"pairs": pairs, "splits": stats})
        shutil.rmtree(out, ignore_errors=True)
        shutil.move(Path(tmp) / "bucc", out)  # the folder appears complete or not at all


if __name__ == "__main__":
    main()
