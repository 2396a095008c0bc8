"""Benchmark: BUCC mining (k-NN both ways, margin scoring, one-to-one) on N x N random unit
vectors of dimension D, on this machine's CPU. Prints wall time and peak RSS, and the time of a
plain N x N matrix product of the same shapes as a same-process baseline.

    python scripts/bench_bucc_mining.py --n 200000 --dim 768
"""
import argparse
import time

import torch
import torch.nn.functional as F

from common.eval.bucc import mine
from common.rss import peak_rss_bytes

p = argparse.ArgumentParser()
p.add_argument("--n", type=int, default=20000)
p.add_argument("--dim", type=int, default=768)
p.add_argument("--k", type=int, default=4)
a = p.parse_args()
g = torch.Generator().manual_seed(0)
x = F.normalize(torch.randn(a.n, a.dim, generator=g), dim=-1)
y = F.normalize(torch.randn(a.n, a.dim, generator=g), dim=-1)
t0 = time.perf_counter()
for s in range(0, a.n, 1024):  # baseline: the score matrix alone, blockwise, no top-k
    (x[s:s + 1024] @ y.T).max()
base = time.perf_counter() - t0
t0 = time.perf_counter()
out = mine(x, y, k=a.k, scoring="ratio")
t = time.perf_counter() - t0
rss = peak_rss_bytes() / 2**20
print(f"n={a.n} dim={a.dim} k={a.k} threads={torch.get_num_threads()}: mining {t:.1f} s "
      f"({len(out)} candidates); one pass of blockwise x@y.T {base:.1f} s; ratio {t / base:.2f}; "
      f"peak RSS {rss:.0f} MiB")
