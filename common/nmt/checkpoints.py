"""Loading the checkpoints fairseq writes for this plugin's models with ``torch.load(weights_only=True)``.

A fairseq checkpoint holds, besides tensors and plain containers, the run's command-line arguments as an
``argparse.Namespace``, which PyTorch's safe unpickler refuses unless allow-listed. This module allow-lists that
one class (measured: the only global a checkpoint of this plugin contains), so fairseq's own loader -- it calls
``torch.load`` with PyTorch's default ``weights_only=True`` -- reads our checkpoints without
``TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD``. A checkpoint holding anything else still fails, with PyTorch's message.
The allow-list is process-wide and only ever grows (``torch.serialization.safe_globals`` as a context manager would
remove the class on exit, even where the plugin had allowed it before). No fairseq import here: the
``fairseq-encoder`` embedder reads these checkpoints without loading fairseq.
"""
from __future__ import annotations

import argparse

import torch

SAFE_GLOBALS = [argparse.Namespace]


def allow_fairseq_checkpoints() -> None:
    torch.serialization.add_safe_globals(SAFE_GLOBALS)
