"""The ``fairseq-encoder`` embedder kind: the encoder of an NMT model trained by :mod:`common.nmt.recipe`, read
through the embedder protocol (:mod:`common.models.embedder`), so every embedding-based registered task (retrieval,
mining, STS; not the ones that fine-tune an HF folder, such as XNLI) can score what NMT fine-tuning (HICTL section
3.2, stage 2) did to the sentence embeddings. It is one encoder for every language: fine-tuned from one side of
MoCo-BERT's pair (the source side, :mod:`common.leaderboard.nmt`), it also encodes the other side's language.

A stage folder of the recipe holds fairseq's checkpoints and an ``embedder.json``::

    {"kind": "fairseq-encoder", "checkpoint": "checkpoint_best.pt", "encoder": "<the source model, relative>", ...}

``encoder`` is the ``sentence-encoder`` folder the NMT model started from (relative to the stage folder, so a
results tree can move): it gives the architecture, the tokenizer (whose ids the NMT data keeps), the pooling and
any projection; the checkpoint's ``encoder.backbone.*`` tensors replace its weights. The checkpoint is read with
``torch.load(weights_only=True)``, ``argparse.Namespace`` (the run's arguments) allowed and nothing else.
"""
from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

import torch

from common.io import read_checkpoint
from common.models.embedder import (
    META,
    NotApplicable,
    SentenceEncoderEmbedder,
    read_embedder_meta,
    register_embedder,
    save_embedder_meta,
)
from common.models.model_files import require_finite_tensors
from common.nmt.checkpoints import allow_fairseq_checkpoints

log = logging.getLogger(__name__)

KIND = "fairseq-encoder"
PREFIX = "encoder.backbone."  # the HF encoder inside common.nmt.fairseq_plugin.model.HFEncoder


def load_encoder_state(checkpoint: Path) -> dict[str, torch.Tensor]:
    """The HF encoder's state dict inside a fairseq checkpoint of the ``hf_encoder_transformer`` model."""
    allow_fairseq_checkpoints()
    state = read_checkpoint(checkpoint)  # a cut or corrupt file: an error naming it
    model = state.get("model") if isinstance(state, dict) else None
    if not isinstance(model, dict):
        raise ValueError(f"{checkpoint}: not a fairseq checkpoint (no 'model' state dict)")
    backbone = {k[len(PREFIX):]: v for k, v in model.items() if k.startswith(PREFIX)}
    if not backbone:
        raise ValueError(f"{checkpoint}: no '{PREFIX}*' tensors; not an hf_encoder_transformer checkpoint")
    require_finite_tensors(((PREFIX + k, v) for k, v in backbone.items()), checkpoint)
    return backbone


class FairseqEncoderEmbedder(SentenceEncoderEmbedder):
    """The source ``sentence-encoder`` with the NMT checkpoint's encoder weights (pooling and projection kept)."""

    def __init__(self, path: Path, meta: dict[str, Any], batch_size: int = 128, device: torch.device | None = None,
                 precision: str = "fp32"):
        path = Path(path)
        source = path / meta["encoder"]
        source_meta = read_embedder_meta(source)
        if source_meta["kind"] != "sentence-encoder":
            raise ValueError(f"{path / 'embedder.json'}: the NMT encoder must start from a 'sentence-encoder' "
                             f"folder, {source} is a {source_meta['kind']!r}")
        super().__init__(source, {**source_meta, "max_length": meta["max_length"]}, batch_size, device, precision)
        self.kind, self.path, self.source = KIND, path, source
        state = load_encoder_state(path / meta["checkpoint"])
        missing, unexpected = self.encoder.backbone.load_state_dict(state, strict=False)
        # HF may keep buffers (position ids) out of the state dict; every parameter must come from the checkpoint
        params = {name for name, _ in self.encoder.backbone.named_parameters()}
        if params & set(missing) or unexpected:
            raise ValueError(f"{path / meta['checkpoint']}: its encoder does not match {source} "
                             f"(missing {sorted(params & set(missing))[:3]}, unexpected {sorted(unexpected)[:3]})")
        self.encoder.to(self.device)

    def hf_model_dir(self) -> Path:
        raise NotApplicable(f"{self.path}: a fairseq NMT encoder has no HF folder to fine-tune "
                            f"(its source, before NMT, is {self.source})")


def save_fairseq_encoder_meta(stage_dir: Path, encoder: Path, checkpoint: str = "checkpoint_best.pt") -> bool:
    """Make a recipe stage folder loadable with :func:`common.models.embedder.load_embedder`; ``False`` (nothing
    written) when ``encoder`` is a bare HF folder, not one this repository saved (no pooling to reuse)."""
    if not (Path(encoder) / META).exists():
        log.info("%s: no %s, so %s is not an embedder folder", encoder, META, stage_dir)
        return False
    source_meta = read_embedder_meta(encoder)
    save_embedder_meta(stage_dir, KIND, max_length=source_meta["max_length"], checkpoint=checkpoint,
                       encoder=os.path.relpath(Path(encoder).resolve(), Path(stage_dir).resolve()))
    return True


register_embedder(KIND, FairseqEncoderEmbedder)
