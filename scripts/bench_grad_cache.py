"""Peak memory of a contrastive step with gradient caching (common/training/grad_cache.py) against the plain step.

One forward and backward of in-batch translation ranking (``--batch`` pairs, both sides ``--length`` tokens) through
a BERT-shaped encoder, the encoder run unchunked or in chunks of ``--rows`` rows; each variant in a fresh process
(its peak resident memory above the model's setup is the figure), fp32 on the CPU; plus the time the second pass
costs. HICTL's Table 9 setting is length 256 with XLM-R large; the default here is a narrower encoder at that length.

    python scripts/bench_grad_cache.py --rows 0 16 4 --out figures/bench/<machine>/grad_cache
"""
from __future__ import annotations

import argparse
import json
import time

from bench.peak_memory import against_plain, measure_in_children, peak_rss_mb, write_figures


def child(a: argparse.Namespace, rows: int) -> dict:
    import torch
    from transformers import BertConfig, BertModel

    from common.losses.translation_ranking import TranslationRankingLoss
    from common.models.encoder import SentenceEncoder
    from common.training.grad_cache import enable_grad_cache

    torch.manual_seed(0)
    torch.set_num_threads(2)
    cfg = BertConfig(vocab_size=30522, hidden_size=a.hidden, num_hidden_layers=a.layers,
                     num_attention_heads=a.hidden // 64, intermediate_size=4 * a.hidden,
                     max_position_embeddings=max(512, a.length), hidden_dropout_prob=0.0,
                     attention_probs_dropout_prob=0.0)  # no dropout: every variant computes the same numbers
    enc = SentenceEncoder(BertModel(cfg, add_pooling_layer=False), "cls").train()
    if rows:
        enable_grad_cache(enc, rows)
    g = torch.Generator().manual_seed(1)
    x, y = (torch.randint(1000, 30000, (a.batch, a.length), generator=g) for _ in range(2))
    mask = torch.ones(a.batch, a.length, dtype=torch.long)
    base = peak_rss_mb()
    t0 = time.perf_counter()
    loss = TranslationRankingLoss(temperature=0.05)(enc(x, mask)[0], enc(y, mask)[0])
    loss.backward()
    seconds = time.perf_counter() - t0
    grad_norm = torch.cat([p.grad.flatten() for p in enc.parameters() if p.grad is not None]).norm().item()
    return {"rows": rows, "loss": loss.item(), "grad_norm": grad_norm, "seconds": round(seconds, 2),
            "peak_rss_mb": round(peak_rss_mb()), "peak_above_setup_mb": round(peak_rss_mb() - base)}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--length", type=int, default=256)
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--rows", type=int, nargs="+", default=[0, 16, 4])
    p.add_argument("--out", default=None, help="write the figures here (.json and .md)")
    p.add_argument("--child", type=int, default=None, help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.child is not None:
        print(json.dumps(child(a, a.child)))
        return
    shape = ["--batch", str(a.batch), "--length", str(a.length), "--hidden", str(a.hidden), "--layers", str(a.layers)]
    rows = measure_in_children(__file__, shape, [str(r) for r in a.rows])
    plain = rows[0]
    lines = [f"# Gradient caching: in-batch ranking of {a.batch} pairs x {a.length} tokens, BERT {a.layers} layers x "
             f"{a.hidden} (fp32, CPU)", "",
             "Written by `scripts/bench_grad_cache.py`; each row a fresh process, one forward + backward. The loss "
             "and the gradient norm agree across rows (dropout off; the gradient is exact: tests/common/training/"
             "test_grad_cache.py).", "",
             "| chunk (rows) | loss | gradient norm | peak RSS above setup (MB) | vs plain | seconds | vs plain |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['rows'] or 'plain'} | {r['loss']:.4f} | {r['grad_norm']:.4f} | {against_plain(r, plain)}")
    write_figures(a.out, lines, {"args": vars(a), "rows": rows})


if __name__ == "__main__":
    main()
