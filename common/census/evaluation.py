"""The census of the paper-scale evaluation jobs: what one job of each (encoder, task) needs, before it is submitted.

At paper scale every (run, task) is a Slurm job of its own on one GPU (``eval.job_per_task``). A row here is one
task on one encoder initialisation of a paper (the runs that share it -- methods, seeds -- are its ``jobs``):

* **work**, from the task's declaration (:mod:`common.eval.tasks`) and the sizes of the public evaluation sets it
  reads (``SETS``, each with its source): sequences embedded at the paper's ``eval.max_length``; for a fine-tuning
  task, training sequences x epochs and the test sequences predicted, at the task's ``max_length``; similarity
  products of a search (``2 d`` FLOPs each) and the embeddings a search holds at once (VMSST's PAQ bank: one shard,
  :data:`common.eval.question_retrieval.BANK_SHARD`).
* **counted**: the evaluated encoder (``common.models.encoder.build_encoder`` on the run's ``encoders.<init>``, under
  fake tensors: nothing is allocated) -- its forward FLOPs per sequence and, for fine-tuning, forward + backward
  (``FlopCounterMode``); inference memory at the eval batch (``torch.distributed._tools.MemTracker``'s peak); for
  fine-tuning, fp32 weights, gradients and AdamW moments (``16 P``) and the bytes autograd saves at the task's batch.
* **derived** as for the training jobs (:func:`common.census.estimate.needs`): memory against the GPU, wall time at
  the stated MFU on one GPU, the Slurm ``runtime`` (with a margin) and host ``mem_mb``, which the ``evaluate_task``
  rule reads at paper scale (:func:`common.workflow.launch.train_resources` with ``stage="evaluate"``).

Not counted: tokenisation, the t-SNE of the figure tasks (a few hundred points, minutes on a CPU) and the sorting
of a margin search beyond its matrix products. Sizes marked "at most" are the sets' stated upper bounds.
"""
from __future__ import annotations

import functools
import logging
import math
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from common.census import estimate as est
from common.census import flops

if TYPE_CHECKING:
    from common.eval.tasks import Task
    from common.runs import Run

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Set:
    """A public evaluation set's size as its authors state it."""

    items: int  # per language (or in all, for ``languages=1``)
    source: str
    at_most: bool = False  # ``items`` is the largest language's


# The sizes the papers' evaluations read (the papers' references; XTREME: Hu et al. 2020, Table 1)
SETS = {
    "tatoeba": Set(1_000, "Artetxe & Schwenk 2019b: up to 1,000 English-aligned pairs per language", True),
    "bucc": Set(600_000, "Zweigenbaum et al. 2018: below 0.6M sentences per side of each pair's sample and "
                "training split (the largest, ru-en's English side, ~0.56M)", True),
    "sts-en": Set(20_000, "SentEval's STS12-16 test sets, STS-B test and SICK-R test: ~18.9k pairs in all", True),
    "sts17": Set(250, "Cer et al. 2017: 250 pairs per track"),
    "multinli": Set(392_702, "Williams et al. 2018: MultiNLI train"),
    "xnli": Set(5_010 + 2_490, "Conneau et al. 2018: 2,490 dev and 5,010 test pairs per language"),
    "pawsx-train": Set(49_401, "Yang et al. 2019: PAWS-X English train"),
    "pawsx": Set(2_000 + 2_000, "Yang et al. 2019: 2,000 dev and 2,000 test pairs per language", True),
    "udpos-train": Set(21_253, "XTREME: UD v2.5 English train sentences"),
    "udpos": Set(20_436 + 3_974, "XTREME: at most 20,436 test and 3,974 dev sentences per language", True),
    "panx-train": Set(20_000, "XTREME: WikiANN English train sentences"),
    "panx": Set(10_000 + 10_000, "XTREME: at most 10,000 test and 10,000 dev sentences per language", True),
    "squad-train": Set(87_599, "Rajpurkar et al. 2016: SQuAD v1.1 train questions"),
    "xquad": Set(1_190, "Artetxe et al. 2020: 1,190 questions per language"),
    "mlqa": Set(11_590, "Lewis et al. 2020: at most 11,590 test questions per language", True),
    "tydiqa-train": Set(3_696, "Clark et al. 2020: TyDiQA-GoldP English train"),
    "tydiqa": Set(2_719, "XTREME: at most 2,719 TyDiQA-GoldP test questions per language", True),
    "paq": Set(65_000_000, "Lewis et al. 2021; VMSST section 6.2: 65 million generated questions"),
    "nq": Set(3_610, "Kwiatkowski et al. 2019: NQ-open test questions"),
    "mkqa": Set(10_000, "Longpre et al. 2021: 10,000 questions per language"),
}
LANGUAGES = {"xnli": 15, "pawsx": 7, "udpos": 33, "panx": 40, "xquad": 11, "mlqa": 7, "tydiqa": 9, "sts17": 5}
# the Tatoeba pin file each paper-scale corpus kind reads (common/data/corpus*.py); MoCo-BERT's en-zh corpus: cmn
TATOEBA_PINS = {"paper": "tatoeba_v1.sha256.yaml", "paper_hictl": "tatoeba_v1.sha256.yaml",
                "paper_vmsst": "tatoeba_v1_all.sha256.yaml"}


@dataclass(frozen=True)
class Workload:
    """What one evaluation job does, in sequences (one sequence: a sentence, or a pair in one input)."""

    embedded: int = 0  # forward passes of the encoder at the eval length
    trained: int = 0  # fine-tuning sequences over all epochs (forward + backward) at ``length``
    predicted: int = 0  # sequences through the fine-tuned model at ``length``
    length: int = 0  # the fine-tuning length
    batch: int = 0  # the fine-tuning batch
    products: float = 0.0  # query x key similarity products of a search
    held: int = 0  # embeddings held at once for a search
    at_most: bool = False
    basis: str = ""


def _languages(cfg: dict[str, Any], key: str) -> int:
    spec = cfg["corpus"].get(cfg["corpus"]["kind"], {})
    if key == "tatoeba":
        from common.data import download

        pin = TATOEBA_PINS.get(cfg["corpus"]["kind"])
        return len(download.tatoeba_pins(pin, spec.get("tatoeba_languages"))) if pin else 1
    if key == "bucc":
        return len(spec.get("bucc_pairs", []))
    if key == "mkqa":
        return len(spec["mkqa_languages"])
    return LANGUAGES[key]


def _finetune(params: dict[str, Any], train: int, test: int, basis: str, at_most: bool) -> Workload:
    return Workload(trained=train * int(params["epochs"]), predicted=test, length=int(params["max_length"]),
                    batch=int(params["batch_size"]), at_most=at_most, basis=basis)


def workload(task: Task, cfg: dict[str, Any]) -> Workload:
    """The work of one job of ``task`` (a :class:`common.eval.tasks.Task`) at paper scale."""
    p = task.params_for("paper")
    s = SETS
    if task.type == "tatoeba":
        n = _languages(cfg, "tatoeba")
        return Workload(embedded=2 * n * s["tatoeba"].items, products=2 * n * s["tatoeba"].items ** 2,
                        held=2 * s["tatoeba"].items, at_most=True, basis=f"{n} languages; {s['tatoeba'].source}")
    if task.type == "bucc":  # both splits (tune and report) of each pair, both sides; a full score matrix per split
        n, side = _languages(cfg, "bucc"), s["bucc"].items
        return Workload(embedded=2 * 2 * n * side, products=2 * n * side ** 2, held=2 * side, at_most=True,
                        basis=f"{n} pairs x 2 splits; {s['bucc'].source}")
    if task.type in ("sts-en", "sts-en-years"):
        return Workload(embedded=2 * s["sts-en"].items, at_most=True, basis=s["sts-en"].source)
    if task.type == "sts17":
        n = _languages(cfg, "sts17")
        return Workload(embedded=2 * n * s["sts17"].items, basis=f"{n} tracks; {s['sts17'].source}")
    if task.type in ("xnli", "pawsx"):
        name, train = ("xnli", s["multinli"]) if task.type == "xnli" else ("pawsx", s["pawsx-train"])
        n = _languages(cfg, name)
        trained = train.items * (n if p.get("translate_train") else 1)  # translate-train-all: every language's copy
        return _finetune(p, trained, n * s[name].items, f"{n} languages; {train.source}; {s[name].source}"
                         + ("; the training set machine-translated into each" if p.get("translate_train") else ""),
                         s[name].at_most or bool(p.get("translate_train")))
    if task.type == "token-classification":
        name = p["dataset"]
        n = _languages(cfg, name)
        return _finetune(p, s[f"{name}-train"].items, n * s[name].items,
                         f"{n} languages; {s[f'{name}-train'].source}; {s[name].source}", True)
    if task.type == "qa":  # one 384-token window per question (long contexts take a few more)
        name = p["dataset"]
        n = _languages(cfg, name)
        train = s["tydiqa-train"] if name == "tydiqa" else s["squad-train"]
        trained = train.items * (n if p.get("translate_train") else 1)
        return _finetune(p, trained, n * s[name].items, f"{n} languages; {train.source}; {s[name].source}",
                         True)
    if task.type == "question-retrieval":  # every query against every bank question, a shard at a time
        from common.eval.question_retrieval import BANK_SHARD

        q = s["nq"].items if p["queries"] == "nq" else _languages(cfg, "mkqa") * s["mkqa"].items
        bank = s["paq"].items
        return Workload(embedded=bank + q, products=float(q) * bank, held=BANK_SHARD + q,
                        basis=f"{q:,} queries; {s['paq'].source}")
    if task.type in ("moco-tsne", "hictl-tsne"):  # a few hundred sentences
        return Workload(embedded=2_000, at_most=True, basis="a few hundred sentences")
    if task.type == "dap-tokens":  # the token states of a hundred pairs, both sides
        return Workload(embedded=2 * int(p["pairs"]), at_most=True, basis=f"{p['pairs']} Tatoeba pairs, both sides")
    if task.type == "moco-neighbors":  # the nearest English training sentences of a few queries
        return Workload(embedded=int(p["corpus_size"]) + len(p["queries"]), products=float(p["corpus_size"])
                        * len(p["queries"]), held=int(p["corpus_size"]), basis="its corpus_size")
    raise KeyError(f"no census workload for task type {task.type!r} ({task.id})")


# ------------------------------------------------------------------ the evaluated encoder, counted
@dataclass(frozen=True)
class EncoderCount:
    params: int
    hidden: int
    forward_flops: dict[int, float]  # length -> per sequence
    train_flops: dict[int, float]  # length -> forward + backward per sequence
    inference_bytes: est.Linear  # peak bytes at an eval batch (rows), weights included
    saved_bytes: dict[int, est.Linear]  # length -> bytes autograd saves at a fine-tuning batch (rows)


def _inputs(rows: int, length: int, vocab: int) -> dict[str, torch.Tensor]:
    ids = torch.full((rows, length), min(5, vocab - 1), dtype=torch.long)
    return {"input_ids": ids, "attention_mask": torch.ones_like(ids)}


def count_encoder(cfg: dict[str, Any], init: str, eval_length: int, train_lengths: list[int],
                  workdir: Path) -> EncoderCount:
    """The larger side's counts of run ``init``'s evaluated encoder, built as the recipes build it."""
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.distributed._tools.mem_tracker import MemTracker

    from common.census.probe import saved_activation_bytes, side_vocab_size, stand_in_models
    from common.models import tokenizer_sides
    from common.models.encoder import EncoderSpec, autocast, build_encoder

    precision = cfg["eval"].get("precision", "fp32")
    best: EncoderCount | None = None
    enc = cfg["encoders"][init]
    for spec in (tokenizer_sides.spec(enc, side) for side in tokenizer_sides.sides(enc)):
        vocab = side_vocab_size(cfg, spec)
        fields = {k: v for k, v in spec.items() if k in EncoderSpec.__dataclass_fields__}
        with stand_in_models(workdir / "hub"), FakeTensorMode():
            model = build_encoder(EncoderSpec(**fields), vocab)
            params = sum(p.numel() for p in model.parameters())
            hidden = int(model.config.hidden_size if hasattr(model.config, "hidden_size") else model.config.d_model)
            fwd, train, peak, saved = {}, {}, [], {}
            model.eval()
            for rows in (1, 2):
                tracker = MemTracker()
                tracker.track_external(model)
                counter = flops.counter()
                with tracker, counter, torch.no_grad(), autocast("cpu", precision):
                    model(**_inputs(rows, eval_length, vocab))
                peak.append(tracker.get_tracker_snapshot("peak")[torch.device("cpu")]["Total"])
                if rows == 1:
                    fwd[eval_length] = float(counter.get_total_flops())
            model.train()
            for length in train_lengths:
                with torch.no_grad():
                    counter = flops.counter()
                    with counter:
                        model(**_inputs(1, length, vocab))
                fwd[length] = float(counter.get_total_flops())
                counts = []
                for rows in (1, 2):
                    counter = flops.counter()
                    with counter:
                        inputs = _inputs(rows, length, vocab)
                        with autocast("cpu", precision):
                            b, out = saved_activation_bytes(model, functools.partial(model, **inputs))
                        out.last_hidden_state.float().sum().backward()
                    model.zero_grad(set_to_none=True)
                    counts.append(b)
                    if rows == 1:
                        train[length] = float(counter.get_total_flops())
                saved[length] = est.Linear.through((1, 2), (counts[0], counts[1]))
        count = EncoderCount(params, hidden, fwd, train, est.Linear.through((1, 2), (peak[0], peak[1])), saved)
        if best is None or count.params > best.params:
            best = count
    assert best is not None
    return best


# ------------------------------------------------------------------ rows
def needs(work: Workload, enc: EncoderCount, eval_length: int, eval_batch: int, mfu: float) -> dict[str, Any]:
    """One job's memory on its GPU, FLOPs, wall time and Slurm resources."""
    flops = work.embedded * enc.forward_flops[eval_length] + 2 * enc.hidden * work.products
    # states: the fp32 weights; the rest of the inference peak and the embeddings a search holds as activations
    states, acts = 4 * enc.params, enc.inference_bytes.at(eval_batch) - 4 * enc.params + 4 * enc.hidden * work.held
    if work.trained:
        flops += work.trained * enc.train_flops[work.length] + work.predicted * enc.forward_flops[work.length]
        states, acts = 16 * enc.params, enc.saved_bytes[work.length].at(work.batch)  # fp32 weights, grads, AdamW
    row = est.needs(states, acts, flops, 1, 1, mfu)
    host = est.host_mem_mb(enc.params, 1) + math.ceil(4 * enc.hidden * work.held / 2**20)
    return {**row, "mem_mb": host, "params": enc.params}


def job_rows(paper: str, cfg: dict[str, Any], registry: Iterable[Run], mfu: float, workdir: Path,
             done: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per (encoder initialisation, task) of the paper's run registry."""
    from common.eval.tasks import get_task

    groups: dict[tuple[str, str], int] = {}
    for run in registry:
        for task_id in run.tasks:
            groups[(run.init, task_id)] = groups.get((run.init, task_id), 0) + 1
    length, batch = int(cfg["eval"]["max_length"]), int(cfg["eval"]["batch_size"])
    encoders: dict[str, EncoderCount] = {}
    rows = []
    for (init, task_id), jobs in groups.items():
        job = f"eval/{init}/{task_id}"
        if job in done:
            rows.append({**done[job], "seeds": jobs})
            continue
        task = get_task(task_id)
        work = workload(task, cfg)
        if init not in encoders:
            lengths = sorted({int(get_task(t).params_for("paper")["max_length"]) for (i, t) in groups
                              if i == init and "epochs" in get_task(t).params_for("paper")})
            encoders[init] = count_encoder(cfg, init, length, lengths, workdir / init)
        row = {"paper": paper, "kind": "eval", "job": job, "task": task_id, "seeds": jobs, "gpus": 1, "nodes": 1,
               "work": asdict(work), **needs(work, encoders[init], length, batch, mfu)}
        log.info("%s %s: %.1f GiB, %.2f A100-hours per job", paper, job, row["memory_per_gpu_gib"],
                 row["gpu_hours"]["a100"])
        rows.append(row)
    return rows


def _count(n: float) -> str:
    return f"{n / 1e6:,.2f}M" if n >= 1e6 else f"{n / 1e3:,.1f}k"


def _work(w: dict[str, Any]) -> str:
    parts = [f"{_count(w['embedded'])} embedded"] if w["embedded"] else []
    if w["trained"]:
        parts.append(f"{_count(w['trained'])} fine-tuned at {w['length']}, {_count(w['predicted'])} predicted")
    if w["products"]:
        parts.append(f"{w['products']:.1e} products")
    return "; ".join(parts) + (" (at most)" if w["at_most"] else "")


def markdown(rows: list[dict[str, Any]]) -> list[str]:
    """A paper's evaluation table (its ``kind == 'eval'`` rows)."""
    if not rows:
        return []
    hours = {k: sum(r["gpu_hours"][k] * r["seeds"] for r in rows) for k in est.GPUS}
    lines = [f"GPU-hours of all {sum(r['seeds'] for r in rows)} evaluation jobs (one GPU each): "
             f"**{hours['a100']:,.0f} A100-hours**, {hours['h100']:,.0f} H100-hours "
             "(`common/census/evaluation.py`: the sets' public sizes, the evaluated encoder counted).", "",
             "| job | jobs | params (M) | work per job | memory / GPU (GiB) | fits 80 GB | PFLOP / job "
             "| A100 h (wall) | H100 h (wall) | Slurm runtime (min) |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['job']} | {r['seeds']} | {r['params'] / 1e6:,.0f} | {_work(r['work'])} | "
                     f"{r['memory_per_gpu_gib']:.1f} | {'yes' if r['fits']['a100'] else '**no**'} | "
                     f"{r['flops_run'] / 1e15:,.1f} | {r['wall_hours']['a100']:,.2f} | "
                     f"{r['wall_hours']['h100']:,.2f} | {r['runtime_minutes']} |")
    return lines
