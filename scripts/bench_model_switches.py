"""Time and activation memory of one training step under the model switches (common/training/model_switches.py):
length-bucketed encoder calls and full or selective activation checkpointing, against the plain step.

The step: in-batch translation ranking of ``--batch`` NTREX-128 German-English pairs (news sentences: their real
lengths, tokenised by a WordPiece vocabulary trained on them, cut at ``--max-length``), both sides through a
BERT-shaped encoder, each side padded to its longest row as the collators pad; bf16 autocast on the CPU, dropout off.
Each round runs every variant once on the same batch (rounds interleaved, a new batch each round); the figure is the
median over rounds and its ratio to the plain step's. Per variant also: the tokens the encoder computes (padding
included) against the real ones, and the bytes kept for the backward pass (the census's count,
``common.census.probe.saved_activation_bytes``).

    python scripts/bench_model_switches.py --out figures/bench/<machine>/model_switches
"""
from __future__ import annotations

import argparse
import copy
import gzip
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.peak_memory import write_figures  # noqa: E402
from bench.results import machine  # noqa: E402
from common.census.probe import saved_activation_bytes  # noqa: E402
from common.losses.translation_ranking import TranslationRankingLoss  # noqa: E402
from common.models.encoder import SentenceEncoder, autocast  # noqa: E402
from common.training.model_switches import apply_model_switches  # noqa: E402

VARIANTS = {
    "plain": {},
    "length_buckets 2": {"length_buckets": 2},
    "length_buckets 4": {"length_buckets": 4},
    "length_buckets 8": {"length_buckets": 8},
    "checkpointing full": {"gradient_checkpointing": "full"},
    "checkpointing selective": {"gradient_checkpointing": "selective"},
}


def pairs(data_root: Path) -> list[tuple[str, str]]:
    with gzip.open(data_root / "ntrex128" / "deu-eng.tsv.gz", "rt", encoding="utf-8") as fh:
        rows = [line.rstrip("\n").split("\t") for line in fh]
    return [(r[1], r[0]) for r in rows if len(r) >= 2]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data-root", default=str(ROOT.parent / "shared" / "data"))
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--max-length", type=int, default=256)
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--out", default=None, help="write the figures here (.json and .md) and append to its log")
    a = p.parse_args()
    from transformers import BertConfig, BertModel

    from common.models.tokenizer import train_wordpiece

    torch.set_num_threads(a.threads)
    data = pairs(Path(a.data_root))
    tok = train_wordpiece([s for pair in data for s in pair], vocab_size=8000,
                          out_dir=tempfile.mkdtemp(prefix="bench-switches-tok-"), min_frequency=2)
    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=len(tok), hidden_size=a.hidden, num_hidden_layers=a.layers,
                     num_attention_heads=a.hidden // 64, intermediate_size=4 * a.hidden,
                     max_position_embeddings=a.max_length, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    plain = SentenceEncoder(BertModel(cfg, add_pooling_layer=False), "mean").train()
    models = {}
    for name, switches in VARIANTS.items():
        models[name] = copy.deepcopy(plain)
        apply_model_switches(models[name], switches)
    loss_fn = TranslationRankingLoss(temperature=0.05)
    g = torch.Generator().manual_seed(1)

    def side(texts: list[str]) -> dict[str, torch.Tensor]:
        return dict(tok(texts, padding=True, truncation=True, max_length=a.max_length, return_tensors="pt"))

    def step(model: torch.nn.Module, x: dict, y: dict) -> float:
        model.zero_grad(set_to_none=True)
        t0 = time.perf_counter()
        with autocast("cpu", "bf16"):
            loss = loss_fn(model(x["input_ids"], x["attention_mask"])[0], model(y["input_ids"], y["attention_mask"])[0])
        loss.backward()
        return time.perf_counter() - t0

    seconds: dict[str, list[float]] = {name: [] for name in VARIANTS}
    real = computed = 0
    for r in range(a.rounds + 1):  # round 0 warms up (oneDNN's kernels, the allocator) and is not counted
        chosen = torch.randperm(len(data), generator=g)[:a.batch].tolist()
        x, y = side([data[i][0] for i in chosen]), side([data[i][1] for i in chosen])
        for name, model in models.items():
            s = step(model, x, y)
            if r:
                seconds[name].append(s)
        if r:
            real += int(x["attention_mask"].sum() + y["attention_mask"].sum())
            computed += x["attention_mask"].numel() + y["attention_mask"].numel()
    kept = {}
    for name, model in models.items():  # the bytes kept for the backward pass, on the last round's batch
        with autocast("cpu", "bf16"):
            kept[name], out = saved_activation_bytes(model, lambda m=model: m(x["input_ids"], x["attention_mask"])[0])
        out.float().sum().backward()
    base = statistics.median(seconds["plain"])
    rows = [{"variant": name, "ms": round(1e3 * statistics.median(s), 1),
             "vs_plain": round(statistics.median(s) / base, 3), "kept_mb": round(kept[name] / 2**20, 1),
             "kept_vs_plain": round(kept[name] / kept["plain"], 3)} for name, s in seconds.items()]
    lines = [f"# Model switches: a translation-ranking step of {a.batch} NTREX-128 de-en pairs (max length "
             f"{a.max_length}), BERT {a.layers} x {a.hidden}, bf16 autocast, {a.threads} threads, on {machine()}", "",
             "Written by `scripts/bench_model_switches.py`: medians of "
             f"{a.rounds} interleaved rounds (a new batch each round). Padded to each side's longest row, the encoder "
             f"computes {computed} token positions for {real} real tokens ({100 * real / computed:.0f} % real). Kept: "
             "the bytes autograd (and selective checkpointing) keep for the backward pass of one side's encoder call.",
             "", "| variant | ms / step | vs plain | kept (MB) | vs plain |", "|---|---|---|---|---|"]
    lines += [f"| {r['variant']} | {r['ms']} | {r['vs_plain']:.2f} | {r['kept_mb']} | {r['kept_vs_plain']:.2f} |"
              for r in rows]
    write_figures(a.out, lines, {"args": vars(a), "machine": machine(), "real_tokens": real,
                                 "computed_tokens": computed, "rows": rows})


if __name__ == "__main__":
    main()
