"""Model FLOPs, tokens per second and MFU of the TR and DAP training steps at paper shapes.

Paper shapes (DAP section 4.2): a BERT-base encoder with mBERT's 119,547-token vocabulary,
max length 32, RTL head K = 2; per-device batch ``--batch`` (the paper: 1024 over 8 GPUs = 128).
The encoder is built from its config (no download: FLOPs and speed do not depend on weights).

* model FLOPs per step: ``torch.utils.flop_counter.FlopCounterMode`` over one forward and
  backward pass (matmuls and attention; the AdamW update is not counted, as usual for MFU);
* tokens per second: non-padding tokens of both sides of every pair per step / step time
  (median of ``--repeats`` full steps: forward, backward, AdamW, after ``--warmup`` steps);
* MFU: model FLOPs per second / the device's peak. GPUs: the dense bf16/fp16 tensor-core peak
  of the named model (table below; ``--peak-tflops`` overrides); CPU: a measured fp32 matmul
  peak of this machine (stated as such, since a CPU's theoretical peak is not queryable).

    python scripts/bench_mfu.py --device cuda --precision bf16 --batch 128
"""
from __future__ import annotations

import argparse
import json
import statistics
import time

import torch
from transformers import BertForMaskedLM

from bench.overheads import bert_base, dap_batches
from common.census.flops import counter as flop_counter
from common.census.flops import cpu_matmul_rate
from common.models.encoder import autocast
from papers.dap.data import DAPCollator
from papers.dap.model import DAPModel

# Dense bf16/fp16 tensor-core peaks (TFLOP/s), from the vendors' data sheets.
GPU_PEAK_TFLOPS = {"H200": 989.4, "H100 SXM": 989.4, "H100 80GB HBM3": 989.4, "H100 PCIe": 756.0, "H100": 989.4,
                   "A100": 312.0, "L40S": 362.1, "A10": 125.0, "V100": 125.0}
VARIANTS = {"TR": ["tr"], "DAP": ["tr", "rtl"]}


def gpu_peak(name: str) -> float | None:
    for key, tflops in GPU_PEAK_TFLOPS.items():
        if key in name:
            return tflops * 1e12
    return None


def sync(device: str) -> None:
    if device == "cuda":
        torch.cuda.synchronize()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--precision", default=None, choices=["fp32", "bf16", "fp16"],
                   help="autocast dtype (default: bf16 on GPU, fp32 on CPU)")
    p.add_argument("--batch", type=int, default=128, help="pairs per device and step")
    p.add_argument("--max-length", type=int, default=32)
    p.add_argument("--vocab", type=int, default=119547)
    p.add_argument("--repeats", type=int, default=10)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--peak-tflops", type=float, default=None)
    p.add_argument("--json", default=None, help="also write the figures here")
    a = p.parse_args()
    dev = a.device
    a.precision = a.precision or ("bf16" if dev == "cuda" else "fp32")
    tok, pairs = dap_batches(a.batch, a.max_length)
    if dev == "cuda":
        name = torch.cuda.get_device_name()
        peak, peak_what = (a.peak_tflops * 1e12 if a.peak_tflops else gpu_peak(name)), "dense tensor-core peak"
    else:
        name = "cpu"
        peak, peak_what = ((a.peak_tflops * 1e12, "given") if a.peak_tflops
                           else (cpu_matmul_rate(), "measured fp32 matmul peak"))
    if peak is None:
        raise SystemExit(f"unknown peak for {name!r}; pass --peak-tflops")
    out = {"device": name, "precision": a.precision, "batch": a.batch, "max_length": a.max_length,
           "peak_flops": peak, "peak": peak_what, "variants": {}}
    print(f"device={name} precision={a.precision} batch={a.batch} length={a.max_length} "
          f"peak={peak / 1e12:.3g} TFLOP/s ({peak_what})")
    for label, objectives in VARIANTS.items():
        torch.manual_seed(0)
        cfg = bert_base(a.vocab)
        model = DAPModel(BertForMaskedLM(cfg), objectives, temperature=0.05, rtl_layers=2,
                         pooling="cls", mask_token_id=tok.mask_token_id).to(dev).train()
        batch = DAPCollator(tok, a.max_length, objectives, rho=1.0)(pairs, torch.Generator().manual_seed(0))
        batch = {k: v.to(dev) for k, v in batch.items()}
        tokens = int(batch["src_attention_mask"].sum() + batch["trg_attention_mask"].sum())
        opt = torch.optim.AdamW(model.parameters(), lr=1e-5, fused=dev == "cuda")

        def step(model=model, batch=batch, opt=opt):
            with autocast(dev, a.precision):
                loss = model(**batch)["loss"]
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)

        with flop_counter() as counter:
            with autocast(dev, a.precision):
                loss = model(**batch)["loss"]
            loss.backward()
        opt.zero_grad(set_to_none=True)
        flops = counter.get_total_flops()
        for _ in range(a.warmup):
            step()
        times = []
        for _ in range(a.repeats):
            sync(dev)
            t0 = time.perf_counter()
            step()
            sync(dev)
            times.append(time.perf_counter() - t0)
        t = statistics.median(times)
        r = {"model_flops_per_step": flops, "step_seconds": t, "tokens_per_step": tokens,
             "tokens_per_second": tokens / t, "model_flops_per_second": flops / t, "mfu": flops / t / peak}
        out["variants"][label] = r
        print(f"{label}: {flops / 1e12:.2f} TFLOP/step, {t * 1e3:.1f} ms/step, {r['tokens_per_second']:.0f} tokens/s, "
              f"{r['model_flops_per_second'] / 1e12:.2f} TFLOP/s, MFU {100 * r['mfu']:.1f}%")
    d, t = out["variants"]["DAP"], out["variants"]["TR"]
    print(f"DAP/TR: FLOPs {d['model_flops_per_step'] / t['model_flops_per_step']:.2f}x, "
          f"step time {d['step_seconds'] / t['step_seconds']:.2f}x")
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(out, fh, indent=2)


if __name__ == "__main__":
    main()
