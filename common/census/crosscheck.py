"""The census checked three ways, each figure with how close it comes:

1. **DeepSpeed's ZeRO estimator** (``estimate_zero2_model_states_mem_needs``) against our model-state count for
   XLM-R base on 8 GPUs at ZeRO 2. The two differ by design: DeepSpeed's assumes 16-bit parameters and gradients
   (``2 P + 18 P / W``); our policy keeps fp32 weights (``4 P``), and ZeRO's partitioned fp32 copy, gradients and
   AdamW moments (``16 T / W``) and a reduction bucket.
2. **Korthikanti et al. 2022, eq. 1** against the bytes autograd saves in one BERT-base layer (bf16 autocast,
   dropout 0.1) at sequence 128, batch 8.
3. **A measured CPU run**: two AdamW training steps of a 4-layer, 256-wide BERT (ranking loss, 32 pairs of 64
   tokens, fp32): the census's prediction (gradients + AdamW moments + saved activations, above the weights)
   against torch's own estimator (``torch.distributed._tools.MemTracker``, which follows one call of a module per
   iteration: both sides of the pairs go through one encoder call) and the peak resident memory the steps add in a
   fresh process; and the counted FLOPs against ``6 N t`` plus attention.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import subprocess
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

import torch

from common.census import estimate as est
from common.census.architectures import CONFIGS
from common.census.probe import saved_activation_bytes
from common.rss import peak_rss_bytes, reset_peak_rss

if TYPE_CHECKING:
    from torch.utils.flop_counter import FlopCounterMode

    from common.models.encoder import SentenceEncoder


def _bert(hidden: int, layers: int, heads: int, ffn: int, vocab: int = 30522,
          dropout: float = 0.1) -> SentenceEncoder:
    from transformers import BertConfig, BertModel

    from common.models.encoder import SentenceEncoder

    cfg = BertConfig(vocab_size=vocab, hidden_size=hidden, num_hidden_layers=layers, num_attention_heads=heads,
                     intermediate_size=ffn, hidden_dropout_prob=dropout, attention_probs_dropout_prob=dropout)
    return SentenceEncoder(BertModel(cfg, add_pooling_layer=False), "cls")


def layer_check(seq: int = 128, batch: int = 8) -> dict[str, float]:
    from transformers import BertConfig
    from transformers.models.bert.modeling_bert import BertLayer

    torch.manual_seed(0)
    h, a = 768, 12
    layer = BertLayer(BertConfig(hidden_size=h, num_attention_heads=a, intermediate_size=4 * h,
                                 hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1)).train()
    x = torch.randn(batch, seq, h, requires_grad=True)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        ours, _ = saved_activation_bytes(layer, lambda: layer(x))
    formula = est.korthikanti_layer_bytes(seq, batch, h, a)
    return {"seq": seq, "batch": batch, "ours_mb": ours / 2**20, "korthikanti_mb": formula / 2**20,
            "ratio": ours / formula}


def _small_step() -> tuple[SentenceEncoder, torch.optim.Optimizer, Callable[..., int]]:
    """The small model, its optimizer and one training step (both sides of 32 pairs in one encoder call: the same
    loss, and ``MemTracker`` follows one call of a module per iteration)."""
    from common.losses.translation_ranking import TranslationRankingLoss

    torch.manual_seed(0)
    enc = _bert(256, 4, 4, 1024, dropout=0.0).train()
    opt = torch.optim.AdamW(enc.parameters(), lr=1e-4)
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(1000, 30000, (64, 64), generator=g)  # (2 x 32 pairs, 64 tokens)
    mask = torch.ones(64, 64, dtype=torch.long)
    loss_fn = TranslationRankingLoss(temperature=0.05)

    def forward() -> torch.Tensor:
        v = enc(ids, mask)[0]  # (64, D)
        return loss_fn(v[:32], v[32:])

    def step(counter: FlopCounterMode | None = None) -> int:
        with counter if counter is not None else contextlib.nullcontext():
            saved, loss = saved_activation_bytes(enc, forward)
            loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        return saved

    return enc, opt, step


def _child() -> dict[str, float]:
    """Two AdamW steps of the small model: peak RSS above the set-up, and the census's prediction."""
    from common.census import flops

    torch.set_num_threads(2)
    enc, _, step = _small_step()
    params = sum(p.numel() for p in enc.parameters())
    base = reset_peak_rss()
    counter = flops.counter()
    step()
    saved = step(counter)  # the second step holds the AdamW moments made by the first
    peak = peak_rss_bytes()
    non_embedding = params - sum(p.numel() for p in enc.backbone.embeddings.parameters())
    tokens, layers, seq, hidden = 64 * 64, 4, 64, 256
    analytic = 6 * non_embedding * tokens + 3 * 4 * layers * seq * hidden * tokens  # + attention scores, 3x fwd
    predicted = 4 * params + 8 * params + saved  # gradients, AdamW moments and activations above the weights
    return {"params": params, "measured_mb": (peak - base) / 2**20, "predicted_mb": predicted / 2**20,
            "flops": counter.get_total_flops(), "analytic_flops": analytic}


def memtracker_mb() -> float:
    """torch's own estimate (``torch.distributed._tools.MemTracker``) of the small step's peak above the weights."""
    from torch.distributed._tools.mem_tracker import MemTracker

    enc, opt, step = _small_step()
    tracker = MemTracker()
    tracker.track_external(enc, opt)
    with tracker:
        step()
        tracker.reset_mod_stats()
        step()
    peak = next(iter(tracker.get_tracker_snapshot("peak").values()))
    return float((peak["Total"] - sum(v for k, v in peak.items() if str(k).endswith("PARAM"))) / 2**20)


def crosschecks() -> dict[str, dict[str, float]]:
    """The figures of the three cross-checks (``describe`` writes them out)."""
    values: dict[str, dict[str, float]] = {}
    xlmr = CONFIGS["xlm-roberta-base"]
    h, layers, v, ffn = xlmr["hidden_size"], xlmr["num_hidden_layers"], xlmr["vocab_size"], xlmr["intermediate_size"]
    params = v * h + 514 * h + h + 2 * h + layers * (4 * h * h + 4 * h + 2 * h * ffn + ffn + h + 4 * h)
    ours = sum(est.model_state_bytes(params, params, est.optimizer_bytes("adamw", params, [], 0), 2, 8).values())
    ds = est.deepspeed_zero2_bytes(params, 8, 1)
    values["deepspeed_zero2"] = {"params": params, "ours_gib": ours / est.GIB, "deepspeed_gib": ds / est.GIB,
                                 "ratio": ours / ds,
                                 "ours_without_bucket_fp16_weights_gib": (ours - 4 * min(est.REDUCE_BUCKET, params)
                                                                          - 2 * params) / est.GIB}
    values["korthikanti_layer"] = layer_check()
    proc = subprocess.run([sys.executable, "-m", "common.census.crosscheck", "--child"], capture_output=True,
                          text=True, check=True)
    values["measured_cpu_step"] = {**json.loads(proc.stdout.strip().splitlines()[-1]), "memtracker_mb": memtracker_mb()}
    return values


def describe(values: dict[str, dict[str, float]]) -> list[str]:
    """The three cross-checks as numbered markdown lines."""
    d, k, m = values["deepspeed_zero2"], values["korthikanti_layer"], values["measured_cpu_step"]
    return [
        f"1. **DeepSpeed ZeRO-2 estimator**, XLM-R base ({d['params'] / 1e6:.0f} M parameters), 8 GPUs: ours "
        f"{d['ours_gib']:.2f} GiB of model states per GPU, DeepSpeed's {d['deepspeed_gib']:.2f} GiB (ratio "
        f"{d['ratio']:.2f}). Ours keeps fp32 weights (DeepSpeed's assumes 16-bit) and counts the reduction bucket; "
        f"without those two, ours is {d['ours_without_bucket_fp16_weights_gib']:.2f} GiB against the same 2 P + 18 P "
        "/ W structure.",
        f"2. **Korthikanti et al. 2022, eq. 1**, one BERT-base layer, sequence {k['seq']}, batch {k['batch']}: "
        f"formula {k['korthikanti_mb']:.1f} MB, the bytes autograd saves under bf16 autocast {k['ours_mb']:.1f} MB "
        f"(ratio {k['ratio']:.2f}; the formula assumes every saved activation in 16 bits and 1-byte dropout masks, "
        "CPU autocast keeps softmax and layer-norm inputs in fp32 and masks as bool).",
        f"3. **A measured CPU run**, two steps (BERT 4 x 256, {m['params'] / 1e6:.1f} M parameters, AdamW, 32 pairs "
        f"x 64 tokens, fp32): predicted {m['predicted_mb']:.0f} MB above the weights, torch's MemTracker "
        f"{m['memtracker_mb']:.0f} MB, measured {m['measured_mb']:.0f} MB peak RSS (predicted / measured "
        f"{m['predicted_mb'] / m['measured_mb']:.2f}); FLOPs counted {m['flops'] / 1e9:.1f} G, "
        f"6 N t + attention {m['analytic_flops'] / 1e9:.1f} G (ratio {m['flops'] / m['analytic_flops']:.3f}).",
    ]


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--child", action="store_true")
    if p.parse_args().child:
        print(json.dumps(_child()))
    else:
        print("\n".join(describe(crosschecks())))
