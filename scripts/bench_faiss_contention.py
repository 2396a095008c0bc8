"""Why might faiss ``IndexFlatIP`` mine slowly beside our exact search (issue 33: one Intel run had it 7x slower)?

Times BUCC-style mining (:func:`common.eval.bucc.mine`, ratio margin, k = 4) of N x N random unit vectors with faiss
flat in three settings, each in a fresh interpreter, interleaved over ``--rounds``:

* ``fresh``: faiss alone;
* ``after_torch``: faiss right after our exact search in the same process (torch's and faiss's OpenMP runtimes are
  two copies of libgomp: a pool still spinning after torch's work would take cores from faiss's);
* ``faiss_then_torch``: the other order.

Run it twice more to test the other two suspects: with ``OMP_WAIT_POLICY=PASSIVE`` in the environment (no spinning
pools) and beside a busy machine (machine load). Prints every run and the median per setting; the exact search's
time is printed too, so the ratio exact / faiss can be compared across settings.

    python scripts/bench_faiss_contention.py [--n 20000] [--rounds 3] [--threads 2]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

MODES = ("fresh", "after_torch", "faiss_then_torch")
ROOT = Path(__file__).resolve().parents[1]


def one(mode: str, n: int, threads: int) -> dict[str, float]:
    """In this process: seconds of each search that ``mode`` runs."""
    import torch

    from common.eval.bucc import mine

    torch.set_num_threads(threads)
    g = torch.Generator().manual_seed(0)
    x, y = torch.randn(n, 768, generator=g), torch.randn(n, 768, generator=g)
    x.div_(x.norm(dim=1, keepdim=True))
    y.div_(y.norm(dim=1, keepdim=True))
    order = {"fresh": ["faiss-flat"], "after_torch": ["exact", "faiss-flat"],
             "faiss_then_torch": ["faiss-flat", "exact"]}[mode]
    out = {}
    for backend in order:
        t0 = time.perf_counter()
        mine(x, y, k=4, scoring="ratio", knn_search=backend)
        out[backend] = time.perf_counter() - t0
    return out


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--n", type=int, default=20000)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--child", choices=MODES, help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.child:
        print(json.dumps(one(a.child, a.n, a.threads)))
        return
    runs: dict[str, list[dict[str, float]]] = {m: [] for m in MODES}
    for _ in range(a.rounds):
        for mode in MODES:
            out = subprocess.run([sys.executable, __file__, "--child", mode, "--n", str(a.n), "--threads",
                                  str(a.threads)], cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
                                 capture_output=True, text=True, check=True).stdout
            runs[mode].append(json.loads(out.strip().splitlines()[-1]))
    policy = os.environ.get("OMP_WAIT_POLICY", "unset")
    print(f"N = {a.n}, threads = {a.threads}, OMP_WAIT_POLICY = {policy}, rounds = {a.rounds}")
    for mode, rs in runs.items():
        for backend in rs[0]:
            times = [r[backend] for r in rs]
            print(f"{mode:17s} {backend:10s} median {statistics.median(times):6.2f} s  runs "
                  + " / ".join(f"{t:.2f}" for t in times))


if __name__ == "__main__":
    main()
