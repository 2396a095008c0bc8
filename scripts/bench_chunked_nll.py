"""Peak memory of VMSST's decoder loss over mT5's vocabulary: plain vs chunked (common/losses/token_nll.py: the
fused linear + cross-entropy of common/losses/linear_cross_entropy.py, per-token losses; chunk 0 is the plain loss).

One forward and backward of the token cross-entropy of ``--tokens`` target tokens through a ``--features`` x
``--vocab`` output projection, each variant in a fresh process (its peak resident memory, ``VmHWM``, is the
figure), fp32 on the CPU; plus the extra time the recomputation costs.

    python scripts/bench_chunked_nll.py --tokens 2048 --vocab 250112 --chunks 0 2048 512 --out figures/bench/...
"""
from __future__ import annotations

import argparse
import json
import time

from bench.peak_memory import against_plain, measure_in_children, peak_rss_mb, write_figures


def child(tokens: int, features: int, vocab: int, chunk: int) -> dict:
    import torch
    from torch import nn

    from common.losses.token_nll import chunked_token_nll, token_nll

    torch.manual_seed(0)
    out = nn.Linear(features, vocab)
    x = torch.randn(tokens, features, requires_grad=True)
    t = torch.randint(0, vocab, (tokens,))
    base = peak_rss_mb()
    t0 = time.perf_counter()
    loss = (chunked_token_nll(out, x, t, chunk) if chunk > 0 else token_nll(out, x, t)).sum()
    loss.backward()
    seconds = time.perf_counter() - t0
    peak = peak_rss_mb()
    return {"chunk": chunk, "loss": loss.item(), "seconds": round(seconds, 2), "peak_rss_mb": round(peak),
            "peak_above_setup_mb": round(peak - base)}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tokens", type=int, default=2048)
    p.add_argument("--features", type=int, default=512)
    p.add_argument("--vocab", type=int, default=250112)
    p.add_argument("--chunks", type=int, nargs="+", default=[0, 2048, 512])
    p.add_argument("--out", default=None, help="write the figures here (.json and .md)")
    p.add_argument("--child", type=int, default=None, help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.child is not None:
        print(json.dumps(child(a.tokens, a.features, a.vocab, a.child)))
        return
    rows = measure_in_children(__file__, ["--tokens", str(a.tokens), "--features", str(a.features),
                                          "--vocab", str(a.vocab)], [str(c) for c in a.chunks])
    plain = rows[0]
    lines = [f"# Chunked token cross-entropy: {a.tokens} tokens, {a.features} features, vocabulary {a.vocab} (fp32, "
             "CPU)", "", "Written by `scripts/bench_chunked_nll.py`; each row a fresh process, forward + backward.", "",
             "| chunk (tokens) | loss | peak RSS above setup (MB) | vs plain | seconds | vs plain |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['chunk'] or 'plain'} | {r['loss']:.2f} | {against_plain(r, plain)}")
    write_figures(a.out, lines, {"args": vars(a), "rows": rows})


if __name__ == "__main__":
    main()
