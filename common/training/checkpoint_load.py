"""Training checkpoints read back with ``torch.load(weights_only=True)``.

DeepSpeed's own checkpoint engine loads every file of a checkpoint with ``weights_only=False``: a full unpickler, so
a tampered ``*.pt`` could run code on resume. Our checkpoints hold tensors and plain containers, plus a few types
that ``weights_only`` does not know, each allowed here by name and nothing else:

* NumPy arrays (NumPy's RNG state in the client state, :mod:`common.training.rng`): ``ndarray``, ``dtype`` and the
  ``_reconstruct`` that rebuilds an array (torch's documented allowlist for NumPy arrays);
* DeepSpeed's optimizer-state records under ZeRO 1/2: its loss scaler (``LossScaler``), the ZeRO stage
  (``ZeroStageEnum``) and the address of each parameter's fragment (``fragment_address``).

Anything else in a checkpoint makes loading fail (``pickle.UnpicklingError`` naming the global).
"""
from __future__ import annotations

import importlib
from typing import Any

import numpy as np
import torch
from deepspeed.runtime.checkpoint_engine.torch_checkpoint_engine import TorchCheckpointEngine

from common.io import read_checkpoint


def allowed_globals() -> list[Any]:
    """The types (besides torch's defaults) that a training checkpoint may hold."""
    from deepspeed.runtime.fp16.loss_scaler import LossScaler
    from deepspeed.runtime.zero.config import ZeroStageEnum
    from deepspeed.utils.tensor_fragment import fragment_address

    reconstruct = importlib.import_module("numpy._core.multiarray")._reconstruct  # not in NumPy's type stubs
    return [np.ndarray, np.dtype, reconstruct, type(np.dtype(np.uint32)), LossScaler, ZeroStageEnum, fragment_address]


class WeightsOnlyCheckpointEngine(TorchCheckpointEngine):
    """DeepSpeed's torch checkpoint engine, loading with ``weights_only=True`` and :func:`allowed_globals`."""

    def load(self, path: str, map_location: Any = None) -> Any:
        """A checkpoint file; a cut or corrupt one is an error naming it (:func:`common.io.read_checkpoint`)."""
        with torch.serialization.safe_globals(allowed_globals()):
            return read_checkpoint(path, map_location=map_location)


def load_weights_only(engine: Any) -> None:
    """Make a DeepSpeed engine read its checkpoints through :class:`WeightsOnlyCheckpointEngine` (after
    ``deepspeed.initialize``; our DeepSpeed config never asks for another engine, which is refused)."""
    if type(engine.checkpoint_engine) is not TorchCheckpointEngine:
        raise TypeError(f"expected DeepSpeed's TorchCheckpointEngine, found {type(engine.checkpoint_engine).__name__}")
    engine.checkpoint_engine = WeightsOnlyCheckpointEngine(engine._config)
