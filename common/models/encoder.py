"""Sentence encoders: an HF ``transformers`` model plus pooling.

``build_mlm_model`` makes a masked-LM model either from a config (from scratch: smoke and
mini scales) or with ``from_pretrained(name_or_path)`` (paper scale). Keeping the MLM head
lets TLM and DAP's RTL head reuse it; the bare encoder is ``mlm.base_model``.
``build_encoder`` makes the bare encoder only (no MLM head), for methods that never
predict tokens (MoCo-BERT); from an encoder-decoder checkpoint (T5 / mT5, VMSST's pretrained
setting) it takes the encoder stack (:func:`load_backbone`). A ``pretrained`` value ``package:<module>/<folder>`` names
model files shipped inside an installed Python package (the offline MiniLM of the mini
scale); a Hub name is read from its pinned download (:mod:`common.models.hub`); anything else is a local path.

``SentenceEncoder.save`` writes a folder that ``AutoModel.from_pretrained`` loads and that
sentence-transformers loads as ``SentenceTransformer(path)`` (modules.json + pooling config).
"""
from __future__ import annotations

import copy
import importlib.util
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn
from transformers import (
    AutoConfig,
    AutoModel,
    AutoModelForMaskedLM,
    BertConfig,
    BertForMaskedLM,
    BertModel,
    MT5EncoderModel,
    PreTrainedModel,
    PreTrainedTokenizerBase,
    T5EncoderModel,
)

from common.models.pooling import pool

log = logging.getLogger(__name__)


@dataclass
class EncoderSpec:
    """Either ``pretrained`` (a Hub name or local path) or a from-scratch BERT shape."""

    pretrained: str | None = None
    hidden_size: int = 128
    num_layers: int = 2
    num_heads: int = 2
    intermediate_size: int = 512
    max_position: int = 128
    dropout: float = 0.1
    # BERT's 0.02 leaves a from-scratch model's attention nearly uniform, so the [CLS] state
    # hardly depends on the input and a CLS-pooled contrastive loss stays at log(B) for
    # hundreds of steps (measured at smoke scale); 0.1 breaks that symmetry.
    initializer_range: float = 0.02
    # a from-scratch encoder's pretrained tokenizer (VMSST's random-init models use the mT5 vocabulary); None: a
    # WordPiece vocabulary trained on the corpus (common.models.tokenizer_sides)
    tokenizer: str | None = None


def encoder_spec(config: dict[str, Any], tokenizer_dir: str | Path | None = None) -> EncoderSpec:
    """The :class:`EncoderSpec` of a config's encoder entry. An entry with ``vocabulary`` (a pretrained vocabulary
    extended on the corpus) loads the grown model that the tokenizer rule saved beside its tokenizer
    (``tokenizer_dir``; :mod:`common.models.vocabulary`)."""
    spec = {k: v for k, v in config.items() if k != "vocabulary"}
    if config.get("vocabulary"):
        if tokenizer_dir is None or not (Path(tokenizer_dir) / "vocabulary.json").exists():
            raise FileNotFoundError(f"encoder {config.get('pretrained')!r} has an extended vocabulary: its grown model "
                                    f"is saved with its tokenizer, and {tokenizer_dir} holds none")
        spec["pretrained"] = str(tokenizer_dir)
    return EncoderSpec(**spec)


def resolve_pretrained(name: str) -> str:
    """``package:<module>/<folder>`` -> that folder of the installed package; a Hub name -> its pinned, downloaded
    folder (:func:`common.models.hub.local_folder`); a local path -> itself."""
    from common.models import hub

    if hub.is_hub_name(name):
        return str(hub.local_folder(name))
    if not name.startswith("package:"):
        return name
    module, _, folder = name[len("package:"):].partition("/")
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        raise FileNotFoundError(f"pretrained model {name!r}: Python package {module!r} is not installed")
    path = Path(spec.origin).parent / folder
    if not (path / "config.json").exists():
        raise FileNotFoundError(f"pretrained model {name!r}: no config.json in {path}")
    return str(path)


def _bert_config(spec: EncoderSpec, vocab_size: int | None) -> BertConfig:
    if vocab_size is None:
        raise ValueError("a from-scratch encoder needs the tokenizer's vocab_size")
    return BertConfig(
        vocab_size=vocab_size, hidden_size=spec.hidden_size, num_hidden_layers=spec.num_layers,
        num_attention_heads=spec.num_heads, intermediate_size=spec.intermediate_size,
        max_position_embeddings=spec.max_position, hidden_dropout_prob=spec.dropout,
        attention_probs_dropout_prob=spec.dropout, type_vocab_size=2, initializer_range=spec.initializer_range,
    )


def build_mlm_model(spec: EncoderSpec, vocab_size: int | None = None) -> PreTrainedModel:
    if spec.pretrained:
        log.info("loading pretrained encoder %s", spec.pretrained)
        path = resolve_pretrained(spec.pretrained)
        model = AutoModelForMaskedLM.from_pretrained(path)
        keep_pooler(model.base_model, path)
        return model
    return BertForMaskedLM(_bert_config(spec, vocab_size))


POOLER = ("pooler.dense.weight", "pooler.dense.bias")


def checkpoint_pooler(path: str | Path) -> dict[str, torch.Tensor]:
    """The pooler of the checkpoint at ``path`` (BERT's dense + tanh over [CLS], pre-trained with next-sentence
    prediction), keyed as a bare encoder saves it; empty when it has none. Read from its safetensors files, or its
    ``pytorch_model*.bin`` with ``weights_only=True``."""
    path = Path(path)
    out: dict[str, torch.Tensor] = {}

    def take(key: str, get: Callable[[str], torch.Tensor]) -> None:
        for name in POOLER:  # "pooler.dense.weight", or a task model's "bert.pooler.dense.weight"
            if key == name or (key.endswith("." + name) and key.count(".") == name.count(".") + 1):
                out[name] = get(key).clone()

    files = sorted(path.glob("*.safetensors"))
    for f in files:
        from safetensors import safe_open

        with safe_open(str(f), "pt") as handle:
            for key in handle.keys():
                take(key, handle.get_tensor)
    if not files:
        for f in sorted(path.glob("pytorch_model*.bin")):
            state = torch.load(f, map_location="cpu", weights_only=True)
            for key in state:
                take(key, state.__getitem__)
    return out if len(out) == len(POOLER) else {}


def keep_pooler(backbone: PreTrainedModel, path: str | Path) -> None:
    """Keep the checkpoint's pooler beside a bare encoder built without it (``pretrained_pooler``): training never
    runs it, and :meth:`SentenceEncoder.save` writes it back, so a sequence classifier fine-tuned on the saved model
    (XNLI, PAWS-X: ``AutoModelForSequenceClassification``) starts from the pre-trained pooled representation, as
    fine-tuning the checkpoint itself would (DAP section 4.6 following InfoXLM; BertForSequenceClassification),
    not from a randomly initialised pooler."""
    pooler = checkpoint_pooler(path)
    if pooler:
        backbone.pretrained_pooler = pooler


ENCODER_ONLY = {"t5": T5EncoderModel, "mt5": MT5EncoderModel}  # encoder-decoder type -> its encoder stack


def load_backbone(path: str | Path) -> PreTrainedModel:
    """The bare encoder saved at ``path``: BERT-like models without their pooler; the encoder stack of a T5 /
    mT5 checkpoint (whether saved whole or as ``T5EncoderModel``)."""
    config = AutoConfig.from_pretrained(path)
    if config.model_type in ENCODER_ONLY:
        return ENCODER_ONLY[config.model_type].from_pretrained(path)
    if config.is_encoder_decoder:
        raise ValueError(f"{path}: encoder-decoder model type {config.model_type!r} has no encoder-only class here; "
                         f"known: {sorted(ENCODER_ONLY)}")
    model = AutoModel.from_pretrained(path, add_pooling_layer=False)
    keep_pooler(model, path)
    return model


def build_encoder(spec: EncoderSpec, vocab_size: int | None = None) -> PreTrainedModel:
    """The bare transformer (no pooler, no MLM head), pretrained or from scratch."""
    if spec.pretrained:
        log.info("loading pretrained encoder %s", spec.pretrained)
        model = load_backbone(resolve_pretrained(spec.pretrained))
        for name in ("hidden_dropout_prob", "attention_probs_dropout_prob"):
            if hasattr(model.config, name) and getattr(model.config, name) != spec.dropout:
                log.info("pretrained %s=%s kept (config dropout %s applies to from-scratch encoders only)",
                         name, getattr(model.config, name), spec.dropout)
        return model
    return BertModel(_bert_config(spec, vocab_size), add_pooling_layer=False)


def position_ids_like(embeddings: nn.Module, input_ids: torch.Tensor) -> torch.Tensor:
    """(B, S) position ids that an encoder's own embedding layer gives ``input_ids``.

    BERT numbers positions 0..S-1; RoBERTa / XLM-R number real tokens from ``padding_idx + 1``
    (2 for XLM-R) and give padding ``padding_idx``; any embedding layer that defines
    ``create_position_ids_from_input_ids`` is asked directly."""
    if hasattr(embeddings, "create_position_ids_from_input_ids"):
        return embeddings.create_position_ids_from_input_ids(input_ids, embeddings.padding_idx)
    batch, length = input_ids.shape
    return embeddings.position_ids[:, :length].expand(batch, length).to(input_ids.device)


def mlm_head(mlm: PreTrainedModel) -> nn.Module:
    """The vocabulary prediction head of a masked-LM model (BERT: ``cls``; RoBERTa/XLM-R: ``lm_head``)."""
    for name in ("cls", "lm_head", "vocab_projector"):
        if hasattr(mlm, name):
            return getattr(mlm, name)
    raise TypeError(f"{type(mlm).__name__} has no known MLM head attribute")


def lm_head_on(head: nn.Module, vocabulary: torch.Tensor) -> nn.Module:
    """A copy of an MLM head that predicts the token ids ``vocabulary`` (V',) only, in that order: the logits of
    ``head(h)[..., vocabulary]`` with V'/V of the output projection's parameters and cost. BERT's head
    (``predictions.decoder``) and RoBERTa / XLM-R's (``decoder``) are supported."""
    owner = head.predictions if hasattr(head, "predictions") else head
    old = getattr(owner, "decoder", None)
    if not isinstance(old, nn.Linear):
        raise TypeError(f"a vocabulary subset is not supported for {type(head).__name__}")
    rows = vocabulary.to(old.weight.device)
    new = nn.Linear(old.in_features, len(rows), bias=old.bias is not None, device="meta")
    new.weight = nn.Parameter(old.weight.detach()[rows].clone())  # no random init: the RNG stream is untouched
    if old.bias is not None:
        new.bias = nn.Parameter(old.bias.detach()[rows].clone())
    owner.decoder = None  # the copy below skips the full-vocabulary projection
    try:
        copied = copy.deepcopy(head)
    finally:
        owner.decoder = old
    target = copied.predictions if hasattr(copied, "predictions") else copied
    target.decoder = new
    if isinstance(getattr(target, "bias", None), nn.Parameter):
        target.bias = new.bias  # HF ties the head's bias to its decoder's
    return copied


def add_to_checkpoint(folder: Path, tensors: dict[str, torch.Tensor]) -> None:
    """Write ``tensors`` into the ``save_pretrained`` folder's weights: its single ``model.safetensors`` (rewritten
    whole), or a shard of their own listed in the index of a sharded save."""
    from safetensors.torch import load_file, save_file

    tensors = {k: v.detach().cpu().contiguous() for k, v in tensors.items()}
    index = folder / "model.safetensors.index.json"
    if index.exists():
        save_file(tensors, str(folder / "model-pooler.safetensors"), metadata={"format": "pt"})
        meta = json.loads(index.read_text())
        meta["weight_map"].update({k: "model-pooler.safetensors" for k in tensors})
        index.write_text(json.dumps(meta, indent=2))
        return
    single = folder / "model.safetensors"
    saved = load_file(str(single))
    dtype = next(iter(saved.values())).dtype  # the saved model's (fp32 weights here)
    save_file({**saved, **{k: v.to(dtype) for k, v in tensors.items()}}, str(single), metadata={"format": "pt"})


class SentenceEncoder(nn.Module):
    """Transformer encoder + pooling; ``forward`` returns (sentence (B, D), token states (B, S, D))."""

    rowwise_forward = True  # each row is encoded alone: the trainer may chunk it (common/training/grad_cache.py)

    def __init__(self, backbone: PreTrainedModel, pooling: str = "cls"):
        super().__init__()
        self.backbone = backbone
        self.pooling = pooling

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor,
                token_type_ids: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        extra = {} if token_type_ids is None else {"token_type_ids": token_type_ids}  # T5 takes none
        out = self.backbone(input_ids=input_ids, attention_mask=attention_mask, **extra)
        hidden = out.last_hidden_state  # (B, S, D)
        return pool(hidden, attention_mask, self.pooling), hidden

    def save(self, out_dir: str | Path, tokenizer: PreTrainedTokenizerBase | None = None,
             max_seq_length: int = 128) -> None:
        """HF folder + sentence-transformers module files (Transformer, Pooling; the caller may add modules after
        them: :func:`common.models.embedder.save_sentence_encoder`) and ``config_sentence_transformers.json``."""
        from common.models import st_format

        out_dir = Path(out_dir)
        self.backbone.save_pretrained(out_dir)
        pooler = getattr(self.backbone, "pretrained_pooler", None)
        if pooler:
            add_to_checkpoint(out_dir, pooler)
        if tokenizer is not None:
            tokenizer.save_pretrained(out_dir)
        (out_dir / "1_Pooling").mkdir(parents=True, exist_ok=True)
        st_format.write_pooling(out_dir / "1_Pooling", self.backbone.config.hidden_size, self.pooling)
        st_format.write_modules(out_dir, [st_format.Module("Transformer", ""),
                                          st_format.Module("Pooling", "1_Pooling")])
        (out_dir / "sentence_bert_config.json").write_text(
            json.dumps({"max_seq_length": max_seq_length, "do_lower_case": False}, indent=2))
        st_format.write_st_config(out_dir)

    @classmethod
    def load(cls, path: str | Path) -> SentenceEncoder:
        """The Transformer and Pooling modules of a sentence-transformers folder (its ``modules.json`` says where the
        Pooling config is; ``1_Pooling`` without one). A missing Pooling config, or a mode that is not one of
        :data:`common.models.pooling.POOLING_MODES`, is an error naming the file."""
        from common.models import st_format

        path = Path(path)
        pool_dir = "1_Pooling"
        if (path / st_format.MODULES).exists():
            found = [m.path for m in st_format.read_modules(path) if m.name == "Pooling"]
            if not found:
                raise st_format.ModelFormatError(f"{path / st_format.MODULES}: no Pooling module")
            pool_dir = found[0]
        return cls(load_backbone(path), st_format.read_pooling(path / pool_dir / "config.json").mode)


PRECISION_DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}


def precision_dtype(precision: str) -> torch.dtype:
    """The dtype a ``precision`` ("fp32", "bf16" or "fp16") computes its matrix products in."""
    if precision not in PRECISION_DTYPES:
        raise ValueError(f"unknown precision {precision!r}; expected fp32, bf16 or fp16")
    return PRECISION_DTYPES[precision]


def autocast(device: str | torch.device, precision: str) -> torch.autocast:
    """``torch.autocast`` for ``precision`` "bf16" / "fp16" on ``device``; a no-op context for "fp32"."""
    dtype = precision_dtype(precision)
    return torch.autocast(torch.device(device).type, dtype=dtype, enabled=dtype != torch.float32)


def embedding_dim(encoder: nn.Module, projection: nn.Module | None = None) -> int:
    """The width of the vectors ``encoder`` (then ``projection``) outputs: the last linear map's, or the encoder's
    hidden size times its pooling modes."""
    for module in (projection, getattr(encoder, "post", None)):
        linears = [m for m in module.modules() if isinstance(m, nn.Linear)] if module is not None else []
        if linears:
            return int(linears[-1].out_features)
    pooling = getattr(encoder, "pooling", None) or getattr(getattr(encoder, "sentence", None), "pooling", "cls")
    return int(encoder.backbone.config.hidden_size) * len(str(pooling).split("+"))


def encode_sentences(encoder: nn.Module, tokenizer: PreTrainedTokenizerBase, sentences: list[str], *,
                     batch_size: int = 128, max_length: int = 128, device: str | torch.device = "cpu",
                     precision: str = "fp32", projection: nn.Module | None = None,
                     on_batch: Callable[[int], None] | None = None) -> torch.Tensor:
    """Embed sentences in length-sorted batches, longest first (the largest batch allocates first, as in
    sentence-transformers), under ``inference_mode``; returns (N, D) float32 in input order (a normal tensor).
    Each distinct sentence is embedded once (the English STS sets repeat a quarter of their 37.7k sentences).
    ``precision`` "bf16" runs the encoder under autocast (CPU AMX or GPU tensor cores); ``projection`` maps the
    pooled vector (e.g. VMSST's mean of the semantic variable); ``on_batch(n)`` is told each batch's sentence count
    (evaluation progress, :mod:`common.eval.progress`)."""
    if batch_size < 1:  # range() would step through nothing and leave ``out`` uninitialised
        raise ValueError(f"batch_size: {batch_size}; encoding needs a batch size of at least 1")
    distinct = list(dict.fromkeys(sentences))
    if len(distinct) < len(sentences):
        row = {s: i for i, s in enumerate(distinct)}
        emb = encode_sentences(encoder, tokenizer, distinct, batch_size=batch_size, max_length=max_length,
                               device=device, precision=precision, projection=projection, on_batch=on_batch)
        return emb[torch.tensor([row[s] for s in sentences], dtype=torch.long)]  # (N, D)
    encoder.eval()
    order = sorted(range(len(sentences)), key=lambda i: -len(sentences[i]))
    out: torch.Tensor | None = None
    for start in range(0, len(order), batch_size):
        idx = order[start:start + batch_size]
        # NumPy arrays, then tensors: a third faster than return_tensors="pt" (its per-element checks)
        batch = tokenizer([sentences[i] for i in idx], padding=True, truncation=True, max_length=max_length,
                          return_tensors="np")
        ids, mask = (torch.from_numpy(batch[k]).to(device) for k in ("input_ids", "attention_mask"))
        with torch.inference_mode(), autocast(device, precision):
            emb, _ = encoder(ids, mask)
            if projection is not None:
                emb = projection(emb)
            emb = emb.float().cpu()
        if out is None:  # allocated outside inference mode: callers may modify it in place
            out = torch.empty(len(sentences), emb.shape[1])
        out[idx] = emb
        if on_batch is not None:
            on_batch(len(idx))
    return out if out is not None else torch.empty(0, embedding_dim(encoder, projection))
