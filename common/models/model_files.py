"""A saved model folder's files, checked before anything is computed with it: every JSON file parses (config,
tokenizer, ``embedder.json``), every weights file reads (``*.safetensors``, ``pytorch_model*.bin``) and every tensor
in them is finite. A model whose tensor bytes were corrupted loads without complaint and embeds every sentence as
NaN, which a retrieval accuracy or a mining F1 turns into a number that looks like a result; here it is an error
naming the file and the tensor. Subfolders are checked too (a dual encoder's ``xx/`` and ``en/``); training
checkpoints (``*.pt``: a fairseq stage's) are not: the one an embedder loads is checked when it is read
(:mod:`common.nmt.embedder`).
"""
from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

import torch

from common.io import DataFormatError, iter_safetensors, read_checkpoint, read_json


def require_finite_tensors(tensors: Iterable[tuple[str, torch.Tensor]], path: str | os.PathLike[str]) -> None:
    """Raise :class:`DataFormatError` naming ``path`` and the first of the (name, tensor) pairs holding a NaN or an
    infinity."""
    for name, tensor in tensors:
        if not torch.is_tensor(tensor) or not tensor.is_floating_point():
            continue
        bad = int((~tensor.isfinite()).sum())
        if bad:
            raise DataFormatError(path, None, f"tensor {name!r}: {bad} of {tensor.numel()} values are not finite "
                                              "(NaN or inf)")


def weights_file(path: Path) -> bool:
    return path.suffix == ".safetensors" or (path.name.startswith("pytorch_model") and path.suffix == ".bin")


def check_model_folder(folder: str | os.PathLike[str]) -> None:
    """Check every JSON and weights file under ``folder`` (module docstring); the first bad one raises a
    :class:`DataFormatError` naming it (and the line of invalid JSON, or the tensor that is not finite)."""
    for path in sorted(p for p in Path(folder).rglob("*") if p.is_file()):
        if path.suffix == ".json":
            read_json(path)
        elif path.suffix == ".safetensors":  # a tensor at a time: a model's size in memory at most once
            require_finite_tensors(iter_safetensors(path), path)
        elif weights_file(path):
            state = read_checkpoint(path)
            require_finite_tensors(state.items() if isinstance(state, dict) else [], path)
