"""A bounded oneDNN primitive cache for training on the CPU.

PyTorch runs bf16 matmuls on the CPU through oneDNN, which keeps one compiled primitive per distinct shape, with its
buffers, in a cache of ``ONEDNN_PRIMITIVE_CACHE_CAPACITY`` entries (oneDNN's default: 1,024). The vocabulary heads of
TLM and RTL run on the scored positions only (papers/dap/model.py), a row count that changes with every batch, so each
new count adds an entry until the cache is full: DAP's mini run grew from 3.2 GB at step 25 to 11.8 GB at step 1,200,
past the memory its Slurm job asked for, and VMSST's from 1.4 GB to 6.2 GB over 1,000 steps (their ``metrics.jsonl``).

:func:`bound_primitive_cache` sets a smaller capacity for the process unless its environment sets one. oneDNN reads
the variable when it creates its first primitive, so the training command line calls it before it builds a model.
Measured in DAP's mini run (figures/logs/investigations.jsonl: peak memory and speed per cache capacity). The
variable does nothing on a GPU.
"""
from __future__ import annotations

import os

VARIABLE = "ONEDNN_PRIMITIVE_CACHE_CAPACITY"
CAPACITY = 64
ONEDNN_DEFAULT = 1024  # what oneDNN uses when nothing sets the variable


def bound_primitive_cache(capacity: int = CAPACITY) -> int:
    """The capacity this process runs with: the environment's, or ``capacity``, set now."""
    return int(os.environ.setdefault(VARIABLE, str(capacity)))
