"""A fine-tuning job's hyper-parameters (:class:`NMTSettings`), as plain data: :mod:`common.nmt.plan` gives each job
its fields, :mod:`common.nmt.recipe` runs them, and the reports read them without importing torch."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass
class NMTSettings:
    """Fine-tuning hyper-parameters (section 4.2: "The initial learning rate is 2e-5 and inverse_sqrt learning
    rate scheduler is also adopted"; the rest is fairseq's Transformer recipe)."""

    lr: float = 2e-5
    stage1_lr: float | None = None  # None: lr (the paper's single value); a new decoder may need a larger one
    warmup_updates: int = 4000
    max_tokens: int = 4096
    dropout: float = 0.1
    decoder_layers: int = 4  # section 4.2: "a shallower decoder with 4 identical layers"
    label_smoothing: float = 0.1
    weight_decay: float = 0.0001
    clip_norm: float = 0.0
    stage1_max_update: int = 100_000
    stage1_patience: int = 5  # validations without a better loss before stage 1 stops
    stage2_max_update: int = 10_000
    validate_interval_updates: int = 1000
    baseline_max_update: int = 100_000
    # "same": the pretrained model's architecture with random weights, all trained at once (isolates what the
    # pre-training adds); otherwise a fairseq architecture (the paper's Transformer-base / big)
    baseline_arch: str = "same"
    baseline_args: list[str] = field(default_factory=list)  # extra fairseq arguments (smaller shapes)
    baseline_dropout: float | None = None  # a fairseq baseline's dropout (None: ``dropout``); Transformer big: 0.3
    logit_bias: bool = True
    # bf16: our encoder-decoder autocasts (--autocast-bf16, fp32 weights). A fairseq baseline architecture cannot
    # take fairseq 0.12's --bf16, which sets --tpu and then asks torch_xla for the device (found by the rehearsal:
    # fairseq/options.py); on a GPU it trains with fairseq's --fp16 instead (fp32 master weights in its
    # FP16Optimizer, dynamic loss scaling: the precision policy's fp16 option), on a CPU in fp32
    bf16: bool = False
    seed: int = 1
    gpus: int = 0
    # the effective batch in target tokens per update; on fewer GPUs than it was planned for, --update-freq
    # accumulates gradients to reach it (None: max_tokens x GPUs, no accumulation)
    tokens_per_update: int | None = None

    @classmethod
    def from_config(cls, cfg: Mapping[str, Any], **overrides: Any) -> NMTSettings:
        known = {k: v for k, v in {**cfg, **overrides}.items() if k in cls.__dataclass_fields__}
        return cls(**known)
