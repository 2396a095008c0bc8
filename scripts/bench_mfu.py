"""The training step's speed ladder at the papers' shapes: ms/step, tokens/s, TFLOP/s, MFU and peak memory.

For each model shape, the same model and batch run through a ladder of rungs, each adding one change to the one
before (``RUNGS``):

1. ``current``: each side of a pair through its own encoder call, eager, the vocabulary heads' logits materialised
   (``joint_sides=False``, ``vocab_loss="plain"``): the step as the papers' models computed it before;
2. ``one call``: both sides through one encoder call (common/models/joint.py);
3. ``compiled``: the model step (forward and the backward graph) through ``torch.compile``;
4. ``graphs``: compiled with CUDA graphs (``mode="reduce-overhead"``; GPU only): the step replays its kernels
   without launching them one by one;
5. ``fused``: the vocabulary heads through the fused linear + cross-entropy (common/losses/linear_cross_entropy.py),
   compiled with graphs as rung 4 (models without a vocabulary head, TR, have no such rung);
6. ``buckets`` (HICTL-large only, whose sentences run to 256 tokens): rung 5 with length-bucketed encoder calls
   (common/training/length_buckets.py, HICTL's paper-scale ``length_buckets`` and ``length_multiple``), compiled
   without CUDA graphs (each bucket's width is a shape of its own). It computes fewer FLOPs than the padded rungs:
   its MFU counts its own (counted with the buckets on), its ms/step and real tokens/s compare with the others.

Shapes (``MODELS``): DAP and TR (DAP section 4.2) on mBERT's shape (BERT-base, 119,547 ids, RTL head K = 2) at 128
pairs (the paper's per-GPU share of 1,024 on 8 GPUs) and 1,024 pairs (the global batch on one GPU), length 32;
HICTL-large (XLM-R large: 24 layers, 1,024 wide, 250,002 ids; both CTLs with hard negatives, m = 512; Table 9's
256 tokens per sentence, pairs up to 512) at ``--hictl-batch`` examples; VMSST's random-init 6-layer setting (1,024
wide, mT5's 250,112 ids, a 6-layer decoder whose output map is 3,072 x 250,112) at ``--vmsst-batch`` pairs of 32
tokens. The micro batches of HICTL and VMSST are what one step of one GPU holds (the papers' global batches take
several GPUs or accumulated micro batches; the census says how many). Weights are random (speed does not depend on
them), built from configs (no download); sentences are drawn from a WordPiece vocabulary with lengths spread from a
quarter of the length to over it, so batches carry padding as real ones do.

Beside each DAP and TR shape's best rung, our whole trainer's step at that rung (``--trainer``): the
``common.training.trainer.Trainer`` a paper job runs (DeepSpeed engine, sampler and collator inline, the finite
guard, foreach clipping, ``training.compile`` with CUDA graphs where the rung has them), timed per step on the host
after a device sync; the target is within 1.1x of the bare step.

Beside the ladder, the peer: sentence-transformers' ``SentenceTransformerTrainer`` with
``MultipleNegativesRankingLoss`` (scale 20 = TR's temperature 0.05) on the same BERT-base shape, [CLS] pooling,
pairs, length and precision as TR's rows (its step includes its data loading, as a trainer's does).

Measurement: each step is forward, backward and the optimizer's update (AdamW, fused on a GPU); on a GPU it is timed
with CUDA events, on a CPU with the wall clock. Every rung is warmed up first (the first call's time, which holds
the compilation, is reported apart as ``compile_s``); then ``--rounds`` rounds, each timing ``--steps`` steps of
every rung in turn (after one untimed step of it), so that a drift of the machine spreads over the rungs alike; a
rung's figure is the median over rounds of its mean step. Model FLOPs per step: ``torch.utils.flop_counter`` over
one forward and backward of the ``current`` rung's products (matmuls and attention; the update is not counted, as
usual for MFU), the same for every rung of a shape (a rung that recomputed would not earn FLOPs by it); counted
eagerly with one call and the fused loss, which form the same products and fit where the materialised logits do
not. Tokens per second count real (non-padding) tokens of the sentences of the batch. MFU: model FLOP/s over the
device's dense bf16 tensor-core peak (GPU table below; ``--peak-tflops`` overrides) or, on a CPU, a measured matmul
rate (stated as such: a CPU's peak is not queryable).
Peak memory: the largest allocation of the rung's timed steps (``torch.cuda.max_memory_allocated``; not measured on
a CPU). A rung that runs out of memory is reported as such and the ladder goes on.

Budget: ``--budget-s`` (default 540 s, under ten minutes on one H100 with the model builds). Shapes run in the
order given, each with an equal share of the time left when it starts (what one leaves passes on). A shape's eager
rungs always run; its compiled rungs are compiled from the top of the ladder down (the fused rung first: the figure
that matters most), each only where the compilation the script expects (the slowest seen so far, at first
``--compile-estimate-s``) fits what is left of the share; a skipped rung is named in the figures with the command
that runs what was left out.

Writes (on a GPU; on a CPU only where ``--json`` / ``--out`` say) ``figures/gpu/<device>/mfu-<date>.json`` and
``.md``, and appends one row per run to ``--log`` (default ``figures/gpu/mfu-log.jsonl``): date, commit, machine,
GPU or CPU flags, the command, and the figures. The JSON holds every row (``rows``), the peer's (``peers``), and,
for the census's reading of earlier files, ``variants``: TR's and DAP's top rung at ``--pairs``' first size.
On a CPU, ``--tiny`` runs the same code paths at tiny widths in seconds (the GPU acceptance's CPU fallback).

    python scripts/bench_mfu.py                                  # the ladder on the GPU, ~10 minutes
    python scripts/bench_mfu.py --models hictl-large vmsst       # a part of it
    python scripts/bench_mfu.py --device cpu --tiny --json /tmp/mfu.json
"""
from __future__ import annotations

import argparse
import contextlib
import datetime
import gc
import random
import re
import statistics
import sys
import tempfile
import time
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from common import measurements  # noqa: E402
from common.census.flops import counter as flop_counter  # noqa: E402
from common.census.flops import cpu_matmul_rate  # noqa: E402
from common.io import atomic_write, write_json  # noqa: E402
from common.models.encoder import autocast  # noqa: E402

# Dense bf16/fp16 tensor-core peaks (TFLOP/s), from the vendors' data sheets.
GPU_PEAK_TFLOPS = {"H200": 989.4, "H100 SXM": 989.4, "H100 80GB HBM3": 989.4, "H100 PCIe": 756.0, "H100": 989.4,
                   "A100": 312.0, "L40S": 362.1, "A10": 125.0, "V100": 125.0}
RUNGS = ("current", "one call", "compiled", "graphs", "fused", "buckets")
RUNG_SETTINGS = {  # rung -> (joint_sides, vocab_loss, compiled, CUDA graphs)
    "current": (False, "plain", False, False), "one call": (True, "plain", False, False),
    "compiled": (True, "plain", True, False), "graphs": (True, "plain", True, True),
    "fused": (True, "fused", True, True), "buckets": (True, "fused", True, False)}
MODELS = ("dap-128", "tr-128", "dap-1024", "tr-1024", "hictl-large", "vmsst")
MBERT_VOCAB, XLMR_VOCAB, MT5_VOCAB, BERT_VOCAB = 119_547, 250_002, 250_112, 30_522  # BERT's: the tiny widths' ids
TARGETS = [  # (model, what, test on the best rung's row, the issue's target in words)
    ("dap-1024", "ms/step", lambda r: r["ms_per_step"] <= 142, "DAP at 1024 x 32 on one GPU: <= 142 ms a step"),
    ("tr-1024", "ms/step", lambda r: r["ms_per_step"] <= 85, "TR at 1024 x 32 on one GPU: <= 85 ms a step"),
    ("dap-128", "MFU", lambda r: r["mfu"] >= 0.25, "DAP at 128 x 32 per GPU: >= 25 % MFU"),
    ("tr-128", "MFU", lambda r: r["mfu"] >= 0.25, "TR at 128 x 32 per GPU: >= 25 % MFU"),
    ("hictl-large", "MFU", lambda r: r["mfu"] >= 0.40, "HICTL-large at its paper shape: >= 40 % MFU"),
    ("vmsst", "MFU", lambda r: r["mfu"] >= 0.40, "VMSST at its paper shape: >= 40 % MFU")]


def gpu_peak(name: str) -> float | None:
    for key, tflops in GPU_PEAK_TFLOPS.items():
        if key in name:
            return tflops * 1e12
    return None


def device_folder(name: str) -> str:
    """``NVIDIA H100 80GB HBM3`` -> ``nvidia-h100-80gb-hbm3`` (common.rehearsal.acceptance's folder names)."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


# ----------------------------------------------------------------------------------------------------- shapes
@dataclass
class Shape:
    """One model shape of the ladder: how to build its model and batch, and what it is."""

    name: str
    paper: str
    rows: int  # pairs or examples per step
    length: int
    vocab: int
    build: Callable[[str], tuple[torch.nn.Module, dict[str, torch.Tensor], int]]  # device -> model, batch, tokens
    vocabulary_head: bool = True
    note: str = ""
    # steps, device -> (examples, collate) for the whole trainer's step (DAP and TR only)
    data: Callable[[int, str], tuple[list[Any], Callable]] | None = None
    buckets: tuple[int, int] | None = None  # (length_buckets, length_multiple) of the buckets rung; None: no such rung


def tokenizer():
    from bench.workloads import minilm_dir
    from common.models.tokenizer import load_tokenizer

    return load_tokenizer(minilm_dir())  # BERT's uncased WordPiece (30,522 pieces), shipped in a package


def sentences(n: int, length: int, seed: int) -> list[str]:
    """``n`` sentences of length/4 .. 1.5 x length words (whole words of the vocabulary: each at least a token)."""
    from bench.workloads import minilm_dir, vocabulary_words

    words = vocabulary_words(minilm_dir())
    rng = random.Random(seed)
    return [" ".join(rng.choices(words, k=rng.randint(max(1, length // 4), max(2, 3 * length // 2))))
            for _ in range(n)]


def bert_config(vocab: int, tiny: bool, **extra: Any):
    from transformers import BertConfig

    width = dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=2, intermediate_size=128) if tiny else \
        dict(hidden_size=768, num_hidden_layers=12, num_attention_heads=12, intermediate_size=3072)
    return BertConfig(vocab_size=vocab, max_position_embeddings=512, **width, **extra)


def dap_shape(objectives: list[str], pairs: int, length: int, tiny: bool) -> Shape:
    name = ("dap" if "rtl" in objectives else "tr") + f"-{pairs}"

    def collator(device: str, tok: Any = None):
        from papers.dap.data import DAPCollator

        return DAPCollator(tok or tokenizer(), length, objectives, rho=1.0, pad_scored_to=64 if device == "cuda" else 1)

    def build(device: str):
        from transformers import BertForMaskedLM

        from papers.dap.model import DAPModel

        tok = tokenizer()
        torch.manual_seed(0)
        with torch.device(device):
            model = DAPModel(BertForMaskedLM(bert_config(MBERT_VOCAB if not tiny else len(tok), tiny)), objectives,
                             temperature=0.05, rtl_layers=2, pooling="cls", mask_token_id=tok.mask_token_id)
        batch = collator(device, tok)(list(zip(sentences(pairs, length, 1), sentences(pairs, length, 2), [1] * pairs)),
                                      torch.Generator().manual_seed(0))
        tokens = int(batch["src_attention_mask"].sum() + batch["trg_attention_mask"].sum())
        return model, batch, tokens

    def data(steps: int, device: str) -> tuple[list[Any], Callable]:
        n = pairs * steps
        return list(zip(sentences(n, length, 11), sentences(n, length, 12), [1] * n)), collator(device)

    return Shape(name, "dap", pairs, length, BERT_VOCAB if tiny else MBERT_VOCAB, build, "rtl" in objectives,
                 "BERT-base, mBERT's vocabulary" + (", RTL K = 2" if "rtl" in objectives else ""), data)


def hictl_shape(examples: int, length: int, tiny: bool) -> Shape:
    def build(device: str):
        from transformers import XLMRobertaConfig, XLMRobertaForMaskedLM

        from papers.hictl.data import MONO, PARALLEL, HICTLCollator
        from papers.hictl.model import HICTL

        tok = tokenizer()
        width = dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=2, intermediate_size=128) if tiny else \
            dict(hidden_size=1024, num_hidden_layers=24, num_attention_heads=16, intermediate_size=4096)
        torch.manual_seed(0)
        with torch.device(device):
            mlm = XLMRobertaForMaskedLM(XLMRobertaConfig(vocab_size=len(tok) if tiny else XLMR_VOCAB,
                                                         max_position_embeddings=2 * length + 2,
                                                         pad_token_id=tok.pad_token_id, **width))
            model = HICTL(mlm, tok.all_special_ids, hard_negatives=True, temperature=0.05, window=100,
                          word_negatives=512, pooling="cls")
        collate = HICTLCollator(tok, length, 0.25, 0.15, pad_scored_to=64 if device == "cuda" else 1,
                                word_negatives=512)
        xs, ys = sentences(examples, length, 3), sentences(examples, length, 4)
        rows = [(x, y, PARALLEL) if i % 2 == 0 else (x, None, MONO) for i, (x, y) in enumerate(zip(xs, ys))]
        batch = collate(rows, torch.Generator().manual_seed(0))
        model.window.update(torch.tensor(2.0).to(device))  # p_avg > 0: eq. 6's interpolated negatives are computed
        return model, batch, int(batch["x_mask"].sum() + batch["y_mask"].sum())

    from common.config import load_config

    t = load_config("hictl", "paper")["training"]
    return Shape("hictl-large", "hictl", examples, length, BERT_VOCAB if tiny else XLMR_VOCAB, build, True,
                 "XLM-R large, half parallel (TLM 25 %), half monolingual (MLM 15 %), both CTLs, hard negatives",
                 buckets=(int(t["length_buckets"]), 4 if tiny else int(t["length_multiple"])))


def vmsst_shape(pairs: int, length: int, tiny: bool) -> Shape:
    def build(device: str):
        from transformers import BertModel

        from papers.vmsst.data import VMSSTCollator
        from papers.vmsst.model import VMSST
        from papers.vmsst.settings import Settings

        tok = tokenizer()
        layers = 2 if tiny else 6
        cfg = bert_config(len(tok) if tiny else MT5_VOCAB, tiny, hidden_dropout_prob=0.0,
                          attention_probs_dropout_prob=0.0)
        if not tiny:
            cfg.update(dict(hidden_size=1024, num_hidden_layers=6, num_attention_heads=16, intermediate_size=2816,
                            max_position_embeddings=64))
        torch.manual_seed(0)
        with torch.device(device):
            model = VMSST(BertModel(cfg, add_pooling_layer=False),
                          Settings(objective="vmsst", decoder_layers=layers, anneal_steps=1_000_000,
                                   loss_chunk_tokens=0 if tiny else 2048),
                          num_languages=8, max_length=length, decoder_heads=cfg.num_attention_heads,
                          decoder_ffn=cfg.intermediate_size, dropout=0.0)
        model.on_step(1000)
        collate = VMSSTCollator(tok, length, pad_scored_to=64 if device == "cuda" else 1)
        batch = collate([(x, y, 1 + i % 7, 0) for i, (x, y) in
                         enumerate(zip(sentences(pairs, length, 5), sentences(pairs, length, 6)))],
                        torch.Generator().manual_seed(0))
        return model, batch, int(batch["i_mask"].sum() + batch["j_mask"].sum())

    return Shape("vmsst", "vmsst", pairs, length, BERT_VOCAB if tiny else MT5_VOCAB, build, True,
                 "6-layer encoders and decoder, 1,024 wide, mT5's vocabulary (output map 3,072 x 250,112)")


def shapes(a: argparse.Namespace) -> dict[str, Shape]:
    out: dict[str, Shape] = {}
    for n in a.pairs:
        out[f"dap-{n}"] = dap_shape(["tr", "rtl"], n, a.max_length, a.tiny)
        out[f"tr-{n}"] = dap_shape(["tr"], n, a.max_length, a.tiny)
    out["hictl-large"] = hictl_shape(a.hictl_batch, a.hictl_length, a.tiny)
    out["vmsst"] = vmsst_shape(a.vmsst_batch, a.max_length, a.tiny)
    return out


# ------------------------------------------------------------------------------------------------------ rungs
def set_rung(model: torch.nn.Module, rung: str, buckets: tuple[int, int] | None = None) -> None:
    """Switch the model's one-call encoding, its vocabulary loss and its length buckets to the rung's (the same
    weights for every rung of a shape)."""
    from common.training.length_buckets import disable_length_buckets, enable_length_buckets

    joint, vocab, _, _ = RUNG_SETTINGS[rung]
    bucketed = rung == "buckets" and buckets is not None
    if bucketed != getattr(model, "bench_bucketed", False):  # only where the rung changes it: this runs every step
        disable_length_buckets(model)
        if bucketed:
            enable_length_buckets(model, *buckets)
        model.bench_bucketed = bucketed
    model.joint_sides = joint
    if hasattr(model, "vocab_loss"):
        model.vocab_loss = vocab
    if hasattr(model, "decoders"):  # VMSST: a setting of its decoders
        model.s.vocab_loss = vocab
        for dec in model.decoders:
            dec.vocab_loss = vocab


def step_function(model: torch.nn.Module, precision: str, device: str, rung: str) -> Callable:
    """The rung's forward (the loss), with a code object of its own, so that each rung keeps its own compiled
    graphs."""
    def forward(batch: dict[str, torch.Tensor]) -> torch.Tensor:
        with autocast(device, precision):
            return model(**batch)["loss"]

    code = forward.__code__.replace(co_name=f"step_{rung.replace(' ', '_')}")
    return types.FunctionType(code, forward.__globals__, code.co_name, None, forward.__closure__)


@dataclass
class Rung:
    name: str
    forward: Callable
    graphs: bool
    compile_s: float | None = None
    times: list[float] = field(default_factory=list)  # mean seconds per step, one per round
    step: Callable[[], None] = lambda: None  # one training step of this rung
    peak_bytes: int | None = None
    failed: str = ""


class Clock:
    """Seconds of GPU time (CUDA events) or wall time (CPU) of a block of steps."""

    def __init__(self, device: str):
        self.cuda = device == "cuda"

    def time(self, fn: Callable[[], None], steps: int) -> float:
        if self.cuda:
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(steps):
                fn()
            end.record()
            end.synchronize()
            return start.elapsed_time(end) / 1e3 / steps
        t0 = time.perf_counter()
        for _ in range(steps):
            fn()
        return (time.perf_counter() - t0) / steps


def out_of_memory(exc: BaseException) -> bool:
    return isinstance(exc, torch.cuda.OutOfMemoryError) or "out of memory" in str(exc).lower()


def ladder(shape: Shape, rungs: list[str], a: argparse.Namespace, budget: Budget,
           share: float) -> list[dict[str, Any]]:
    """Every rung of one shape, interleaved; returns its rows. ``share``: this shape's seconds of the budget (a
    compiled rung runs where its expected compilation fits what is left of it)."""
    dev = a.device
    start = time.perf_counter()
    share_end = start + share
    model, batch, tokens = shape.build(dev)
    model.train()
    batch = {k: v.to(dev) for k, v in batch.items()}
    opt = torch.optim.AdamW(model.parameters(), lr=1e-5, fused=dev == "cuda")
    sync = torch.cuda.synchronize if dev == "cuda" else (lambda: None)
    # model FLOPs: one eager forward and backward, one call and the fused loss (the matrix products of the current
    # rung: the same rows, and the fused loss forms the plain one's three products), which fits where plain does not
    reference = "fused" if shape.vocabulary_head else "one call"
    set_rung(model, reference)
    with flop_counter() as counter:
        step_function(model, a.precision, dev, reference)(batch).backward()
    opt.zero_grad(set_to_none=True)
    flops = counter.get_total_flops()
    selected = [r for r in rungs if (shape.vocabulary_head or r != "fused") and (dev == "cuda" or r != "graphs")
                and (shape.buckets is not None or r != "buckets")]
    rung_flops = dict.fromkeys(selected, flops)
    if "buckets" in selected:  # the bucketed step's own FLOPs: it skips most of the padding
        set_rung(model, "buckets", shape.buckets)
        with flop_counter() as counter:
            step_function(model, a.precision, dev, "buckets")(batch).backward()
        opt.zero_grad(set_to_none=True)
        rung_flops["buckets"] = counter.get_total_flops()
    # the eager rungs first (cheap), then the compiled ones from the top of the ladder down (the top rung is the
    # figure that matters most), each while its expected compilation fits this shape's share of the budget
    order = sorted(selected, key=lambda r: (RUNG_SETTINGS[r][2], -RUNGS.index(r)))
    rungs_by_name: dict[str, Rung] = {}
    for name in order:
        joint, vocab, compiled, graphs = RUNG_SETTINGS[name]
        if compiled and not budget.allows_compile(share_end - time.perf_counter()):
            rungs_by_name[name] = Rung(name, lambda b: None, graphs, failed="skipped: budget")
            continue
        forward = step_function(model, a.precision, dev, name)
        if compiled:
            mode = "reduce-overhead" if graphs else None
            forward = torch.compile(forward, backend=a.backend, mode=mode if a.backend == "inductor" else None)
        rung = rungs_by_name[name] = Rung(name, forward, graphs)

        def one(rung: Rung = rung) -> None:
            if rung.graphs:
                torch.compiler.cudagraph_mark_step_begin()
            set_rung(model, rung.name, shape.buckets)
            rung.forward(batch).backward()
            opt.step()
            opt.zero_grad(set_to_none=True)

        rung.step = one
        try:
            t0 = time.perf_counter()
            one()
            sync()
            first = time.perf_counter() - t0
            for _ in range(max(0, a.warmup - 1) + (2 if graphs else 0)):  # CUDA graphs record on their 2nd/3rd call
                one()
            sync()
            rung.compile_s = first if compiled else None
            if compiled:
                budget.compiled(first)
        except Exception as exc:  # noqa: BLE001 -- a rung that fails (out of memory) is reported, the ladder goes on
            if not out_of_memory(exc):
                raise
            rung.failed = "out of memory"
            opt.zero_grad(set_to_none=True)
            gc.collect()
            if dev == "cuda":
                torch.cuda.empty_cache()
    active = [rungs_by_name[name] for name in selected]  # the ladder's order
    clock = Clock(dev)
    for r in range(a.rounds):
        for rung in active:
            if rung.failed:
                continue
            if r == 0 and dev == "cuda":
                torch.cuda.reset_peak_memory_stats()
            try:
                rung.step()  # one untimed step: the switch from the previous rung (its caches, its graphs) settles
                sync()
                rung.times.append(clock.time(rung.step, a.steps))
            except Exception as exc:  # noqa: BLE001
                if not out_of_memory(exc):
                    raise
                rung.failed = "out of memory"
                opt.zero_grad(set_to_none=True)
                continue
            if r == 0 and dev == "cuda":
                rung.peak_bytes = torch.cuda.max_memory_allocated()
    rows = []
    current = next((statistics.median(r.times) for r in active if r.name == "current" and r.times), None)
    for rung in active:
        row: dict[str, Any] = {"model": shape.name, "paper": shape.paper, "rows": shape.rows, "length": shape.length,
                               "vocab": shape.vocab, "rung": rung.name, "model_flops_per_step": rung_flops[rung.name],
                               "tokens_per_step": tokens, "note": shape.note}
        if rung.failed or not rung.times:
            rows.append({**row, "failed": rung.failed or "no time"})
            continue
        t = statistics.median(rung.times)
        row.update(ms_per_step=1e3 * t, step_ms_rounds=[1e3 * x for x in rung.times], tokens_per_second=tokens / t,
                   tflops_per_second=rung_flops[rung.name] / t / 1e12, mfu=rung_flops[rung.name] / t / a.peak,
                   peak_memory_gib=rung.peak_bytes / 2**30 if rung.peak_bytes is not None else None,
                   compile_s=rung.compile_s, ratio_to_current=t / current if current else None)
        rows.append(row)
    return rows


def release(device: str) -> None:
    """Free what a shape's ladder left (its compiled graphs, CUDA graph pools, cached blocks)."""
    torch._dynamo.reset()
    gc.collect()
    if device == "cuda":
        torch.cuda.empty_cache()


# ------------------------------------------------------------------------------------------------------- peer
def peer_row(pairs: int, a: argparse.Namespace) -> dict[str, Any]:
    """sentence-transformers' trainer with MultipleNegativesRankingLoss on TR's shape: ms per steady-state step."""
    from datasets import Dataset
    from sentence_transformers import (
        SentenceTransformer,
        SentenceTransformerTrainer,
        SentenceTransformerTrainingArguments,
        losses,
        models,
    )
    from transformers import BertModel, TrainerCallback

    dev = a.device
    stamps: list[float] = []

    class StepClock(TrainerCallback):
        def on_step_end(self, args, state, control, **kwargs):  # noqa: ANN001
            if dev == "cuda":
                torch.cuda.synchronize()
            stamps.append(time.perf_counter())

    tok = tokenizer()
    total = a.warmup + a.rounds * a.steps
    with tempfile.TemporaryDirectory() as tmp:
        torch.manual_seed(0)
        config = bert_config(len(tok) if a.tiny else MBERT_VOCAB, a.tiny)
        BertModel(config, add_pooling_layer=False).save_pretrained(tmp)
        tok.save_pretrained(tmp)
        word = models.Transformer(tmp, max_seq_length=a.max_length)
        model = SentenceTransformer(modules=[word, models.Pooling(word.get_embedding_dimension(), "cls")],
                                    device=dev)
        data = Dataset.from_dict({"anchor": sentences(pairs * total, a.max_length, 7),
                                  "positive": sentences(pairs * total, a.max_length, 8)})
        args = SentenceTransformerTrainingArguments(
            output_dir=str(Path(tmp) / "out"), max_steps=total, per_device_train_batch_size=pairs,
            learning_rate=1e-5, warmup_steps=0, logging_steps=10**6, save_strategy="no", report_to="none",
            use_cpu=dev == "cpu", seed=1, dataloader_drop_last=True, bf16=a.precision == "bf16", disable_tqdm=True)
        trainer = SentenceTransformerTrainer(model=model, args=args, train_dataset=data, callbacks=[StepClock()],
                                             loss=losses.MultipleNegativesRankingLoss(model, scale=20.0))
        if dev == "cuda":
            torch.cuda.reset_peak_memory_stats()
        trainer.train()
    steady = [b - s for s, b in zip(stamps[a.warmup - 1:], stamps[a.warmup:])]
    t = statistics.median(steady)
    row = {"model": f"tr-{pairs}", "peer": "SentenceTransformerTrainer + MultipleNegativesRankingLoss", "rows": pairs,
           "length": a.max_length, "ms_per_step": 1e3 * t, "steps_timed": len(steady),
           "peak_memory_gib": torch.cuda.max_memory_allocated() / 2**30 if dev == "cuda" else None}
    del trainer, model
    gc.collect()
    if dev == "cuda":
        torch.cuda.empty_cache()
    return row


def trainer_row(shape: Shape, rung: str, bare_ms: float, a: argparse.Namespace) -> dict[str, Any]:
    """Our whole training step at the shape's best rung: ``common.training.trainer.Trainer`` (the DeepSpeed engine at
    world size 1, the sampler and collator inline, pinned copies, the finite guard, the metrics log, foreach
    clipping), ``training.compile`` where the rung is compiled; ms per steady-state step, against the bare step."""
    from common.training.trainer import Trainer, TrainingArguments

    assert shape.data is not None
    dev = a.device
    total = a.warmup + a.rounds * a.steps
    examples, collate = shape.data(total, dev)
    model, _, _ = shape.build(dev)
    set_rung(model, rung)
    stamps: list[float] = []

    def clock(_step: int) -> None:
        if dev == "cuda":
            torch.cuda.synchronize()
        stamps.append(time.perf_counter())

    _, _, compiled, graphs = RUNG_SETTINGS[rung]
    with tempfile.TemporaryDirectory() as tmp:
        args = TrainingArguments(output_dir=tmp, max_steps=total, global_batch_size=shape.rows, learning_rate=1e-5,
                                 precision=a.precision, log_every=10**6, tensorboard=False, stop_after=total,
                                 compile=compiled, compile_backend=a.backend, shuffle="randperm",
                                 compile_mode="reduce-overhead" if graphs else "default")
        trainer = Trainer(model, examples, collate, args, on_step=clock)
        trainer.train()
    steady = [b - s for s, b in zip(stamps[a.warmup - 1:], stamps[a.warmup:])]
    ms = 1e3 * statistics.median(steady)
    del trainer, model
    release(dev)
    return {"model": shape.name, "trainer": "ours: Trainer (DeepSpeed engine, collator, sampler, guard)",
            "rung": rung, "rows": shape.rows, "length": shape.length, "ms_per_step": ms, "steps_timed": len(steady),
            "ratio_to_bare": ms / bare_ms}


# ----------------------------------------------------------------------------------------------------- budget
class Budget:
    """Seconds left of ``--budget-s``. Each shape gets an equal share of what is left when it starts (what a shape
    does not use passes to the next); a compiled rung runs only where its expected compilation (the slowest seen so
    far, at first ``--compile-estimate-s``) fits what is left of its shape's share and of the whole."""

    def __init__(self, seconds: float, estimate: float):
        self.start, self.seconds, self.guess = time.perf_counter(), seconds, estimate
        self.measured: list[float] = []

    @property
    def estimate(self) -> float:
        return max(self.measured) if self.measured else self.guess

    def left(self) -> float:
        return self.seconds - (time.perf_counter() - self.start)

    def share(self, shapes_left: int) -> float:
        return self.left() / max(1, shapes_left)

    def allows_compile(self, share_left: float) -> bool:
        return min(self.left(), share_left) > self.estimate

    def compiled(self, seconds: float) -> None:
        self.measured.append(seconds)


# ------------------------------------------------------------------------------------------------------ report
def best(rows: list[dict[str, Any]], model: str) -> dict[str, Any] | None:
    ok = [r for r in rows if r["model"] == model and "ms_per_step" in r]
    return min(ok, key=lambda r: r["ms_per_step"]) if ok else None


def markdown(out: dict[str, Any]) -> str:
    def f(x: Any, fmt: str) -> str:
        return "" if x is None else format(x, fmt)

    lines = [f"# Training-step ladder: {out['device']}", "",
             f"Written by `scripts/bench_mfu.py` on {out['date']} at commit `{out['commit']}` (`{out['command']}`). "
             f"Precision {out['precision']}; peak {out['peak_flops'] / 1e12:.4g} TFLOP/s ({out['peak']}); "
             f"{out['rounds']} interleaved rounds of {out['steps']} steps after {out['warmup']} warm-up steps; "
             f"{out['elapsed_s']:.0f} s of a {out['budget_s']:.0f} s budget. A step is forward, backward and AdamW; "
             "tokens are the batch's real (non-padding) tokens; MFU counts the model FLOPs of the current rung (the "
             "buckets rung: its own, without most of the padding).", "",
             "| model | rung | ms/step | x current | x peer | real tokens/s | TFLOP/s | MFU | peak GiB | compile s |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    peers = {p["model"]: p for p in out["peers"]}
    for r in out["rows"]:
        label = f"{r['model']} ({r['rows']} x {r['length']})"
        if "ms_per_step" not in r:
            lines.append(f"| {label} | {r['rung']} | {r['failed']} | | | | | | | |")
            continue
        peer = peers.get(r["model"])
        lines.append(f"| {label} | {r['rung']} | {r['ms_per_step']:.1f} | {f(r['ratio_to_current'], '.2f')} | "
                     f"{f(r['ms_per_step'] / peer['ms_per_step'] if peer else None, '.2f')} | "
                     f"{r['tokens_per_second']:.0f} | {r['tflops_per_second']:.1f} | {100 * r['mfu']:.1f} % | "
                     f"{f(r['peak_memory_gib'], '.1f')} | {f(r['compile_s'], '.0f')} |")
    for p in out["peers"]:
        lines.append(f"| {p['model']} ({p['rows']} x {p['length']}) | peer: {p['peer']} | {p['ms_per_step']:.1f} "
                     f"| | 1.00 | | | | {f(p['peak_memory_gib'], '.1f')} | |")
    for t in out.get("trainers", []):
        peer = peers.get(t["model"])
        lines.append(f"| {t['model']} ({t['rows']} x {t['length']}) | whole trainer step ({t['rung']}) | "
                     f"{t['ms_per_step']:.1f} | | {f(t['ms_per_step'] / peer['ms_per_step'] if peer else None, '.2f')} "
                     "| | | | | |")
    lines += ["", "Targets (the best rung of each shape):", ""]
    for model, what, test, words in TARGETS:
        r = best(out["rows"], model)
        verdict = "not measured" if r is None else ("met" if test(r) else "NOT met")
        value = "" if r is None else (f" ({r['ms_per_step']:.1f} ms, {r['rung']})" if what == "ms/step"
                                      else f" ({100 * r['mfu']:.1f} %, {r['rung']})")
        lines.append(f"- {words}: {verdict}{value}")
    for p in out["peers"]:
        r = best(out["rows"], p["model"])
        if r is not None:
            ratio = r["ms_per_step"] / p["ms_per_step"]
            lines.append(f"- {p['model']} against sentence-transformers' trainer: <= 0.5x its step time: "
                         f"{'met' if ratio <= 0.5 else 'NOT met'} ({ratio:.2f}x, bare step, {r['rung']})")
    for t in out.get("trainers", []):
        lines.append(f"- {t['model']}: our whole trainer step within 1.1x of the best bare step: "
                     f"{'met' if t['ratio_to_bare'] <= 1.1 else 'NOT met'} ({t['ratio_to_bare']:.2f}x)")
        peer = peers.get(t["model"])
        if peer is not None:
            ratio = t["ms_per_step"] / peer["ms_per_step"]
            lines.append(f"- {t['model']}: our whole trainer step against sentence-transformers' trainer, <= 0.5x: "
                         f"{'met' if ratio <= 0.5 else 'NOT met'} ({ratio:.2f}x)")
    if out.get("left_out"):
        lines += ["", f"Left out by the budget: {', '.join(out['left_out'])}; run them with `{out['rerun']}`."]
    return "\n".join(lines) + "\n"


def compact(rows: list[dict[str, Any]]) -> dict[str, Any]:
    return {f"{r['model']}/{r['rung']}": ({"ms": round(r["ms_per_step"], 2), "mfu": round(r["mfu"], 4)}
                                          if "ms_per_step" in r else r["failed"]) for r in rows}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu", choices=["cuda", "cpu"])
    p.add_argument("--precision", default=None, choices=["fp32", "bf16", "fp16"],
                   help="autocast dtype (default: bf16 on a GPU, fp32 on a CPU)")
    p.add_argument("--models", nargs="+", default=None, help=f"shapes, in this order (default: {' '.join(MODELS)})")
    p.add_argument("--rungs", nargs="+", default=list(RUNGS), choices=RUNGS)
    p.add_argument("--pairs", nargs="+", type=int, default=None, help="DAP's and TR's pairs per step (128 1024)")
    p.add_argument("--max-length", type=int, default=None, help="tokens per sentence, DAP/TR/VMSST (32)")
    p.add_argument("--hictl-batch", type=int, default=None, help="HICTL examples per step (16)")
    p.add_argument("--hictl-length", type=int, default=None, help="HICTL tokens per sentence (256)")
    p.add_argument("--vmsst-batch", type=int, default=None, help="VMSST pairs per step (64)")
    p.add_argument("--peer", action=argparse.BooleanOptionalAction, default=True,
                   help="time sentence-transformers' trainer beside TR's rows")
    p.add_argument("--trainer", action=argparse.BooleanOptionalAction, default=True,
                   help="time our whole trainer's step (DAP and TR) at each shape's best rung")
    p.add_argument("--tiny", action="store_true", help="tiny widths and batches: the code paths in seconds on a CPU")
    p.add_argument("--backend", default=None, help="torch.compile backend (default: inductor on a GPU; on a CPU, where "
                   "the inductor's code generation takes minutes, aot_eager, and eager (the graph capture alone) with "
                   "--tiny)")
    p.add_argument("--threads", type=int, default=None, help="CPU threads (default: torch's; 1 with --tiny, where two "
                   "threads of tiny products on a busy 2-core machine spend their time waiting for each other)")
    p.add_argument("--steps", type=int, default=None, help="steps per rung and round (5; tiny 2)")
    p.add_argument("--rounds", type=int, default=None, help="interleaved rounds (3; tiny 2)")
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--budget-s", type=float, default=540.0)
    p.add_argument("--compile-estimate-s", type=float, default=90.0,
                   help="the compilation time expected before one is measured")
    p.add_argument("--peak-tflops", type=float, default=None)
    p.add_argument("--out", default=None,
                   help="folder of mfu-<date>.{json,md} (default on a GPU: figures/gpu/<device>)")
    p.add_argument("--json", default=None, help="the JSON's path (the Markdown beside it)")
    p.add_argument("--log", default=None, help="the run log to append to (default on a GPU: figures/gpu/mfu-log.jsonl;"
                   " '-': none)")
    a = p.parse_args(argv)
    threads = torch.get_num_threads()
    if a.device == "cpu" and (a.threads or a.tiny):
        torch.set_num_threads(a.threads or 1)
    try:
        return run(a, argv)
    finally:
        torch.set_num_threads(threads)


def run(a: argparse.Namespace, argv: list[str] | None) -> dict[str, Any]:
    dev = a.device
    a.precision = a.precision or ("bf16" if dev == "cuda" else "fp32")
    a.backend = a.backend or ("inductor" if dev == "cuda" else "eager" if a.tiny else "aot_eager")
    small = a.tiny
    a.pairs = a.pairs or ([4] if small else [128, 1024])
    a.max_length = a.max_length or (16 if small else 32)
    a.hictl_batch = a.hictl_batch or (4 if small else 16)
    a.hictl_length = a.hictl_length or (16 if small else 256)
    a.vmsst_batch = a.vmsst_batch or (4 if small else 64)
    a.steps = a.steps or (2 if small else 5)
    a.rounds = a.rounds or (2 if small else 3)
    available = shapes(a)
    models = a.models or ([f"dap-{a.pairs[0]}", f"tr-{a.pairs[0]}"] if small else
                          [n for n in (*(f"{m}-{k}" for k in a.pairs for m in ("dap", "tr")), "hictl-large", "vmsst")])
    unknown = [m for m in models if m not in available]
    if unknown:
        raise SystemExit(f"unknown models {unknown}; known: {sorted(available)}")
    if dev == "cuda":
        name = torch.cuda.get_device_name()
        a.peak, peak_what = (a.peak_tflops * 1e12 if a.peak_tflops else gpu_peak(name)), "dense tensor-core peak"
    else:
        name = "cpu"
        dtype = torch.bfloat16 if a.precision == "bf16" else torch.float32
        a.peak, peak_what = ((a.peak_tflops * 1e12, "given") if a.peak_tflops
                             else (cpu_matmul_rate(dtype), f"measured {a.precision} matmul rate of this CPU"))
    if a.peak is None:
        raise SystemExit(f"unknown peak for {name!r}; pass --peak-tflops")
    torch._dynamo.config.cache_size_limit = max(torch._dynamo.config.cache_size_limit, 16)
    budget = Budget(a.budget_s, a.compile_estimate_s)
    print(f"device={name} precision={a.precision} backend={a.backend} peak={a.peak / 1e12:.3g} TFLOP/s ({peak_what}) "
          f"models={' '.join(models)} budget={a.budget_s:.0f}s", flush=True)
    rows: list[dict[str, Any]] = []
    peers: list[dict[str, Any]] = []
    trainers: list[dict[str, Any]] = []
    left_out: list[str] = []
    for i, m in enumerate(models):
        shape = available[m]
        if budget.left() <= 0:
            left_out.append(m)
            continue
        new = ladder(shape, a.rungs, a, budget, budget.share(len(models) - i))
        release(dev)
        rows += new
        for r in new:
            text = r.get("failed") or (f"{r['ms_per_step']:.1f} ms/step, {r['tokens_per_second']:.0f} tokens/s, "
                                       f"{r['tflops_per_second']:.2f} TFLOP/s, MFU {100 * r['mfu']:.1f} %"
                                       + (f", x{r['ratio_to_current']:.2f} of current" if r["ratio_to_current"]
                                          else "")
                                       + (f", compile {r['compile_s']:.0f} s" if r["compile_s"] else ""))
            print(f"{m} ({shape.rows} x {shape.length}) {r['rung']}: {text}", flush=True)
            if r.get("failed") == "skipped: budget":
                left_out.append(f"{m}/{r['rung']}")
        top = best(new, m)
        if a.trainer and shape.data is not None and top is not None and budget.left() > 0:
            trainers.append(trainer_row(shape, top["rung"], top["ms_per_step"], a))
            print(f"{m} whole trainer step ({top['rung']}): {trainers[-1]['ms_per_step']:.1f} ms/step, "
                  f"x{trainers[-1]['ratio_to_bare']:.2f} of the bare step", flush=True)
        if a.peer and m.startswith("tr-") and budget.left() > 0:
            peers.append(peer_row(shape.rows, a))
            print(f"{m} peer: {peers[-1]['ms_per_step']:.1f} ms/step", flush=True)
    date = datetime.date.today().isoformat()
    command = "python scripts/bench_mfu.py " + " ".join(sys.argv[1:] if argv is None else argv)
    host = measurements.machine(name if dev == "cuda" else None)
    rerun_models = sorted({x.split("/")[0] for x in left_out}, key=models.index)
    out = {"device": name, "precision": a.precision, "backend": a.backend, "batch": a.pairs[0],
           "max_length": a.max_length, "peak_flops": a.peak, "peak": peak_what, "date": date,
           "commit": measurements.commit(), "command": command, "cpu": host["cpu"], "cpu_flags": host["cpu_flags"],
           "rounds": a.rounds, "steps": a.steps,
           "warmup": a.warmup, "budget_s": a.budget_s, "elapsed_s": a.budget_s - budget.left(), "rows": rows,
           "peers": peers, "trainers": trainers, "left_out": left_out,
           "rerun": f"python scripts/bench_mfu.py --models {' '.join(rerun_models)}" if left_out else ""}
    # the census reads `variants` (earlier files: the eager step): TR's and DAP's top rung at the first size
    variants = {}
    for label in ("TR", "DAP"):
        r = best(rows, f"{label.lower()}-{a.pairs[0]}")
        if r is not None:
            variants[label] = {"model_flops_per_step": r["model_flops_per_step"],
                               "step_seconds": r["ms_per_step"] / 1e3, "tokens_per_step": r["tokens_per_step"],
                               "tokens_per_second": r["tokens_per_second"],
                               "model_flops_per_second": r["tflops_per_second"] * 1e12, "mfu": r["mfu"],
                               "rung": r["rung"]}
    out["variants"] = variants
    target = Path(a.json) if a.json else (Path(a.out) / f"mfu-{date}.json" if a.out else
                                          ROOT / "figures" / "gpu" / device_folder(name) / f"mfu-{date}.json"
                                          if dev == "cuda" else None)
    if target is not None:
        target.parent.mkdir(parents=True, exist_ok=True)
        write_json(target, out)
        with atomic_write(target.with_suffix(".md")) as fh:
            fh.write(markdown(out))
        print(f"wrote {target} and {target.with_suffix('.md')}")
    log = a.log or (str(ROOT / "figures" / "gpu" / "mfu-log.jsonl") if dev == "cuda" and not a.tiny else "-")
    if log != "-":
        measurements.append(log, command, compact(rows), gpu=host["gpu"], precision=a.precision,
                            peers={p["model"]: round(p["ms_per_step"], 2) for p in peers})
    if left_out:
        print(f"left out by the budget: {', '.join(left_out)}; run them with: {out['rerun']}")
    return out


if __name__ == "__main__":
    with contextlib.suppress(BrokenPipeError):
        main()
