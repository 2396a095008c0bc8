"""The embedder protocol: every model kind the repository saves turns sentences into vectors the same way.

``encode(sentences, lang) -> (N, D)`` float32 on the CPU, rows in input order. ``lang`` is the
language of the sentences (ISO 639-1 or -3; only kinds with language-specific parts look at it).

A saved model folder says its kind in ``embedder.json`` (``{"kind": ..., "max_length": ...}`` plus
kind-specific fields), written by :func:`save_embedder_meta`; :func:`load_embedder` reads it and
calls the loader registered for that kind in ``EMBEDDERS``. Kinds:

* ``sentence-encoder`` -- one HF encoder + pooling for every language (DAP, TR, HICTL ...). The
  folder is also a sentence-transformers folder, and :meth:`Embedder.hf_model_dir` is set, so
  tasks that fine-tune the whole encoder (XNLI) can load it;
* ``dual-encoder`` -- MoCo-BERT: a language-specific encoder per side, English (``en/``) and the
  other language(s) (``xx/``), each a ``sentence-encoder`` folder;
* ``fairseq-encoder`` -- the encoder of an NMT model fine-tuned with fairseq (HICTL section 3.2), registered by
  :mod:`common.nmt.embedder`, which ``PLUGINS`` imports the first time a folder of that kind is read.

Other kinds register with :func:`register_embedder`. Encoding runs on the GPU when one is present.
"""
from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import save_file
from torch import nn
from transformers import PreTrainedTokenizerBase

from common.io import read_json, read_safetensors, write_json
from common.languages import ENGLISH
from common.models.embedder_record import EmbedderRecord
from common.models.encoder import SentenceEncoder, encode_sentences
from common.models.tokenizer import load_tokenizer
from common.records import check

META = "embedder.json"


class NotApplicable(RuntimeError):
    """A task cannot be run on this kind of model (e.g. cross-encoder fine-tuning of a dual encoder)."""


def default_device() -> torch.device:
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


@dataclass
class Embedder:
    """Base class of the embedders; subclasses implement :meth:`encode`."""

    kind: str
    path: Path
    max_length: int
    batch_size: int = 128
    device: torch.device | None = None
    precision: str = "fp32"  # "bf16": encode under autocast (CPU AMX, GPU tensor cores)

    def encode(self, sentences: list[str], lang: str) -> torch.Tensor:  # pragma: no cover - interface
        raise NotImplementedError

    def hf_model_dir(self) -> Path:
        """The folder of one HF encoder + tokenizer that a fine-tuning task can load."""
        raise NotApplicable(f"{self.path}: a '{self.kind}' model has no single HF encoder to fine-tune")


class SentenceEncoderEmbedder(Embedder):
    """One HF encoder + pooling, optionally followed by a saved linear map (``projection.safetensors``, e.g.
    VMSST's semantic mean)."""

    def __init__(self, path: Path, meta: dict[str, Any], batch_size: int = 128, device: torch.device | None = None,
                 precision: str = "fp32"):
        super().__init__("sentence-encoder", Path(path), meta["max_length"], batch_size, device or default_device(),
                         precision)
        self.encoder = SentenceEncoder.load(self.path).to(self.device)
        self.tokenizer = load_tokenizer(self.path)
        projection = meta.get("projection")
        self.projection = load_projection(self.path / projection).to(self.device) if projection else None

    def encode(self, sentences: list[str], lang: str) -> torch.Tensor:
        return encode_sentences(self.encoder, self.tokenizer, sentences, batch_size=self.batch_size,
                                max_length=self.max_length, device=self.device, precision=self.precision,
                                projection=self.projection)

    def hf_model_dir(self) -> Path:
        return self.path


class DualEncoderEmbedder(Embedder):
    """English sentences go to ``en/``, every other language to ``xx/`` (MoCo-BERT, section 2)."""

    def __init__(self, path: Path, meta: dict[str, Any], batch_size: int = 128, device: torch.device | None = None,
                 precision: str = "fp32"):
        super().__init__("dual-encoder", Path(path), meta["max_length"], batch_size, device or default_device(),
                         precision)
        self.sides = {side: SentenceEncoderEmbedder(self.path / side, meta, batch_size, self.device, precision)
                      for side in ("xx", "en")}

    def encode(self, sentences: list[str], lang: str) -> torch.Tensor:
        return self.sides["en" if lang in ENGLISH else "xx"].encode(sentences, lang)


Loader = Callable[..., Embedder]
EMBEDDERS: dict[str, Loader] = {"sentence-encoder": SentenceEncoderEmbedder, "dual-encoder": DualEncoderEmbedder}
# kinds whose loader lives with its model code (and heavier imports), registered when that module is imported
PLUGINS: dict[str, str] = {"fairseq-encoder": "common.nmt.embedder"}


def register_embedder(kind: str, loader: Loader) -> None:
    if kind in EMBEDDERS and EMBEDDERS[kind] is not loader:
        raise ValueError(f"embedder kind {kind!r} is already registered")
    EMBEDDERS[kind] = loader


def save_embedder_meta(model_dir: str | Path, kind: str, max_length: int, **extra: Any) -> None:
    """Write ``embedder.json`` (after the model files, so its presence marks a complete folder)."""
    if kind not in EMBEDDERS:
        raise ValueError(f"unknown embedder kind {kind!r}; registered: {sorted(EMBEDDERS)}")
    path = Path(model_dir) / META
    meta = {"kind": kind, "max_length": max_length, **extra}
    check(meta, EmbedderRecord, path)
    write_json(path, meta)  # atomic: the folder's completeness mark


def read_embedder_meta(model_dir: str | Path) -> dict[str, Any]:
    path = Path(model_dir) / META
    if not path.exists():
        raise FileNotFoundError(f"{path}: no embedder.json; not a model folder written by this repository")
    meta: dict[str, Any] = read_json(path)
    check(meta, EmbedderRecord, path)  # every field typed: an error names the file and the field
    if meta.get("kind") in PLUGINS:
        importlib.import_module(PLUGINS[meta["kind"]])
    if meta.get("kind") not in EMBEDDERS:
        raise ValueError(f"{path}: unknown embedder kind {meta.get('kind')!r}; registered: {sorted(EMBEDDERS)}")
    return meta


def load_embedder(model_dir: str | Path, batch_size: int = 128, device: torch.device | str | None = None,
                  precision: str = "fp32") -> Embedder:
    """The embedder of a saved model folder, whatever its kind."""
    meta = read_embedder_meta(model_dir)
    return EMBEDDERS[meta["kind"]](Path(model_dir), meta, batch_size, torch.device(device) if device else None,
                                   precision)


def load_projection(path: Path) -> nn.Linear:
    """A bias-free linear map saved with :func:`save_sentence_encoder` (``weight``: (out, in))."""
    weight = read_safetensors(path)["weight"]
    layer = nn.Linear(weight.shape[1], weight.shape[0], bias=False)
    layer.weight.data.copy_(weight)
    return layer.eval()


def save_sentence_encoder(encoder: SentenceEncoder, tokenizer: PreTrainedTokenizerBase, out_dir: str | Path,
                          max_length: int, projection: nn.Linear | None = None) -> None:
    """A ``sentence-encoder`` folder: HF model + tokenizer + sentence-transformers files + embedder.json, and the
    optional bias-free ``projection`` applied after pooling (``projection.safetensors``)."""
    encoder.save(out_dir, tokenizer, max_seq_length=max_length)
    extra = {}
    if projection is not None:
        weight = projection.weight.detach().float().cpu().contiguous()
        save_file({"weight": weight}, str(Path(out_dir) / "projection.safetensors"))
        extra["projection"] = "projection.safetensors"
    save_embedder_meta(out_dir, "sentence-encoder", max_length=max_length, pooling=encoder.pooling, **extra)


def save_dual_encoder(encoders: dict[str, tuple[SentenceEncoder, object]], out_dir: str | Path,
                      max_length: int) -> None:
    """A ``dual-encoder`` folder: ``xx/`` and ``en/`` sentence-encoder folders, then embedder.json."""
    for side, (encoder, tokenizer) in encoders.items():
        save_sentence_encoder(encoder, tokenizer, Path(out_dir) / side, max_length)
    save_embedder_meta(out_dir, "dual-encoder", max_length=max_length, sides=sorted(encoders))
