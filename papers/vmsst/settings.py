"""What a VMSST run trains (section 6.3's objectives and section 7's ablation switches), as plain data: the workflow
reads it to list the runs, and :mod:`papers.vmsst.model` builds the model from it (so the run registry imports
no torch)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

OBJECTIVES = ("vmsst", "bitranslation", "contrastive", "vmsst_contrastive")
# how the mean heads start: nn.Linear's default, or the identity (step 0 embeds as the pooled backbone)
HeadInit = Literal["default", "identity"]
HEAD_INITS: tuple[str, ...] = get_args(HeadInit)


@dataclass
class Settings:
    objective: str = "vmsst"
    elbo_weight: float = 0.1  # lambda of section 4 (6.4: 0.1 from random init, 0.025 for mT5 with its decoder)
    vmsst_weight: float = 0.0005  # VMSST Contrastive's lambda on the VMSST loss (6.4: 0.0005, 24-layer 0.001)
    anneal_steps: int = 1_000_000
    kl: bool = True
    encoders: str = "twin"  # twin | one (Table 4 "1 enc.") | n<K> (K language encoders, "4 enc.") | per_language
    encoder_language_embeddings: bool = True
    decoder_language_embeddings: bool = True
    decoders: str = "shared"  # shared | per_language (Table 6 "full dec.")
    decoder_layers: int = 1
    factored: bool = False
    compile_loss: bool = False  # the decoder's vocabulary projection + loss through torch.compile (speed only)
    loss_chunk_tokens: int = 0  # > 0: the decoder loss in chunks of this many tokens (0: the fused loss's default)
    vocab_loss: str = "fused"  # the decoder's vocabulary loss: fused linear + cross-entropy, or "plain" logits
    head_init: HeadInit = "default"  # the mean heads (HeadInit)
