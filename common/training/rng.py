"""The random-number state of one rank, captured into a checkpoint and restored on resume, so a resumed run
draws the same dropout masks, masking positions and samples as an uninterrupted one.

A rank's state is Python's, NumPy's, the CPU generator's and the generator of the rank's CUDA device (dropout on
a GPU draws from the CUDA generator, not the CPU one; ``None`` without CUDA). The trainer saves one state per
rank; on resume each rank restores its own.
"""
from __future__ import annotations

import random
from typing import Any

import numpy as np
import torch

KEYS = ("python", "numpy", "torch", "cuda")


def capture() -> dict[str, Any]:
    return {"python": random.getstate(), "numpy": np.random.get_state(), "torch": torch.get_rng_state(),
            "cuda": torch.cuda.get_rng_state() if torch.cuda.is_available() else None}


def restore(state: dict[str, Any]) -> None:
    """Restore a state from :func:`capture` (a checkpoint written before the CUDA states were saved has none: the
    CUDA generators are then left as they are)."""
    random.setstate(state["python"])
    np.random.set_state(state["numpy"])
    torch.set_rng_state(state["torch"])
    if state.get("cuda") is not None and torch.cuda.is_available():
        torch.cuda.set_rng_state(state["cuda"])
