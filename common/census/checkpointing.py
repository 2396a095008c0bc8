"""A paper-scale training job's activation checkpointing, chosen by the census (``training.gradient_checkpointing:
auto``).

Full checkpointing runs each layer's forward twice (about 4/3 of the step's matrix work) and keeps the least;
selective keeps the matrix products' outputs and recomputes only the cheap operations (no extra matrix work) but
keeps several times more (common/training/activation_checkpointing.py). Which is cheaper depends on the job: more
kept activations need more GPUs for the same global batch (``job_gpus: memory``, common/census/shape.py), and a
job whose batch then fits no node takes the config's GPUs, where it may not fit at all. So the census counts the job
under each candidate, shapes it under each, and takes among those that fit the GPUs' memory at their shape the one
with the fewest GPU-hours, the fewer GPUs where two are within ``TIE`` of each other; full where none fits (it keeps
the least). The train rule
passes the choice to the job (``--gradient_checkpointing``); a run without a census row checkpoints fully (VMSST's
rehearsal names selective, so that the rehearsal runs both modes).

The census counts both modes on the CPU as a GPU would run them (attention dropout off: common/census/probe.py).
Its MFU for a job is the measured one of the job's recipe, whatever the mode; compiled, selective checkpointing
adds no work but the recomputed elementwise operations, which the partitioner fuses.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

CANDIDATES = ("selective", "full")
TIE = 0.02  # GPU-hours within 2 % of each other: the job on fewer GPUs (less all-reduce, a shorter queue)


def candidates(training: Mapping[str, Any]) -> tuple[Any, ...]:
    """The modes the census counts a job under: both candidates under ``auto``, else the config's own value."""
    value = training.get("gradient_checkpointing", False)
    return CANDIDATES if value == "auto" else (value,)


def choose(rows: Mapping[str, Mapping[str, Any]]) -> str:
    """The mode whose shaped census row (``fits``, ``gpus``, ``nodes``, ``gpu_hours``) is cheapest among those that
    fit the GPUs' memory at their shape; ``full`` where none does."""
    fitting = {m: r for m, r in rows.items() if r.get("fits", {}).get("a100") and "gpu_hours" in r}
    if not fitting:
        return "full"
    cheapest = min(r["gpu_hours"]["a100"] for r in fitting.values())
    near = [m for m, r in fitting.items() if r["gpu_hours"]["a100"] <= cheapest * (1 + TIE)]
    return min(near, key=lambda m: (fitting[m]["gpus"] * fitting[m]["nodes"], fitting[m]["gpu_hours"]["a100"]))
