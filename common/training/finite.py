"""Finite or stop: a training run whose loss, gradient norm or weights stop being finite stops, names the step, and
never writes a checkpoint or a model with non-finite weights.

A bf16 run that diverges on day two of a cluster job would otherwise train on NaN weights, save them, and have them
scored. So each step the trainer hands :class:`FiniteGuard` the step's loss and the gradient norm that gradient
clipping computed anyway (:meth:`FiniteGuard.observe`): a few element-wise operations on the device, no host sync.
The guard keeps, on the device, the first step whose loss or gradient norm was NaN or infinite, with those two
values. The trainer asks it (:meth:`FiniteGuard.check`: one sync, a minimum over ranks) at every logging step and
before every checkpoint and snapshot, and checks the weights themselves before it writes any
(:func:`require_finite_weights`). A non-finite value raises :class:`TrainingDiverged`, whose message names the
step and the last good checkpoint: the newest one, since none is written after a non-finite step.

fp16: DeepSpeed's dynamic loss scaling (``torch.amp.GradScaler``, :mod:`common.precision`) skips a step whose scaled
gradients overflowed and halves the scale. Such a step changes no weight and is no error: the guard leaves it to the
scaler and counts skipped steps in a row (a step was skipped when the scale fell). More than
``MAX_SKIPPED_STEPS`` in a row stops the run: the scale has then fallen by 2**21 (from 65,536 to 1/32), which no
overflow of a run that is still finite needs; a healthy run skips a few steps at its start and one now and then.
"""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from torch import nn

from common.distributed.collectives import max_over_ranks

MAX_SKIPPED_STEPS = 20  # fp16: consecutive steps the loss scaler may skip before the run is stopped
NONE = 2**62  # "no such step" in the guard's step records (a minimum over ranks keeps a real step)


Newest = Callable[[], Path | None]  # the run's newest checkpoint, asked only when the run is stopped


class TrainingDiverged(RuntimeError):
    """The run stopped on a non-finite loss, gradient norm or weight; the message names the step and the last good
    checkpoint."""


def last_good(newest: Newest) -> str:
    checkpoint = newest()
    return (f"the last good checkpoint is {checkpoint} (a rerun resumes from it)" if checkpoint is not None
            else "no checkpoint was saved before it")


class FiniteGuard:
    """The device-side record of the first non-finite step of a run (module docstring). ``scaler``: fp16's
    ``GradScaler`` (DeepSpeed's ``torch_autocast_z0_gradscaler``), whose skipped steps are counted, not refused."""

    def __init__(self, device: torch.device, scaler: Any = None, max_skipped: int = MAX_SKIPPED_STEPS):
        self.scaler, self.max_skipped = scaler, max_skipped
        self.first = torch.full((), NONE, dtype=torch.int64, device=device)  # the first non-finite step
        self.values = torch.zeros(3, device=device)  # (3,): its loss, gradient norm, and 1 where a norm was given
        self.skipped_run = torch.zeros((), dtype=torch.int64, device=device)  # fp16: steps skipped in a row
        self.too_many = torch.full((), NONE, dtype=torch.int64, device=device)  # the step that made them too many
        self._scale: torch.Tensor | None = None  # fp16: the loss scale after the last step
        self.grad_norm: torch.Tensor | None = None  # set by the clipping hook (watch_clipping), read by observe

    def watch_clipping(self, engine: Any) -> None:
        """Clip with :func:`common.training.clipping.clip_grad_norm_foreach` in place of DeepSpeed's per-parameter loop
        (zero_stage 0: ``clip_fp32_gradients``, whose norm DeepSpeed drops; the same formula, its norm kept). Under
        ZeRO the optimizer clips its partitions and keeps the norm itself (``get_global_grad_norm``). Without
        clipping no norm is computed, and only the loss is observed."""
        if engine.gradient_clipping() <= 0 or engine.zero_optimization():
            return
        from common.training.clipping import clip_grad_norm_foreach

        def clip() -> None:
            self.grad_norm = clip_grad_norm_foreach(engine.module.parameters(), engine.gradient_clipping())

        engine.clip_fp32_gradients = clip

    def step_grad_norm(self, engine: Any) -> torch.Tensor | float | None:
        """The gradient norm of the step just taken (None where no clipping computed one)."""
        norm = self.grad_norm if self.grad_norm is not None else engine.get_global_grad_norm()
        self.grad_norm = None
        return norm if engine.gradient_clipping() > 0 else None

    def _skipped(self) -> torch.Tensor | None:
        """() bool on the device: did the fp16 scaler skip the step just taken (its scale fell)? None without one."""
        scale = getattr(self.scaler, "_scale", None)  # GradScaler's device tensor (no get_scale(): that syncs)
        if scale is None:
            return None
        before = self._scale if self._scale is not None else torch.full_like(scale, self.scaler._init_scale)
        self._scale = scale.detach().clone()
        return scale < before

    def observe(self, step: int, loss: torch.Tensor, grad_norm: torch.Tensor | float | None = None) -> None:
        """Record step ``step`` (1-based: the number of steps taken) without a host sync."""
        loss = loss.detach().float().reshape(())
        given = torch.full((), float(grad_norm is not None), device=loss.device)
        norm = (torch.as_tensor(grad_norm, dtype=torch.float32, device=loss.device).reshape(())
                if grad_norm is not None else torch.zeros((), device=loss.device))
        bad = ~loss.isfinite() | ~norm.isfinite()
        skipped = self._skipped()
        if skipped is not None:  # fp16: the scaler's own business, within a bounded run
            bad = bad & ~skipped
            self.skipped_run = torch.where(skipped, self.skipped_run + 1, 0)
            over = (self.skipped_run > self.max_skipped) & (self.too_many == NONE)
            self.too_many = torch.where(over, step, self.too_many)
        new = bad & (self.first == NONE)
        self.first = torch.where(new, step, self.first)
        self.values = torch.where(new, torch.stack([loss, norm, given]), self.values)

    def check(self, step: int, newest: Newest) -> None:
        """Raise :class:`TrainingDiverged` if any rank saw a non-finite step so far (one host sync; every rank calls
        it at the same steps). ``newest()``: the newest checkpoint, named in the message as the last good one."""
        mine = torch.stack([self.first, self.too_many])  # (2,) int64
        first, too_many = (-max_over_ranks(-mine)).tolist()  # the earliest over ranks
        if first == NONE and too_many == NONE:
            return
        if first != NONE and (too_many == NONE or first <= too_many):
            what = "on another rank"
            if int(self.first) == first:
                loss, norm, given = self.values.tolist()
                what = f"loss {loss}" + (f", gradient norm {norm}" if given else "")
            reason = f"a non-finite value at step {first} ({what})"
        else:
            reason = (f"fp16 loss scaling skipped more than {self.max_skipped} steps in a row (up to step {too_many}): "
                      "the loss or its gradients overflow at every scale")
        raise TrainingDiverged(f"training stopped at step {step} on {reason}; {last_good(newest)}")


def require_finite_weights(module: nn.Module, step: int, newest: Newest, what: str = "weights") -> None:
    """Raise :class:`TrainingDiverged` naming the first parameter or floating-point buffer of ``module`` that holds a
    NaN or an infinity (one host sync), before anything is written from it."""
    named = [(n, t) for n, t in [*module.named_parameters(), *module.named_buffers()] if t.is_floating_point()]
    if not named:
        return
    flags = torch.stack([t.detach().isfinite().all() for _, t in named])  # (P,) bool
    if bool(flags.all()):
        return
    bad = [n for (n, _), ok in zip(named, flags.tolist()) if not ok]
    raise TrainingDiverged(f"training stopped at step {step}: the {what} hold non-finite values ({len(bad)} "
                           f"tensors, the first {bad[0]!r}), so nothing is saved from them; {last_good(newest)}")

