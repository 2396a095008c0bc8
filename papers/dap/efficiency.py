"""Table 6 (section 5.4): forward FLOPs and training latency per sample of TR, TR+TLM and DAP.

FLOPs are counted by ``torch.utils.flop_counter.FlopCounterMode`` over one forward pass
of the training model (both encoder passes, the TLM pass, the RTL head and its
vocabulary softmax), divided by the batch size. Our TLM predicts the vocabulary at the
masked positions only; the paper's FLOPs row (11.0 / 33.7 / 16.5 G: TR+TLM 3.06 x TR) is
on the basis of a masked-LM head applied at every position of the concatenated pair, as
Hugging Face's ``BertForMaskedLM`` computes it (TR's 11.0 G + the 64-token TLM pass's
11 G + the head at 64 positions, 11.8 G at mBERT's vocabulary), so the table gives ours
on that basis too (``forward_flops_per_sample_dense_tlm``: the head counted again at every
position of the TLM input instead of the masked ones). Latency is the wall time of a full
training step (forward, backward, AdamW update) per sample, median over ``repeats``
steps after one warm-up step, on the machine running the workflow. The paper measured
with batch 512 on 8 V100s; the shapes here are the scale's own, named in the table.
"""
from __future__ import annotations

import argparse
import logging
import os
import platform
import statistics
import time

import torch

from common.census.flops import counter as flop_counter
from common.config import load_paper_config
from common.data.manifest import load_manifest
from common.io import write_json
from common.models.tokenizer import load_tokenizer
from papers.dap import variants
from papers.dap.train import build_model, collator, language_ids, load_examples

VARIANTS = ("tr", "tr_tlm", "dap")


def measure(cfg: dict, init: str, variant: str, tokenizer, examples, num_languages: int, batch_size: int,
            repeats: int, device: str) -> dict:
    method = variants.resolve(variant, cfg["dap"])
    torch.manual_seed(1)
    model = build_model(cfg, method, init, tokenizer, num_languages)
    model.to(device).train()
    collate = collator(cfg, method, tokenizer)
    batch = collate(examples[:batch_size], torch.Generator().manual_seed(0))
    batch = {k: v.to(device) for k, v in batch.items()}
    with flop_counter() as counter:
        model(**batch)
    fwd_flops = counter.get_total_flops()
    dense = fwd_flops + dense_tlm_head_extra(model, batch)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-5)
    times = []
    for i in range(repeats + 1):
        if device == "cuda":
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        model(**batch)["loss"].backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        if device == "cuda":
            torch.cuda.synchronize()
        if i:
            times.append(time.perf_counter() - t0)
    step = statistics.median(times)
    return {"forward_flops_per_sample": fwd_flops / batch_size,
            "forward_flops_per_sample_dense_tlm": dense / batch_size, "latency_ms_per_sample": 1000 * step / batch_size,
            "step_seconds": step, "parameters": sum(p.numel() for p in model.parameters())}


def dense_tlm_head_extra(model, batch: dict) -> float:
    """FLOPs the TLM head would add at every position of the TLM input over its masked positions (0 without TLM):
    the head counted on (B x 2S, D) states minus on the (M, D) masked ones."""
    if model.mlm_head is None:
        return 0.0
    d = model.encoder.backbone.config.hidden_size
    positions, masked = batch["tlm_labels"].numel(), int((batch["tlm_labels"] != -100).sum())
    flops = []
    for n in (positions, masked):
        with torch.no_grad(), flop_counter() as counter:
            model.mlm_head(torch.zeros(n, d, device=batch["tlm_labels"].device))
        flops.append(counter.get_total_flops())
    return float(flops[0] - flops[1])


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--scale", required=True)
    p.add_argument("--init", required=True)
    p.add_argument("--corpus", required=True)
    p.add_argument("--tokenizer", required=True)
    p.add_argument("--out", required=True)
    a = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO)
    cfg = load_paper_config("dap", a.scale)
    threads = int(os.environ.get("OMP_NUM_THREADS", cfg["training"].get("threads", 1)))
    torch.set_num_threads(threads)
    manifest = load_manifest(a.corpus)
    examples, lang_ids = load_examples(manifest), language_ids(manifest)
    tok = load_tokenizer(a.tokenizer)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    e = cfg["efficiency"]
    res = {v: measure(cfg, a.init, v, tok, examples, len(lang_ids), e["batch_size"], e["repeats"], device)
           for v in VARIANTS}
    for v in VARIANTS:
        res[v]["flops_ratio_to_tr"] = res[v]["forward_flops_per_sample"] / res["tr"]["forward_flops_per_sample"]
        res[v]["dense_tlm_flops_ratio_to_tr"] = (res[v]["forward_flops_per_sample_dense_tlm"]
                                                 / res["tr"]["forward_flops_per_sample_dense_tlm"])
        res[v]["latency_ratio_to_tr"] = res[v]["latency_ms_per_sample"] / res["tr"]["latency_ms_per_sample"]
    write_json(a.out, {"variants": res, "batch_size": e["batch_size"], "repeats": e["repeats"], "device": device,
                       "threads": threads, "machine": platform.processor() or platform.machine(),
                       "max_length": cfg["training"]["max_length"], "init": a.init, "scale": a.scale})


if __name__ == "__main__":
    main()
