"""One training loop on the DeepSpeed engine, for every paper and every scale.

The same code runs single-process on CPU, several CPU processes (gloo) and multi-GPU
(NCCL, bf16/fp16): only ``TrainingArguments`` and the launcher differ. The model is any
``nn.Module`` whose ``forward(**batch)`` returns a dict with a scalar ``loss`` (other
scalar entries are logged); a model with an ``on_step(step)`` method is told the step
before each one (a schedule inside the loss, e.g. VMSST's KL annealing, resumes exactly).
``collate(examples, generator)`` turns raw examples into a batch; its generator is seeded by
(seed, step, rank), so random masking is reproduced exactly after a resume.

Checkpoints (``engine.save_checkpoint``) every ``save_every`` steps hold the model,
optimizer, scheduler and RNG states; a killed run restarted with the same arguments
continues from the last one and ends with the same parameters and metrics as an
uninterrupted run. Metrics go to ``metrics.jsonl``; the resolved arguments are saved to
``training_args.json`` beside the checkpoints.
"""
from __future__ import annotations

import json
import logging
import math
import random
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import MISSING, asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from common.distributed import ensure_process_group_env, process_group_teardown
from common.io import write_json
from common.training.sampler import StepSampler

log = logging.getLogger(__name__)


PRECISIONS = ("fp32", "bf16", "fp16", "amp_bf16", "amp_fp16")
LR_SCHEDULES = ("linear", "cosine", "constant", "inverse_sqrt")
OPTIMIZERS = ("adamw", "adafactor")


@dataclass(kw_only=True)
class LaunchArguments:
    """Command-line arguments every training script takes besides its own (HF ``run_glue.py`` style)."""

    max_steps: int | None = field(default=None, metadata={"help": "override the config's max_steps"})
    stop_after: int | None = field(default=None, metadata={"help": "stop (as if killed) after this step; for tests"})
    snapshot_steps: list[int] = field(default_factory=list, metadata={
        "help": "also save the model at these steps, under snapshots/step<N>/ (a learning curve: evaluate each "
                "with python -m common.eval)"})
    local_rank: int = field(default=-1,
                            metadata={"help": "set by the deepspeed launcher (the trainer reads LOCAL_RANK)"})


@dataclass
class TrainingArguments:
    output_dir: str
    max_steps: int
    global_batch_size: int
    learning_rate: float
    warmup_steps: int = 0
    lr_schedule: str = "linear"  # linear | cosine | constant | inverse_sqrt (after warm-up)
    optimizer: str = "adamw"  # adamw | adafactor (VMSST section 6.4)
    gradient_checkpointing: bool = False  # recompute activations in the backward pass (less memory, more time)
    weight_decay: float = 0.0
    adam_betas: tuple[float, float] = (0.9, 0.999)  # AdamW's (HICTL Table 9: (0.9, 0.98) for its base model)
    adam_epsilon: float = 1e-8  # (HICTL Table 9: 1e-6)
    grad_clip: float = 1.0
    seed: int = 1
    save_every: int = 0  # 0: only the final checkpoint
    keep_checkpoints: int = 2
    log_every: int = 10
    # fp32 | bf16 | fp16 (weights in that dtype, DeepSpeed's mixed-precision optimizer) |
    # amp_bf16 | amp_fp16 (fp32 weights, torch autocast in the forward pass: PyTorch AMP,
    # needed where fp32 state must survive, e.g. MoCo's momentum encoders and queues)
    precision: str = "fp32"
    zero_stage: int = 0
    grad_accum: int = 1
    dist_backend: str | None = None  # gloo on CPU, nccl on GPU when None
    stop_after: int | None = None  # testing hook: exit (as if killed) after this step

    @classmethod
    def from_config(cls, training: dict, *, output_dir: str, seed: int, **overrides) -> TrainingArguments:
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
        if self.precision not in PRECISIONS:
            raise ValueError(f"unknown precision {self.precision!r}")


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
            return (max(1, args.warmup_steps) / (step + 1)) ** 0.5
        progress = (step - args.warmup_steps) / max(1, args.max_steps - args.warmup_steps)
        if args.lr_schedule == "cosine":
            return 0.5 * (1 + math.cos(math.pi * min(1.0, progress)))
        return max(0.0, 1.0 - progress)

    return f


def enable_activation_checkpointing(model: nn.Module) -> None:
    """Recompute activations in the backward pass in every sub-module that supports it (HF models:
    ``activation_checkpointing_enable``, formerly ``gradient_checkpointing_enable``; our own decoders too)."""
    for m in model.modules():
        enable = getattr(m, "activation_checkpointing_enable", None) or getattr(m, "gradient_checkpointing_enable",
                                                                              None)
        if enable is not None:
            enable()


def build_optimizer(model: nn.Module, args: TrainingArguments) -> torch.optim.Optimizer:
    groups = _param_groups(model, args.weight_decay)
    if args.optimizer == "adafactor":  # Shazeer & Stern 2018 (torch.optim.Adafactor); the schedule sets the lr
        return torch.optim.Adafactor(groups, lr=args.learning_rate)
    # fused: one kernel over all parameters instead of one op per tensor and step (CPU and CUDA; 4x faster
    # updates for MiniLM on CPU, measured by bench/train_step.py)
    return torch.optim.AdamW(groups, lr=args.learning_rate, betas=tuple(args.adam_betas), eps=args.adam_epsilon,
                             fused=True)


def _param_groups(model: nn.Module, weight_decay: float) -> list[dict]:
    decay, no_decay = [], []
    for name, p in model.named_parameters():
        if not p.requires_grad:
            continue
        (no_decay if p.ndim < 2 or "LayerNorm" in name or name.endswith("bias") else decay).append(p)
    return [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}]


def deepspeed_config(args: TrainingArguments, world_size: int) -> dict:
    if args.global_batch_size % (world_size * args.grad_accum):
        raise ValueError(f"global batch {args.global_batch_size} is not divisible by "
                         f"world size {world_size} x grad_accum {args.grad_accum}")
    return {
        "train_batch_size": args.global_batch_size,
        "train_micro_batch_size_per_gpu": args.global_batch_size // (world_size * args.grad_accum),
        "gradient_accumulation_steps": args.grad_accum,
        "gradient_clipping": args.grad_clip,
        "bf16": {"enabled": args.precision == "bf16"},
        "fp16": {"enabled": args.precision == "fp16", "initial_scale_power": 16},
        "torch_autocast": {"enabled": args.precision.startswith("amp_"),
                           "dtype": "float16" if args.precision == "amp_fp16" else "bfloat16"},
        "zero_optimization": {"stage": args.zero_stage},
        "zero_allow_untested_optimizer": True,
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


def forget_deepspeed_groups() -> None:
    """Drop DeepSpeed's cached clone of the world group once the group is destroyed.

    DeepSpeed 0.19 clones the world group once per process (``deepspeed.utils.groups._WORLD_GROUP``) and
    keeps it; a second Trainer in the same process (a benchmark's rounds, a notebook) would otherwise hand
    the destroyed clone to ``get_global_rank`` and fail ("Group ... is not registered")."""
    from deepspeed.utils import groups

    groups._WORLD_GROUP = None


class Trainer:
    def __init__(self, model: nn.Module, examples: Sequence[Any], collate: Callable[[list, torch.Generator], dict],
                 args: TrainingArguments, config_to_save: dict | None = None,
                 on_step: Callable[[int], None] | None = None):
        """``on_step(step)`` runs on every rank after each optimizer step (e.g. saving a snapshot on rank 0)."""
        self.model, self.examples, self.collate, self.args = model, examples, collate, args
        self.on_step = on_step
        self.config_to_save = config_to_save or {}
        self.out = Path(args.output_dir)
        self.ckpt_dir = self.out / "checkpoints"

    # ------------------------------------------------------------------ setup
    def _init_engine(self):
        import deepspeed

        log.info("launcher: %s", ensure_process_group_env())
        backend = self.args.dist_backend or ("nccl" if torch.cuda.is_available() else "gloo")
        if backend == "gloo":
            skip_shm_comm_build()
        deepspeed.init_distributed(dist_backend=backend)
        import torch.distributed as dist

        self.rank, self.world = dist.get_rank(), dist.get_world_size()
        seed_everything(self.args.seed + self.rank)
        if self.args.gradient_checkpointing:
            enable_activation_checkpointing(self.model)
        optimizer = build_optimizer(self.model, self.args)
        scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lr_lambda(self.args))
        engine, _, _, _ = deepspeed.initialize(model=self.model, optimizer=optimizer, lr_scheduler=scheduler,
                                               config=deepspeed_config(self.args, self.world))
        if self.world == 1:  # nothing to all-reduce: skip DeepSpeed's flatten / reduce / copy-back of every gradient
            engine.enable_backward_allreduce = False
        self.engine, self.scheduler = engine, scheduler
        self.sampler = StepSampler(len(self.examples), self.args.global_batch_size, self.args.seed,
                                   self.rank, self.world)

    def _resume(self) -> int:
        if not (self.ckpt_dir / "latest").exists():
            return 0
        _, client = self.engine.load_checkpoint(str(self.ckpt_dir))
        step = int(client["step"])
        rng = client["rng"][min(self.rank, len(client["rng"]) - 1)] if client.get("rng_per_rank") else client["rng"]
        torch.set_rng_state(rng["torch"])
        random.setstate(rng["python"])
        np.random.set_state(rng["numpy"])
        log.info("resumed from step %d", step)
        if self.rank == 0:  # drop log lines written after the checkpoint
            metrics = self.out / "metrics.jsonl"
            if metrics.exists():
                keep = [l for l in metrics.read_text().splitlines() if json.loads(l)["step"] <= step]
                metrics.write_text("".join(l + "\n" for l in keep))
        return step

    def _save(self, step: int) -> None:
        import torch.distributed as dist

        state = {"torch": torch.get_rng_state(), "python": random.getstate(), "numpy": np.random.get_state()}
        states = [None] * self.world
        dist.all_gather_object(states, state)
        self.engine.save_checkpoint(str(self.ckpt_dir), tag=f"step{step:08d}",
                                    client_state={"step": step, "rng": states, "rng_per_rank": True})
        if self.rank == 0:
            tags = sorted(p for p in self.ckpt_dir.glob("step*") if p.is_dir())
            for old in tags[: -self.args.keep_checkpoints]:
                shutil.rmtree(old, ignore_errors=True)
        dist.barrier()

    def _mean_over_ranks(self, scalars: dict[str, torch.Tensor]) -> dict[str, float]:
        """Logged losses are means over ranks, so a log means the same at any world size."""
        import torch.distributed as dist

        names = sorted(scalars)
        values = torch.stack([scalars[n].detach().float().cpu() for n in names])
        if self.world > 1:
            dist.all_reduce(values)
            values /= self.world
        return dict(zip(names, values.tolist()))

    # ------------------------------------------------------------------ loop
    def _check_resumable(self) -> None:
        """Refuse to resume checkpoints written with other training arguments (a changed config
        would otherwise continue a stale run silently)."""
        saved = self.out / "training_args.json"
        if not (self.ckpt_dir / "latest").exists() or not saved.exists():
            return
        ignore = {"stop_after", "output_dir"}
        old = {k: v for k, v in json.loads(saved.read_text())["training_arguments"].items() if k not in ignore}
        new = {k: v for k, v in json.loads(json.dumps(asdict(self.args))).items() if k not in ignore}  # as saved
        # an argument added after the checkpoint was written counts as its default
        defaults = json.loads(json.dumps({f.name: f.default for f in fields(TrainingArguments)
                                          if f.default is not MISSING}))
        changed = sorted(k for k in new if old.get(k, defaults.get(k)) != new[k])
        if changed:
            raise RuntimeError(f"{self.ckpt_dir} holds a run with other training arguments ({', '.join(changed)}); "
                               "delete that folder to start over, or restore the arguments to resume")

    def train(self) -> dict:
        """Train to ``max_steps`` (or ``stop_after``), resuming from the newest checkpoint; the
        process group is torn down on every exit path (``process_group_teardown``)."""
        try:
            with process_group_teardown():
                self._init_engine()
                return self._train()
        finally:
            forget_deepspeed_groups()

    def _train(self) -> dict:
        self._check_resumable()
        if self.rank == 0:
            self.out.mkdir(parents=True, exist_ok=True)
            write_json(self.out / "training_args.json",
                       {"training_arguments": asdict(self.args), "world_size": self.world, **self.config_to_save})
        step = self._resume()
        from tqdm import tqdm

        bar = tqdm(total=self.args.max_steps, initial=step, disable=self.rank != 0, mininterval=5, desc="train")
        t0, last = time.time(), {}
        device = self.engine.device
        self.engine.train()
        on_step = getattr(self.unwrap(), "on_step", None)  # models whose loss depends on the step (KL annealing)
        while step < self.args.max_steps:
            if on_step is not None:
                on_step(step)
            gen = torch.Generator().manual_seed(self.args.seed * 7919 + step * 104729 + self.rank)
            batch = self.collate([self.examples[i] for i in self.sampler.local_indices(step)], gen)
            batch = {k: v.to(device) if torch.is_tensor(v) else v for k, v in batch.items()}
            out = self.engine(**batch)
            self.engine.backward(out["loss"])
            self.engine.step()
            step += 1
            bar.update(1)
            if self.on_step is not None:
                self.on_step(step)
            if step % self.args.log_every == 0 or step == self.args.max_steps:
                last = self._mean_over_ranks({k: v for k, v in out.items() if torch.is_tensor(v) and v.ndim == 0})
            if self.rank == 0 and (step % self.args.log_every == 0 or step == self.args.max_steps):
                rec = {"step": step, "lr": self.scheduler.get_last_lr()[0], "elapsed_s": round(time.time() - t0, 3),
                       **last}
                with open(self.out / "metrics.jsonl", "a", encoding="utf-8") as fh:
                    fh.write(json.dumps(rec) + "\n")
            if self.args.save_every and step % self.args.save_every == 0 and step < self.args.max_steps:
                self._save(step)
            if self.args.stop_after is not None and step >= self.args.stop_after:
                bar.close()
                return {"stopped_at": step}
        bar.close()
        return {"step": step, "final": last, "train_seconds": time.time() - t0}

    def unwrap(self) -> nn.Module:
        return self.engine.module
