"""One training loop on the DeepSpeed engine, for every paper and every scale.

The same code runs single-process on CPU, several CPU processes (gloo) and multi-GPU
(NCCL, bf16/fp16): only ``TrainingArguments`` and the launcher differ. The model is any
``nn.Module`` whose ``forward(**batch)`` returns a dict with a scalar ``loss`` (other
scalar entries are logged); a model with an ``on_step(step)`` method is told the step
before each one (a schedule inside the loss, e.g. VMSST's KL annealing, resumes exactly).
``collate(examples, generator)`` turns raw examples into a batch; its generator is seeded by
(seed, step, rank), so random masking is reproduced exactly after a resume.

Checkpoints (``engine.save_checkpoint``) every ``save_every`` steps and every
``save_every_minutes`` hold the model, optimizer, scheduler and every rank's RNG states
(:mod:`common.training.rng`, CUDA generators included); a killed run restarted with the same
arguments continues from the last one and ends with the same parameters and metrics as an
uninterrupted run. Before the job's wall-clock limit, or on SIGTERM / SIGUSR1, the run saves a
checkpoint and stops (:mod:`common.training.stopping`; the CLI then exits with ``EXIT_RESUME``).
Metrics go to ``metrics.jsonl`` and TensorBoard (:mod:`common.training.metrics_log`); the
resolved arguments are saved to ``training_args.json`` beside the checkpoints. Precision follows
one policy (:mod:`common.precision`). Collectives go through
:mod:`common.distributed.collectives`. A non-finite loss, gradient norm or weight stops the run
with the step and the last good checkpoint named, and no checkpoint or model is written from
non-finite weights (:mod:`common.training.finite`).
"""
from __future__ import annotations

import contextlib
import json
import logging
import math
import random
import shutil
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import MISSING, asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from common.distributed.collectives import all_gather_object, barrier, broadcast_object, max_over_ranks, mean_over_ranks
from common.distributed.env import ensure_process_group_env, process_group_teardown
from common.io import DataFormatError, read_json, write_json
from common.precision import deepspeed_precision, training_problems
from common.training import rng
from common.training.finite import FiniteGuard, require_finite_weights
from common.training.metrics_log import MetricsLog, peak_memory_mb
from common.training.model_switches import apply_model_switches
from common.training.provenance import NOT_ARITHMETIC
from common.training.sampler import StepSampler
from common.training.stopping import StopConditions, job_deadline

log = logging.getLogger(__name__)


STOP_CHECK_EVERY = 10  # steps between the ranks' agreement on a stop or a timed checkpoint (world size > 1)
LR_SCHEDULES = ("linear", "cosine", "constant", "inverse_sqrt")
OPTIMIZERS = ("adamw", "adafactor")


@dataclass(kw_only=True)
class LaunchArguments:
    """Command-line arguments every training script takes besides its own (HF ``run_glue.py`` style)."""

    max_steps: int | None = field(default=None, metadata={"help": "override the config's max_steps"})
    stop_after: int | None = field(default=None, metadata={"help": "stop (as if killed) after this step; for tests"})
    rehearse_time_limit_at: int | None = field(default=None, metadata={
        "help": "the rehearsal: act once as if the job's time limit came after this step (checkpoint, exit with "
                "EXIT_RESUME; the rerun resumes)"})
    snapshot_steps: list[int] = field(default_factory=list, metadata={
        "help": "also save the model at these steps, under snapshots/step<N>/ (a learning curve: evaluate each "
                "with python -m common.eval)"})
    local_rank: int = field(default=-1,
                            metadata={"help": "set by the deepspeed launcher (the trainer reads LOCAL_RANK)"})
    gradient_checkpointing: str | None = field(default=None, metadata={
        "help": "override the config's training.gradient_checkpointing (full | selective): the census's choice for "
                "a job under 'auto' (common/census/checkpointing.py)"})


@dataclass
class TrainingArguments:
    output_dir: str
    max_steps: int
    global_batch_size: int
    learning_rate: float
    warmup_steps: int = 0
    lr_schedule: str = "linear"  # linear | cosine | constant | inverse_sqrt (after warm-up)
    optimizer: str = "adamw"  # adamw | adafactor (VMSST section 6.4)
    # recompute activations in the backward pass: False | True / full | selective | auto (activation_checkpointing.py)
    gradient_checkpointing: bool | str = False
    shuffle: str = "randperm"  # randperm | feistel: the epoch's order (common/training/sampler.py)
    grad_cache_rows: int = 0  # > 0: encoders run in chunks of this many rows with cached gradients (grad_cache.py)
    # > 1: each encoder call in this many groups of similar length, each cut to its longest row rounded up to
    # length_multiple columns (length_buckets.py)
    length_buckets: int = 0
    length_multiple: int = 8
    # torch.compile of the model's step (forward and loss; backward through AOTAutograd), in place: the state dict,
    # checkpoints and saved models keep their names. On at paper scale; off at the CPU scales, where compiling costs
    # more than it saves in a run of a few hundred steps
    compile: bool = False
    compile_backend: str = "inductor"  # inductor | aot_eager (tracing without code generation: the tests)
    # inductor's mode: default | reduce-overhead (CUDA graphs: for a step whose shapes are static, as padded to
    # max_length; a step that meets a new shape records a new graph)
    compile_mode: str = "default"
    weight_decay: float = 0.0
    adam_betas: tuple[float, float] = (0.9, 0.999)  # AdamW's (HICTL Table 9: (0.9, 0.98) for its base model)
    adam_epsilon: float = 1e-8  # (HICTL Table 9: 1e-6)
    grad_clip: float = 1.0
    seed: int = 1
    save_every: int = 0  # 0: only the final checkpoint
    save_every_minutes: float = 0.0  # also checkpoint when this much time passed since the last one (0: never)
    stop_margin_minutes: float = 10.0  # checkpoint and stop this long (plus two steps) before the job's time limit
    # the rehearsal: act once as if the job's time limit came after this step (checkpoint, exit, resume on rerun)
    rehearse_time_limit_at: int | None = None
    keep_checkpoints: int = 2
    log_every: int = 10
    tensorboard: bool = True  # TensorBoard events beside metrics.jsonl
    precision: str = "fp32"  # bf16 | fp16 | fp32: common/precision.py (the paper scale says bf16)
    zero_stage: int = 0
    # > 0: each rank takes its share of a step in micro-batches of this many examples and accumulates their gradients
    # (one optimizer step per step, the same examples); only for a model whose loss is a mean over its examples
    # (``batch_decomposable``): an in-batch contrastive loss would see fewer negatives
    micro_batch_per_gpu: int = 0
    dist_backend: str | None = None  # gloo on CPU, nccl on GPU when None
    stop_after: int | None = None  # testing hook: exit (as if killed) after this step

    @classmethod
    def from_config(cls, training: dict[str, Any], *, output_dir: str, seed: int,
                    **overrides: Any) -> TrainingArguments:
        """From a paper config's ``training`` section (keys absent there take the defaults above;
        keys that are not arguments, such as ``gpus`` or ``max_length``, are ignored);
        ``overrides`` (None values skipped) win over the config."""
        names = {f for f in cls.__dataclass_fields__ if f not in ("output_dir", "seed")}
        kwargs = {k: v for k, v in training.items() if k in names}
        kwargs.update({k: v for k, v in overrides.items() if v is not None})
        return cls(output_dir=output_dir, seed=seed, **kwargs)

    def __post_init__(self) -> None:
        if self.lr_schedule not in LR_SCHEDULES:
            raise ValueError(f"unknown lr_schedule {self.lr_schedule!r}; expected one of {LR_SCHEDULES}")
        if self.optimizer not in OPTIMIZERS:
            raise ValueError(f"unknown optimizer {self.optimizer!r}; expected one of {OPTIMIZERS}")
        if problems := training_problems(asdict(self)):
            raise ValueError("invalid training arguments: " + "; ".join(problems))


def checkpoint_tag(step: int) -> str:
    """The tag of the checkpoint of a step: its folder under ``checkpoints/`` and, for the newest, the text of
    ``checkpoints/latest``."""
    return f"step{step:08d}"


def resumable_step(output_dir: str | Path) -> int | None:
    """The step of the newest checkpoint of the run in ``output_dir`` (read from ``checkpoints/latest``), or None
    where there is none."""
    latest = Path(output_dir) / "checkpoints" / "latest"
    if not latest.exists():
        return None
    tag = latest.read_text().strip()
    digits = tag.removeprefix("step")
    if not digits.isdecimal() or tag != checkpoint_tag(int(digits)):
        raise ValueError(f"{latest}: {tag!r} is not a checkpoint tag of this trainer ({checkpoint_tag(0)!r}, ...)")
    return int(digits)


def resumable_arguments(output_dir: str | Path) -> dict[str, Any] | None:
    """The training arguments of the checkpointed run in ``output_dir`` that a run there resumes (its
    ``training_args.json``), or None where there is nothing to resume."""
    out = Path(output_dir)
    saved = out / "training_args.json"
    if not (out / "checkpoints" / "latest").exists() or not saved.exists():
        return None
    record = read_json(saved)  # invalid JSON: an error naming the file and the line
    if not isinstance(record, dict) or not isinstance(record.get("training_arguments"), dict):
        raise DataFormatError(saved, None, "training_arguments: missing, or not a JSON object")
    arguments: dict[str, Any] = record["training_arguments"]
    return arguments


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)


def lr_lambda(args: TrainingArguments) -> Callable[[int], float]:
    """Multiplier of the peak learning rate at a step: linear warm-up, then linear / cosine decay to zero, constant,
    or inverse square root (Vaswani et al. 2017: proportional to 1 / sqrt(step) after the warm-up)."""
    def f(step: int) -> float:
        if step < args.warmup_steps:
            return (step + 1) / args.warmup_steps
        if args.lr_schedule == "constant":
            return 1.0
        if args.lr_schedule == "inverse_sqrt":
            return float((max(1, args.warmup_steps) / (step + 1)) ** 0.5)
        progress = (step - args.warmup_steps) / max(1, args.max_steps - args.warmup_steps)
        if args.lr_schedule == "cosine":
            return 0.5 * (1 + math.cos(math.pi * min(1.0, progress)))
        return max(0.0, 1.0 - progress)

    return f


def build_optimizer(model: nn.Module, args: TrainingArguments) -> torch.optim.Optimizer:
    groups = _param_groups(model, args.weight_decay)
    if args.optimizer == "adafactor":  # Shazeer & Stern 2018 (torch.optim.Adafactor); the schedule sets the lr
        return torch.optim.Adafactor(groups, lr=args.learning_rate)
    # fused: one kernel over all parameters instead of one op per tensor and step (CPU and CUDA; 4x faster
    # updates for MiniLM on CPU, measured by bench/train_step.py)
    return torch.optim.AdamW(groups, lr=args.learning_rate, betas=tuple(args.adam_betas), eps=args.adam_epsilon,
                             fused=True)


def _param_groups(model: nn.Module, weight_decay: float) -> list[dict[str, Any]]:
    decay: list[nn.Parameter] = []
    no_decay: list[nn.Parameter] = []
    for name, p in model.named_parameters():
        if not p.requires_grad:
            continue
        (no_decay if p.ndim < 2 or "LayerNorm" in name or name.endswith("bias") else decay).append(p)
    return [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}]


def accumulation_steps(args: TrainingArguments, world_size: int) -> int:
    """Micro-batches per rank and step: 1, or the rank's share of the global batch over ``micro_batch_per_gpu``."""
    if args.global_batch_size % world_size:
        raise ValueError(f"global batch {args.global_batch_size} is not divisible by world size {world_size}")
    local = args.global_batch_size // world_size
    if not args.micro_batch_per_gpu or args.micro_batch_per_gpu >= local:
        return 1
    if local % args.micro_batch_per_gpu:
        raise ValueError(f"each rank's {local} examples per step (global batch {args.global_batch_size} over "
                         f"{world_size} ranks) are not a whole number of micro-batches of {args.micro_batch_per_gpu}")
    return local // args.micro_batch_per_gpu


def deepspeed_config(args: TrainingArguments, world_size: int) -> dict[str, Any]:
    accum = accumulation_steps(args, world_size)
    return {
        "train_batch_size": args.global_batch_size,
        "train_micro_batch_size_per_gpu": args.global_batch_size // (world_size * accum),
        "gradient_accumulation_steps": accum,
        "gradient_clipping": args.grad_clip,
        **deepspeed_precision(args.precision),
        "zero_optimization": {"stage": args.zero_stage},
        "steps_per_print": 10**9,
    }


def skip_shm_comm_build() -> None:
    """Keep DeepSpeed from JIT-compiling its shared-memory all-reduce op at ``init_distributed``.

    On the CPU accelerator DeepSpeed 0.19 builds ``deepspeed_shm_comm`` with ninja the first time
    a process group starts (about 45 s per machine). Only its inference all-reduce uses the op;
    training goes through gloo. The build holds a file lock under ``~/.cache/torch_extensions``
    that a process killed mid-build leaves behind, and every later run then waits on it forever
    (a CI run hung there). Marking the op incompatible makes ``build_shm_op`` return None."""
    import deepspeed.ops

    deepspeed.ops.__compatible_ops__["deepspeed_shm_comm"] = False


@contextlib.contextmanager
def no_fairseq_optimizer_probe() -> Iterator[None]:
    """Answer DeepSpeed's probe for fairseq's optimizer class with 'not importable' while it initializes.

    ``DeepSpeedEngine._do_sanity_check`` imports ``fairseq.optim.fairseq_optimizer`` (to accept fairseq's
    optimizers) whenever fairseq is installed, as it is here for HICTL's NMT: 3.2 s of imports in every rank of
    every training job (measured on the 2-core machine), for optimizers the trainer never builds (torch's only).
    A ``None`` entry in ``sys.modules`` makes that import raise ImportError, which DeepSpeed catches; the entry
    is removed afterwards, and nothing changes when fairseq is loaded already."""
    name = "fairseq.optim.fairseq_optimizer"
    if name in sys.modules:
        yield
        return
    sys.modules[name] = None  # type: ignore[assignment]
    try:
        yield
    finally:
        if name in sys.modules and sys.modules[name] is None:
            del sys.modules[name]


def forget_deepspeed_groups() -> None:
    """Drop DeepSpeed's cached clone of the world group once the group is destroyed.

    DeepSpeed 0.19 clones the world group once per process (``deepspeed.utils.groups._WORLD_GROUP``) and
    keeps it; a second Trainer in the same process (a benchmark's rounds, a notebook) would otherwise hand
    the destroyed clone to ``get_global_rank`` and fail ("Group ... is not registered")."""
    from deepspeed.utils import groups

    groups._WORLD_GROUP = None


def logged_scalars(outputs: dict[str, Any], device: torch.device) -> dict[str, torch.Tensor]:
    """A model output's 0-d tensors, detached and on the training device: the ranks' means are taken in one NCCL
    all-reduce of them stacked, which needs one device (a scalar a model built on the CPU, such as an annealing
    weight, failed the first GPU rehearsal)."""
    return {k: v.detach().to(device) for k, v in outputs.items() if torch.is_tensor(v) and v.ndim == 0}


def to_device(batch: dict[str, Any], device: torch.device) -> dict[str, Any]:
    """A collated batch's tensors on ``device``; to a GPU from pinned memory without blocking, so that the host goes
    on to collate the next batch while the copy and the step run (the step itself has no host sync)."""
    if device.type != "cuda":
        return {k: v.to(device) if torch.is_tensor(v) else v for k, v in batch.items()}
    return {k: v.pin_memory().to(device, non_blocking=True) if torch.is_tensor(v) else v for k, v in batch.items()}


class Trainer:
    def __init__(self, model: nn.Module, examples: Sequence[Any],
                 collate: Callable[[list[Any], torch.Generator], dict[str, Any]],
                 args: TrainingArguments, config_to_save: dict[str, Any] | None = None,
                 on_step: Callable[[int], None] | None = None, snapshot_steps: Sequence[int] = ()):
        """``on_step(step)`` runs on every rank after each optimizer step (e.g. saving a snapshot on rank 0);
        ``snapshot_steps``: the steps at which it saves the model, checked finite before it runs."""
        self.model, self.examples, self.collate, self.args = model, examples, collate, args
        self.on_step, self.snapshot_steps = on_step, set(snapshot_steps)
        self.config_to_save = config_to_save or {}
        self.out = Path(args.output_dir)
        self.ckpt_dir = self.out / "checkpoints"

    # ------------------------------------------------------------------ setup
    def _init_engine(self) -> None:
        import deepspeed

        from common.training.checkpoint_load import load_weights_only

        log.info("launcher: %s", ensure_process_group_env())
        backend = self.args.dist_backend or ("nccl" if torch.cuda.is_available() else "gloo")
        if backend == "gloo":
            skip_shm_comm_build()
        deepspeed.init_distributed(dist_backend=backend)
        import torch.distributed as dist

        self.rank, self.world = dist.get_rank(), dist.get_world_size()
        seed_everything(self.args.seed + self.rank)
        self.accum = accumulation_steps(self.args, self.world)
        if self.accum > 1 and not getattr(self.model, "batch_decomposable", False):
            raise ValueError(f"micro_batch_per_gpu {self.args.micro_batch_per_gpu} splits each rank's batch in "
                             f"{self.accum}, but {type(self.model).__name__}'s loss is not declared a mean over its "
                             "examples (batch_decomposable): accumulated micro-batches would change what it optimizes")
        apply_model_switches(self.model, asdict(self.args))
        if self.args.compile:
            mode = self.args.compile_mode if self.args.compile_backend == "inductor" else None
            self.model.compile(backend=self.args.compile_backend, mode=mode)
            log.info("model step compiled (torch.compile, backend %s, mode %s)", self.args.compile_backend, mode)
        optimizer = build_optimizer(self.model, self.args)
        scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lr_lambda(self.args))
        with no_fairseq_optimizer_probe():
            engine, _, _, _ = deepspeed.initialize(model=self.model, optimizer=optimizer, lr_scheduler=scheduler,
                                                   config=deepspeed_config(self.args, self.world))
        load_weights_only(engine)  # resume reads the checkpoint with torch.load(weights_only=True)
        if self.world == 1 and self.args.zero_stage == 0:
            # nothing to all-reduce: skip DeepSpeed's flatten / reduce / copy-back of every gradient. Not under ZeRO
            # 1/2, whose optimizer receives the gradients of its partitions through that path, even on one rank.
            engine.enable_backward_allreduce = False
        self.engine, self.scheduler = engine, scheduler
        # fp16's loss scaler skips overflowed steps itself; the guard counts them (common/training/finite.py)
        self.guard = FiniteGuard(engine.device, getattr(engine, "torch_autocast_z0_gradscaler", None))
        self.guard.watch_clipping(engine)
        self.sampler = StepSampler(len(self.examples), self.args.global_batch_size, self.args.seed,
                                   self.rank, self.world, self.args.shuffle)

    def _resume(self) -> int:
        if not (self.ckpt_dir / "latest").exists():
            return 0
        _, client = self.engine.load_checkpoint(str(self.ckpt_dir))
        step = int(client["step"])
        states = client["rng"] if client.get("rng_per_rank") else [client["rng"]]
        rng.restore(states[min(self.rank, len(states) - 1)])
        log.info("resumed from step %d", step)
        return step

    def last_checkpoint(self) -> Path | None:
        """The newest checkpoint of the run (the last good one: none is written from non-finite weights)."""
        step = resumable_step(self.out)
        return None if step is None else self.ckpt_dir / checkpoint_tag(step)

    def _refuse_nonfinite(self, step: int, what: str = "weights") -> None:
        """Before anything is written from the weights: every step so far finite, and the weights too."""
        self.guard.check(step, self.last_checkpoint)
        require_finite_weights(self.engine.module, step, self.last_checkpoint, what)

    def _save(self, step: int) -> None:
        self._refuse_nonfinite(step)
        t0 = time.time()
        states = all_gather_object(rng.capture())
        self.engine.save_checkpoint(str(self.ckpt_dir), tag=checkpoint_tag(step),
                                    client_state={"step": step, "rng": states, "rng_per_rank": True})
        if self.rank == 0:
            tags = sorted(p for p in self.ckpt_dir.glob("step*") if p.is_dir())
            for old in tags[: -self.args.keep_checkpoints]:
                shutil.rmtree(old, ignore_errors=True)
        barrier()
        self.last_save = time.time()
        log.info("checkpoint of step %d saved in %.1f s", step, self.last_save - t0)

    def _mean_over_ranks(self, scalars: dict[str, torch.Tensor]) -> dict[str, float]:
        """Logged losses are means over ranks, so a log means the same at any world size. The stacked scalars stay
        on the rank's device for the all-reduce (NCCL takes CUDA tensors only) and are read back afterwards."""
        names = sorted(scalars)
        values = torch.stack([scalars[n].detach().float() for n in names])  # (S,) on the loss's device
        return dict(zip(names, mean_over_ranks(values).tolist()))

    def _stop_flags(self, step_seconds: float) -> tuple[str | None, bool]:
        """(why to stop now, or None; whether a timed checkpoint is due), agreed by every rank."""
        reason = self.stop.reason(step_seconds)
        rehearsed = self.args.rehearse_time_limit_at
        if reason is None and rehearsed is not None and self.start_step < rehearsed <= self.step:
            reason = f"rehearsed time limit at step {rehearsed}"
        timed = bool(self.args.save_every_minutes) and time.time() - self.last_save >= 60 * self.args.save_every_minutes
        if self.world == 1:
            return reason, timed
        mine = torch.tensor([reason is not None, timed], dtype=torch.float32, device=self.engine.device)  # (2,)
        flags = max_over_ranks(mine)
        stop, timed = (bool(v) for v in flags.tolist())
        return (reason or "another rank's stop request") if stop else None, timed

    # ------------------------------------------------------------------ loop
    def _check_resumable(self) -> None:
        """Refuse to resume checkpoints written with other training arguments (a changed config
        would otherwise continue a stale run silently); a paper's command line also compares the config
        sections its method reads (common/training/cli.py, ``refuse_other_settings``)."""
        saved = resumable_arguments(self.out)
        if saved is None:
            return
        old = {k: v for k, v in saved.items() if k not in NOT_ARITHMETIC}
        as_saved = json.loads(json.dumps(asdict(self.args)))
        new = {k: v for k, v in as_saved.items() if k not in NOT_ARITHMETIC}
        # an argument added after the checkpoint was written counts as its default
        defaults = json.loads(json.dumps({f.name: f.default for f in fields(TrainingArguments)
                                          if f.default is not MISSING}))
        changed = sorted(k for k in new if old.get(k, defaults.get(k)) != new[k])
        if changed:
            raise RuntimeError(f"{self.ckpt_dir} holds a run with other training arguments ({', '.join(changed)}); "
                               "delete that folder to start over, or restore the arguments to resume")

    def train(self) -> dict[str, Any]:
        """Train to ``max_steps`` (or ``stop_after``), resuming from the newest checkpoint; the
        process group is torn down on every exit path (``process_group_teardown``)."""
        try:
            with process_group_teardown():
                self._init_engine()
                return self._train()
        finally:
            forget_deepspeed_groups()

    def _train(self) -> dict[str, Any]:
        self._check_resumable()
        if self.rank == 0:
            self.out.mkdir(parents=True, exist_ok=True)
            write_json(self.out / "training_args.json",
                       {"training_arguments": asdict(self.args), "world_size": self.world, **self.config_to_save})
        step = self.start_step = self._resume()
        metrics = MetricsLog(self.out, enabled=self.rank == 0, tensorboard=self.args.tensorboard)
        metrics.start(step)
        deadline = broadcast_object(job_deadline() if self.rank == 0 else None)  # one squeue call, not one per rank
        self.stop = StopConditions(deadline, 60 * self.args.stop_margin_minutes).install()
        try:
            return self._loop(step, metrics)
        finally:
            self.stop.uninstall()
            metrics.close()

    def _loop(self, step: int, metrics: MetricsLog) -> dict[str, Any]:
        from tqdm import tqdm

        bar = tqdm(total=self.args.max_steps, initial=step, disable=self.rank != 0, mininterval=5, desc="train")
        t0 = self.last_save = time.time()
        last, logged_at, step_seconds = {}, (step, t0), 0.0
        device = self.engine.device
        self.engine.train()
        on_step = getattr(self.unwrap(), "on_step", None)  # models whose loss depends on the step (KL annealing)
        while step < self.args.max_steps:
            started = time.time()
            if on_step is not None:
                on_step(step)
            gen = torch.Generator().manual_seed(self.args.seed * 7919 + step * 104729 + self.rank)
            local = self.sampler.local_indices(step)
            size = len(local) // self.accum
            parts = []  # each micro-batch's scalar outputs, detached: nothing else of it outlives its backward
            for start in range(0, len(local), size):  # one micro-batch unless micro_batch_per_gpu splits the step
                batch = self.collate([self.examples[i] for i in local[start:start + size]], gen)
                batch = to_device(batch, device)
                micro = self.engine(**batch)
                self.engine.backward(micro["loss"])  # DeepSpeed divides by the accumulation steps
                self.engine.step()  # the optimizer steps after the last micro-batch only
                parts.append(logged_scalars(micro, device))
                del micro, batch
            out = parts[0] if self.accum == 1 else {k: torch.stack([p[k] for p in parts]).mean() for k in parts[0]}
            step += 1
            self.guard.observe(step, out["loss"], self.guard.step_grad_norm(self.engine))  # no host sync
            bar.update(1)
            if step in self.snapshot_steps:
                self._refuse_nonfinite(step, f"weights of the step-{step} snapshot")
            if self.on_step is not None:
                self.on_step(step)
            if step % self.args.log_every == 0 or step == self.args.max_steps:
                self.guard.check(step, self.last_checkpoint)
                last = self._mean_over_ranks(out)
                now = time.time()
                rate = (step - logged_at[0]) * self.args.global_batch_size / max(now - logged_at[1], 1e-9)
                logged_at = (step, now)
                metrics.write({"step": step, "lr": self.scheduler.get_last_lr()[0], "elapsed_s": round(now - t0, 3),
                               "examples_per_s": round(rate, 3), "peak_memory_mb": round(peak_memory_mb(device), 1),
                               **last})
            step_seconds = max(step_seconds * 0.9, time.time() - started)  # a slowly forgetting maximum
            if self.args.stop_after is not None and step >= self.args.stop_after:
                if self.args.save_every and step % self.args.save_every == 0 and step < self.args.max_steps:
                    self._save(step)
                bar.close()
                return {"stopped_at": step, "reason": "stop_after"}
            if step >= self.args.max_steps:
                break
            stop, timed = None, False
            self.step = step
            # the ranks agree every few steps, not at every one (and at the rehearsed limit: every rank knows it)
            if self.world == 1 or step % STOP_CHECK_EVERY == 0 or step == self.args.rehearse_time_limit_at:
                stop, timed = self._stop_flags(step_seconds)
            if stop is not None:
                self._save(step)
                bar.close()
                log.warning("stopped after step %d and saved a checkpoint: %s", step, stop)
                return {"stopped_at": step, "reason": stop}
            if (self.args.save_every and step % self.args.save_every == 0) or timed:
                self._save(step)
        bar.close()
        # the last logged means; under fp16 a step the loss scaler skipped may have logged an overflowed loss, which
        # summary.json records as null (JSON holds finite numbers only; every other step was checked finite)
        final = {k: v if math.isfinite(v) else None for k, v in last.items()}
        return {"step": step, "final": final, "train_seconds": time.time() - t0}

    def unwrap(self) -> nn.Module:
        return self.engine.module
