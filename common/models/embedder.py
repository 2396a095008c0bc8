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
from torch import nn
from transformers import PreTrainedTokenizerBase

from common.io import read_json, read_safetensors, write_json
from common.languages import ENGLISH
from common.models import st_format
from common.models.embedder_record import EmbedderRecord
from common.models.encoder import SentenceEncoder, encode_sentences
from common.models.model_files import check_model_folder
from common.models.st_encoder import load_module_encoder, prompt_length
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

    on_batch: Callable[[int], None] | None = None  # told each encoded batch's size (evaluation progress)

    def encode(self, sentences: list[str], lang: str) -> torch.Tensor:  # pragma: no cover - interface
        raise NotImplementedError

    def use_prompt(self, prompt: str | None) -> None:
        """Put ``prompt`` before every sentence (kinds without prompts accept none)."""
        if prompt:
            raise NotApplicable(f"{self.path}: a '{self.kind}' model takes no prompt")

    def hf_model_dir(self) -> Path:
        """The folder of one HF encoder + tokenizer that a fine-tuning task can load."""
        raise NotApplicable(f"{self.path}: a '{self.kind}' model has no single HF encoder to fine-tune")


class SentenceEncoderEmbedder(Embedder):
    """One HF encoder + pooling and the sentence-transformers modules after it (Dense, Normalize:
    :mod:`common.models.st_encoder`); a folder saved before projections were Dense modules keeps its
    ``projection.safetensors`` (named by embedder.json's ``projection``). The same class runs a model from outside
    the repository (``meta["pooling"]`` names a plain HF folder's pooling; ``meta["prompts"]`` is read from the
    folder). ``prompt``, when set, is put before every sentence (:meth:`use_prompt`)."""

    def __init__(self, path: Path, meta: dict[str, Any], batch_size: int = 128, device: torch.device | None = None,
                 precision: str = "fp32"):
        super().__init__("sentence-encoder", Path(path), meta["max_length"], batch_size, device or default_device(),
                         precision)
        own = (self.path / META).exists()  # a folder this repository wrote states its pooling in its modules
        loaded = load_module_encoder(self.path, None if own else meta.get("pooling"))
        self.loaded = loaded
        self.encoder = loaded.encoder.to(self.device)
        self.tokenizer = loaded.tokenizer
        projection = meta.get("projection")
        self.projection = load_projection(self.path / projection).to(self.device) if projection else None
        self.prompt: str | None = None

    def use_prompt(self, prompt: str | None) -> None:
        """Put ``prompt`` before every sentence from now on (None: no prompt)."""
        self.prompt = prompt or None
        self.encoder.prompt_length = prompt_length(self.tokenizer, self.prompt) if self.prompt else 0

    def encode(self, sentences: list[str], lang: str) -> torch.Tensor:
        if self.loaded.do_lower_case:
            sentences = [s.lower() for s in sentences]
        if self.prompt:
            sentences = [self.prompt + s for s in sentences]
        return encode_sentences(self.encoder, self.tokenizer, sentences, batch_size=self.batch_size,
                                max_length=self.max_length, device=self.device, precision=self.precision,
                                projection=self.projection, on_batch=self.on_batch)

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
        side = self.sides["en" if lang in ENGLISH else "xx"]
        side.on_batch = self.on_batch
        return side.encode(sentences, lang)


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
                          max_length: int, projection: nn.Linear | None = None, normalize: bool = False) -> None:
    """A ``sentence-encoder`` folder: HF model + tokenizer, the sentence-transformers modules Transformer, Pooling,
    then the optional bias-free ``projection`` applied after pooling as a ``Dense`` module (identity activation)
    and, where the method trains on normalised vectors (``normalize``), a ``Normalize`` module; then embedder.json.
    ``SentenceTransformer(out_dir)`` computes the vectors the evaluations score."""
    out_dir = Path(out_dir)
    encoder.save(out_dir, tokenizer, max_seq_length=max_length)
    modules = [st_format.Module("Transformer", ""), st_format.Module("Pooling", "1_Pooling")]
    if projection is not None:
        if projection.bias is not None:
            raise ValueError("the saved projection is bias-free (a linear map of the pooled vector)")
        modules.append(st_format.Module("Dense", f"{len(modules)}_Dense"))
        st_format.write_dense(out_dir / modules[-1].path, projection.weight)
    if normalize:
        modules.append(st_format.Module("Normalize", f"{len(modules)}_Normalize"))
        (out_dir / modules[-1].path).mkdir(parents=True, exist_ok=True)
    st_format.write_modules(out_dir, modules)
    save_embedder_meta(out_dir, "sentence-encoder", max_length=max_length, pooling=encoder.pooling,
                       modules=[m.name for m in modules])


def save_dual_encoder(encoders: dict[str, tuple[SentenceEncoder, object]], out_dir: str | Path,
                      max_length: int, normalize: bool = False) -> None:
    """A ``dual-encoder`` folder: ``xx/`` and ``en/`` sentence-encoder folders, a sentence-transformers ``Router``
    over them at the top (``SentenceTransformer(out_dir).encode(x, task="en")`` for English, ``task="xx"`` for every
    other language), then embedder.json."""
    out_dir = Path(out_dir)
    for side, (encoder, tokenizer) in encoders.items():
        save_sentence_encoder(encoder, tokenizer, out_dir / side, max_length,
                              normalize=normalize)
    routes = {side: [st_format.Module(m.name, f"{side}/{m.path}".rstrip("/"))
                     for m in st_format.read_modules(out_dir / side)] for side in sorted(encoders)}
    st_format.write_router(out_dir, routes)
    st_format.write_st_config(out_dir)
    save_embedder_meta(out_dir, "dual-encoder", max_length=max_length, sides=sorted(encoders))


def load_model(spec: str, *, pooling: str | None = None, max_length: int | None = None, batch_size: int = 128,
               device: torch.device | str | None = None, precision: str = "fp32") -> tuple[Embedder, dict[str, Any]]:
    """The embedder of model ``spec`` (:mod:`common.models.outside`: ``NAME@REVISION``, ``package:...`` or a folder)
    and what a results JSON records of it. A folder this repository wrote (embedder.json) loads as its kind; any
    other is a sentence-transformers or (with ``pooling``) plain Hugging Face model. ``max_length`` caps the tokens
    per sentence (default: the folder's ``max_seq_length``, else 512)."""
    from common.models import outside

    source = outside.resolve(spec)
    check_model_folder(source.folder)  # every file readable, every weight finite, before anything is computed
    described = outside.describe(source)
    if (source.folder / META).exists():
        if pooling is not None:
            raise ValueError(f"{source.folder / META}: a model folder of this repository states its pooling; "
                             "do not name another")
        embedder = load_embedder(source.folder, batch_size, device, precision)
        if max_length is not None:
            embedder.max_length = max_length
        return embedder, {**described, **read_embedder_meta(source.folder), "max_length": embedder.max_length}
    sentence = SentenceEncoderEmbedder(source.folder, {"max_length": 0, "pooling": pooling}, batch_size,
                                       torch.device(device) if device else None, precision)
    sentence.max_length = max_length or sentence.loaded.max_seq_length or 512
    return sentence, {**described, "kind": sentence.kind, "max_length": sentence.max_length,
                      **sentence.loaded.describe()}
