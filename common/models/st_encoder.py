"""A sentence-transformers folder's modules as one encoder: what every embedder here runs.

``load_module_encoder(folder)`` reads ``modules.json`` (:mod:`common.models.st_format`): the Transformer and Pooling
become a :class:`~common.models.encoder.SentenceEncoder`, the Dense and Normalize modules after it a ``post``
stack, computed in float32 outside autocast (a bf16 evaluation rounds the encoder's matrix products, not the
projection of the pooled vector nor its norm). A plain Hugging Face folder (no ``modules.json``) needs its pooling
named. A prompt that the Pooling module leaves out (``include_prompt: false``) is excluded from pooling, as
sentence-transformers does: the prompt's tokens are attended to but not pooled.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch import nn
from transformers import PreTrainedTokenizerBase

from common.models import st_format
from common.models.encoder import SentenceEncoder, load_backbone
from common.models.pooling import pool
from common.models.tokenizer import load_tokenizer

WEIGHTS = ("model.safetensors", "model.safetensors.index.json", "pytorch_model.bin", "pytorch_model.bin.index.json")


def check_weights(folder: str | Path) -> None:
    """An HF model folder must hold its weights: one error naming the folder and the files looked for."""
    folder = Path(folder)
    if not (folder / "config.json").exists():
        raise FileNotFoundError(f"{folder / 'config.json'}: no model config (not a Hugging Face model folder)")
    if not any((folder / w).exists() for w in WEIGHTS):
        raise FileNotFoundError(f"{folder}: no weights ({', '.join(WEIGHTS)}): the model folder is incomplete")


class ModuleEncoder(nn.Module):
    """Transformer + pooling (a :class:`SentenceEncoder`) and the modules after pooling; ``forward`` returns
    (sentence (B, D'), token states (B, S, D)) like the sentence encoder it wraps."""

    def __init__(self, sentence: SentenceEncoder, post: list[nn.Module] | None = None, include_prompt: bool = True):
        super().__init__()
        self.sentence = sentence
        self.post = nn.Sequential(*(post or []))
        self.include_prompt = include_prompt
        self.prompt_length = 0  # tokens of the prompt put before every input (set by the embedder)

    @property
    def backbone(self) -> nn.Module:
        return self.sentence.backbone

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        emb, hidden = self.sentence(input_ids, attention_mask)  # (B, D), (B, S, D)
        if self.prompt_length and not self.include_prompt:
            mask = attention_mask.clone()
            mask[:, :self.prompt_length] = 0  # right padding: the prompt is each row's first tokens after [CLS]
            modes = self.sentence.pooling.split("+")
            emb = torch.cat([hidden[:, self.prompt_length] if m == "cls" else pool(hidden, mask, m) for m in modes],
                            dim=-1)
        if len(self.post):
            with torch.autocast(device_type=emb.device.type, enabled=False):
                emb = self.post(emb.float())  # (B, D')
        return emb, hidden


@dataclass
class LoadedModel:
    """What :func:`load_module_encoder` read: the encoder, its tokenizer and the folder's settings."""

    encoder: ModuleEncoder
    tokenizer: PreTrainedTokenizerBase
    max_seq_length: int | None
    do_lower_case: bool
    prompts: dict[str, str] = field(default_factory=dict)
    default_prompt_name: str | None = None
    modules: list[str] = field(default_factory=list)  # e.g. ["Transformer", "Pooling(mean)", "Dense(384->128)"]

    def describe(self) -> dict[str, Any]:
        return {"modules": self.modules, "max_seq_length": self.max_seq_length, "do_lower_case": self.do_lower_case,
                "prompts": self.prompts, "default_prompt_name": self.default_prompt_name}


def load_module_encoder(folder: str | Path, pooling: str | None = None) -> LoadedModel:
    """The encoder of a sentence-transformers folder, or of a plain HF folder with ``pooling`` named (a folder with
    ``modules.json`` takes its own pooling; naming another is an error)."""
    folder = Path(folder)
    if not (folder / st_format.MODULES).exists():
        if pooling is None:
            raise ValueError(f"{folder}: a plain Hugging Face model (no modules.json) needs its pooling named "
                             f"(--pooling cls|mean|max|...)")
        check_weights(folder)
        sentence = SentenceEncoder(load_backbone(folder), pooling)
        pool(torch.zeros(1, 1, 1), torch.ones(1, 1), pooling)  # an unknown mode fails here, before any encoding
        return LoadedModel(ModuleEncoder(sentence).eval(), load_tokenizer(folder), None, False,
                           modules=["Transformer", f"Pooling({pooling})"])
    modules = st_format.read_modules(folder)
    names = [m.name for m in modules]
    if "Router" in names:
        raise ValueError(f"{folder / st_format.MODULES}: a Router model has one encoder per route; load a route "
                         "(common.models.embedder's dual-encoder kind reads each)")
    if names[:2] != ["Transformer", "Pooling"]:
        raise st_format.ModelFormatError(f"{folder / st_format.MODULES}: expected Transformer then Pooling first, "
                                         f"found {names}")
    if pooling is not None:
        raise ValueError(f"{folder}: a sentence-transformers folder states its own pooling ({modules[1].path}); "
                         "do not name another")
    transformer = folder / modules[0].path
    check_weights(transformer)
    pool_cfg = st_format.read_pooling(folder / modules[1].path / "config.json")
    sentence = SentenceEncoder(load_backbone(transformer), pool_cfg.mode)
    post: list[nn.Module] = []
    described = ["Transformer", f"Pooling({pool_cfg.mode})"]
    for m in modules[2:]:
        if m.name == "Dense":
            dense = st_format.read_dense(folder / m.path)
            linear = dense[0]
            assert isinstance(linear, nn.Linear)
            post.append(dense)
            described.append(f"Dense({linear.in_features}->{linear.out_features}, {type(dense[1]).__name__})")
        elif m.name == "Normalize":
            post.append(st_format.Normalize())
            described.append("Normalize")
        else:
            raise st_format.ModelFormatError(f"{folder / st_format.MODULES}: module {m.name} after pooling is not run "
                                             "here (Dense and Normalize are)")
    sbert = st_format.sentence_bert_config(transformer)
    settings = st_format.read_st_config(folder)
    return LoadedModel(ModuleEncoder(sentence, post, pool_cfg.include_prompt).eval(), load_tokenizer(transformer),
                       sbert.get("max_seq_length"), bool(sbert.get("do_lower_case", False)), settings["prompts"],
                       settings["default_prompt_name"], described)


def prompt_length(tokenizer: PreTrainedTokenizerBase, prompt: str) -> int:
    """The tokens a prompt takes at the start of an input, its trailing special token not counted (as
    sentence-transformers counts them for ``include_prompt: false``)."""
    ids = tokenizer(prompt)["input_ids"]
    return len(ids) - 1 if ids and ids[-1] in tokenizer.all_special_ids else len(ids)
