"""One training job of a paper's workflow, its step time against its FLOPs: where a step's time goes on this machine.

Give it the job's own arguments, as ``snakemake -n -p`` prints them for ``python -m papers.<paper>.train``, and run
it where the workflow prepared that job's corpus and tokenizer (``--output_dir`` is read for nothing and written to
nothing):

    python scripts/bench_job_step.py --paper vmsst --experiment vmsst --scale mini --method vmsst --init l2 --seed 1 \\
        --corpus results/mini/vmsst/corpus/manifest.json --tokenizer results/mini/vmsst/tokenizer/l2/shared \\
        --output_dir unused --variant vmsst.compile_loss=false

The paper's recipe builds the job's model as the trainer gets it (the config's activation checkpointing and
gradient cache switched on where it asks), with the trainer's optimizer, the config's gradient clipping, the job's
precision as :func:`common.precision.run_precision` resolves it on this machine (bf16 autocast; at the CPU scales,
smoke and mini, fp32 where the CPU has no native bf16), and malloc keeping freed memory as in a CPU job
(:mod:`common.training.malloc`). A step is what the trainer's step is on one process: collate a global batch of the
job's examples (drawn with a seeded generator, below), forward, backward, clip, update.
Left out, as costing next to nothing: the learning-rate schedule, logging and checkpoints; a config that splits
the step into micro-batches (``micro_batch_per_gpu``) is timed as one batch.

Printed for the config as it is and for each ``--variant KEY=VALUE`` (a dotted key of the job's config, the value
read as YAML; each variant resolves its own precision and examples), all built in one process and timed in
alternating rounds, so each ratio is against a baseline under the same load:

* the first step's time (a compiled loss compiles there: the first variant to run a compiled function pays for it)
  and the median of the steady steps;
* GFLOP per step: ``FlopCounterMode`` over eager forward and backward passes of the first timed round's batches,
  their mean (matrix products and attention, recomputed forwards included where activation checkpointing is on;
  :mod:`common.census.flops`);
* GFLOP/s: those batches' FLOPs over the same batches' step times, and its share of this machine's matrix-product
  rate at the step's precision (a 2048 x 2048 x 2048 product, the best of five, measured in the same process). A
  share near 1 means the step is bound by its matrix products: only fewer FLOPs (a smaller config) or a faster unit
  makes it shorter.

Batches are drawn with replacement (the trainer walks a permutation): the same draws for variants of one batch size
and one set of examples.
"""
from __future__ import annotations

import argparse
import copy
import logging
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
import yaml
from transformers import HfArgumentParser

from common import measurements
from common.census import flops
from common.census.probe import recipe_of
from common.config import load_experiment_config
from common.data.manifest import load_manifest
from common.io import write_json
from common.models.encoder import autocast, precision_dtype
from common.precision import run_precision
from common.training.cli import RunArguments
from common.training.malloc import keep_freed_memory
from common.training.model_switches import apply_model_switches
from common.training.onednn import bound_primitive_cache
from common.training.trainer import TrainingArguments, build_optimizer

log = logging.getLogger("bench_job_step")


@dataclass
class Job:
    """One variant of the job, built and ready to step."""

    name: str
    model: torch.nn.Module
    collate: Callable[[list[Any], torch.Generator], dict[str, Any]]
    optimizer: torch.optim.Optimizer
    clip: float
    precision: str
    rows: int
    examples: Sequence[Any]
    step: int = 0
    first_s: float = 0.0

    def draw(self, batches: int, seed: int) -> list[list[Any]]:
        """``batches`` batches of ``rows`` examples, drawn with replacement; variants of one batch size and one set of
        examples get the same draws."""
        draws = torch.Generator().manual_seed(seed)
        return [[self.examples[int(i)] for i in torch.randint(len(self.examples), (self.rows,), generator=draws)]
                for _ in range(batches)]

    def loss(self, examples: list[Any], generator: torch.Generator) -> torch.Tensor:
        """The forward pass of one batch, at the job's precision."""
        batch = self.collate(examples, generator)
        with autocast("cpu", self.precision):
            loss: torch.Tensor = self.model(**batch)["loss"]
        return loss

    def run_step(self, examples: list[Any], generator: torch.Generator) -> None:
        on_step = getattr(self.model, "on_step", None)  # the trainer tells step-dependent losses the step
        if on_step is not None:
            on_step(self.step)
        self.loss(examples, generator).backward()
        if self.clip > 0:
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.clip)
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)
        self.step += 1


def set_key(cfg: dict[str, Any], assignment: str) -> dict[str, Any]:
    """A copy of ``cfg`` with ``KEY=VALUE`` set (a dotted key that must exist; the value read as YAML)."""
    key, sep, value = assignment.partition("=")
    if not sep:
        raise SystemExit(f"--variant {assignment!r}: expected KEY=VALUE")
    out = copy.deepcopy(cfg)
    *parents, leaf = key.split(".")
    node = out
    for part in parents:
        child = node.get(part)
        if not isinstance(child, dict):
            raise SystemExit(f"--variant {assignment!r}: the job's config has no section {part!r}")
        node = child
    if leaf not in node:
        raise SystemExit(f"--variant {assignment!r}: the job's config has no key {key!r}")
    node[leaf] = yaml.safe_load(value)
    return out


def build(name: str, paper: str, cfg: dict[str, Any], run: RunArguments, manifest: dict[str, Any],
          examples: Sequence[Any]) -> Job:
    recipe = recipe_of(paper)
    torch.manual_seed(run.seed)
    built = recipe.build(cfg, run, manifest, examples)
    t = {**cfg["training"], **built.training_overrides}
    model = built.model.train()
    apply_model_switches(model, t)
    args = TrainingArguments.from_config(t, output_dir=run.output_dir, seed=run.seed)
    return Job(name, model, built.collate, build_optimizer(model, args), args.grad_clip, args.precision,
               int(t["global_batch_size"]), examples)


def step_flops(job: Job, examples: list[Any], generator: torch.Generator) -> float:
    """Model FLOPs of one forward and backward, run eagerly (a compiled region would hide its products)."""
    counter = flops.counter()
    with torch.compiler.set_stance("force_eager"), counter:
        job.loss(examples, generator).backward()
    job.optimizer.zero_grad(set_to_none=True)
    return float(counter.get_total_flops())


def main(argv: list[str] | None = None) -> dict[str, Any]:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--paper", required=True, help="the paper whose recipe trains the job (papers/<paper>/train.py)")
    p.add_argument("--variant", action="append", default=[], metavar="KEY=VALUE",
                   help="a config change to time beside the job as it is (repeatable)")
    p.add_argument("--warmup", type=int, default=3, help="steps of each variant before timing (compiling included)")
    p.add_argument("--steps", type=int, default=5, help="timed steps per variant and round")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--threads", type=int, default=1, help="torch threads (the mini workflows run jobs on 1)")
    p.add_argument("--json", default=None, help="also write the figures here")
    argv_ = sys.argv[1:] if argv is None else list(argv)
    a, rest = p.parse_known_args(argv_)
    bound_primitive_cache()  # as the training command line does, before the first matmul
    kept = keep_freed_memory(on_cpu=True)
    (run,) = HfArgumentParser(RunArguments).parse_args_into_dataclasses(args=rest)
    run.experiment = run.experiment or a.paper
    torch.set_num_threads(a.threads)
    cfg = load_experiment_config(run.experiment, a.paper, run.scale)
    manifest = load_manifest(run.corpus)
    jobs = []
    for name, c in ({"as configured": cfg} | {v: set_key(cfg, v) for v in a.variant}).items():
        c["training"]["precision"] = run_precision(c["training"].get("precision", "fp32"), run.scale, "cpu")
        jobs.append(build(name, a.paper, c, run, manifest, recipe_of(a.paper).examples(c, run, manifest)))
    total = a.warmup + a.steps * a.rounds
    batches = {job.name: job.draw(total, run.seed) for job in jobs}

    def generator(i: int) -> torch.Generator:
        return torch.Generator().manual_seed(run.seed * 100_003 + i)

    for job in jobs:
        for i in range(a.warmup):
            t0 = time.perf_counter()
            job.run_step(batches[job.name][i], generator(i))
            if i == 0:
                job.first_s = time.perf_counter() - t0
        log.info("%s: warm (first step %.1f s)", job.name, job.first_s)
    times: dict[str, list[float]] = {job.name: [] for job in jobs}
    for r in range(a.rounds):
        for job in jobs if r % 2 == 0 else jobs[::-1]:
            for s in range(a.steps):
                i = a.warmup + r * a.steps + s
                t0 = time.perf_counter()
                job.run_step(batches[job.name][i], generator(i))
                times[job.name].append(time.perf_counter() - t0)
            log.info("%s: round %d, %.2f s a step", job.name, r + 1, statistics.median(times[job.name][-a.steps:]))
    rates = {job.precision: flops.cpu_matmul_rate(precision_dtype(job.precision)) for job in jobs}
    record: dict[str, Any] = {
        "paper": a.paper, "experiment": run.experiment, "scale": run.scale, "method": run.method, "init": run.init,
        "threads": a.threads, "torch": torch.__version__, "malloc_keeps_freed_memory": kept,
        "matmul_gflops": {precision: rate / 1e9 for precision, rate in rates.items()}, "variants": {}}
    print(f"{a.paper} {run.method} ({run.init}), {run.scale}, {a.threads} thread(s); matrix products on this machine: "
          + ", ".join(f"{rate / 1e9:.1f} GFLOP/s at {precision}" for precision, rate in rates.items()))
    base = statistics.median(times[jobs[0].name])
    for job in jobs:
        step = statistics.median(times[job.name])
        # FLOPs over the first timed round's batches, against those same batches' times
        flop = [step_flops(job, batches[job.name][a.warmup + s], generator(a.warmup + s)) for s in range(a.steps)]
        gflop, gflops = statistics.mean(flop) / 1e9, sum(flop) / sum(times[job.name][:a.steps]) / 1e9
        share = gflops / (rates[job.precision] / 1e9)
        record["variants"][job.name] = {
            "rows": job.rows, "precision": job.precision, "first_step_s": job.first_s, "step_s": step,
            "step_s_all": times[job.name], "gflop_per_step": gflop, "gflops": gflops, "share_of_matmul_rate": share,
            "step_ratio_to_configured": step / base}
        print(f"  {job.name}: {job.rows} rows, {job.precision}, first step {job.first_s:.1f} s, steady {step:.2f} s "
              f"({step / base:.2f}x), {gflop:.1f} GFLOP a step, {gflops:.1f} GFLOP/s = {share:.0%} of the "
              "matrix-product rate")
    if a.json:
        Path(a.json).parent.mkdir(parents=True, exist_ok=True)
        write_json(a.json, record)
        measurements.append(Path(a.json).parent / "log.jsonl", "python scripts/bench_job_step.py " + " ".join(argv_),
                            {name: {k: v[k] for k in ("rows", "precision", "step_s", "gflops", "share_of_matmul_rate")}
                             for name, v in record["variants"].items()}, record=Path(a.json).name)
    return record


if __name__ == "__main__":
    main()
