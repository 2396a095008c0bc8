"""VMSST's decoder (section 5, "Decoder Architecture"): one Transformer decoder for every language with no
cross-attention. As in BGT (Wieting et al. 2020, the authors' fairseq model), the latent vector
z = [z_sem; z_l] (B, 2k) enters every layer in place of cross-attention -- a linear map of [hidden; z]
added to the residual stream -- and again in the logits: the output projection reads [hidden; z_l; z_sem]
(3d x V when k = d). The first decoder input names the language to generate (a learned embedding per
language; "no dec. l.e." replaces it with one shared start embedding).

``factored=True`` is Table 4's "fact." ablation: [hidden; z_l; z_sem] is first mapped to d (3d x d) and then
to the vocabulary (d x V) instead of one 3d x V projection.

Two decoders share that contract (:class:`LatentOutput`): :class:`LatentDecoder`, built from scratch
(post-layer-norm layers, learned positions), and :class:`T5LatentDecoder`, the decoder of a pretrained T5 / mT5
(the paper's "Pretrained (24 Layer)" setting, from mT5-large) that keeps its self-attention and feed-forward
weights and replaces each block's cross-attention with the latent input.
"""
from __future__ import annotations

from typing import Any

import torch
from torch import nn
from torch.utils.checkpoint import checkpoint

from common.losses.token_nll import chunked_token_nll, token_nll, weighted_token_nll


class LatentDecoderLayer(nn.Module):
    """Causal self-attention, then the latent layer (in place of cross-attention), then the feed-forward block;
    each sub-block residual with post-layer-norm (the Transformer of Vaswani et al. 2017, as in BGT)."""

    def __init__(self, d: int, heads: int, ffn: int, latent: int, dropout: float):
        super().__init__()
        self.self_attn = nn.MultiheadAttention(d, heads, dropout=dropout, batch_first=True)
        self.latent = nn.Linear(d + latent, d)
        self.ffn = nn.Sequential(nn.Linear(d, ffn), nn.ReLU(), nn.Dropout(dropout), nn.Linear(ffn, d))
        self.norms = nn.ModuleList(nn.LayerNorm(d) for _ in range(3))
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor, z: torch.Tensor, causal: torch.Tensor, pad: torch.Tensor) -> torch.Tensor:
        """x: (B, T, d); z: (B, latent); causal: (T, T) bool, True = masked; pad: (B, T) bool, True = padding."""
        a, _ = self.self_attn(x, x, x, attn_mask=causal, key_padding_mask=pad, need_weights=False)
        x = self.norms[0](x + self.dropout(a))
        zz = z[:, None, :].expand(-1, x.shape[1], -1)  # (B, T, latent)
        x = self.norms[1](x + self.dropout(self.latent(torch.cat([x, zz], dim=-1))))
        return self.norms[2](x + self.dropout(self.ffn(x)))


_compiled: dict[str, object] = {}


def compiled(fn):
    """``fn`` (a loss function of this module's) through ``torch.compile`` with dynamic shapes (the number of tokens
    changes every batch), compiled once per process; the first call compiles (about a minute, seconds from
    inductor's cache). Under bf16 autocast on a CPU with native bf16 it fuses the logits' fp32 up-cast, the
    log-softmax and its backward: a mini VMSST step went from 2.5 to 1.0 s (Intel Xeon, papers/vmsst/README.md).
    In fp32 there is no up-cast to fuse: on an AVX2-only AMD EPYC, where bf16 jobs run in fp32, 4.16 s a step
    compiled against 3.98 s eager, with malloc keeping freed memory (1.07x before that change;
    ``scripts/bench_job_step.py --variant vmsst.compile_loss=false``, docs/scales.md)."""
    if fn.__name__ not in _compiled:
        _compiled[fn.__name__] = torch.compile(fn, dynamic=True)
    return _compiled[fn.__name__]


class LatentOutput(nn.Module):
    """The output side both decoders share: :meth:`features` gives [hidden; z_l; z_sem] per target position;
    ``out`` maps it to the vocabulary.

    The loss over the vocabulary (``vocab_loss``): "fused" scores it with the fused linear + cross-entropy
    (:mod:`common.losses.token_nll`, :mod:`common.losses.linear_cross_entropy`: no (N, V) logits, chunks of
    ``loss_chunk`` tokens, 0 = the default size), "plain" through the materialised logits (the reference);
    ``compile_loss`` runs that loss through ``torch.compile``. Training calls :meth:`weighted_nll`, whose token
    weights are known at the forward pass (VMSST's loss is a fixed combination of its sentences' NLLs), so the
    fused loss recomputes nothing; :meth:`nll` gives per-sentence NLLs with their gradient."""

    out: nn.Module
    compile_loss: bool = False
    loss_chunk: int = 0
    vocab_loss: str = "fused"

    def features(self, targets: torch.Tensor, target_mask: torch.Tensor, lang: torch.Tensor,
                 z_sem: torch.Tensor, z_lang: torch.Tensor) -> torch.Tensor:  # pragma: no cover - interface
        raise NotImplementedError

    def forward(self, targets: torch.Tensor, target_mask: torch.Tensor, lang: torch.Tensor,
                z_sem: torch.Tensor, z_lang: torch.Tensor) -> torch.Tensor:
        """Teacher-forced logits, (B, T, V)."""
        return self.out(self.features(targets, target_mask, lang, z_sem, z_lang))

    def nll(self, targets: torch.Tensor, target_mask: torch.Tensor, lang: torch.Tensor,
            z_sem: torch.Tensor, z_lang: torch.Tensor) -> torch.Tensor:
        """-log p(x | z_sem, z_l) per sentence, summed over its real tokens, with its gradient: (B,). Every
        position is scored (static shapes; padding ignored)."""
        B, T = targets.shape
        features = self.features(targets, target_mask, lang, z_sem, z_lang).flatten(0, 1)  # (B*T, F)
        labels = targets.masked_fill(~target_mask.bool(), -100).flatten()  # (B*T,)
        if self.vocab_loss == "plain":  # F.cross_entropy gives 0 at the ignored rows
            per_token = (compiled(token_nll) if self.compile_loss else token_nll)(self.out, features, labels)
        else:
            loss = compiled(chunked_token_nll) if self.compile_loss else chunked_token_nll
            per_token = loss(self.out, features, labels, self.loss_chunk)
        return per_token.view(B, T).sum(1)

    def weighted_nll(self, targets: torch.Tensor, target_mask: torch.Tensor, lang: torch.Tensor,
                     z_sem: torch.Tensor, z_lang: torch.Tensor, row_weights: torch.Tensor,
                     positions: torch.Tensor | None = None,
                     labels: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """(sum over the scored tokens of row_weights[their sentence] x their NLL, with gradient; each sentence's NLL
        summed over its real tokens, (B,), without gradient). ``positions`` / ``labels`` (M,): the scored tokens
        as flat positions into (B, T) and their targets (-100: a padding row), the collator's list
        (:func:`common.models.vocab_head.scored_positions`), so the projection runs on real tokens only; None: every
        position, padding ignored."""
        B, T = targets.shape
        features = self.features(targets, target_mask, lang, z_sem, z_lang).flatten(0, 1)  # (B*T, F)
        if positions is None:
            labels = targets.masked_fill(~target_mask.bool(), -100).flatten()  # (B*T,)
            rows = torch.arange(B * T, device=targets.device) // T
        else:
            assert labels is not None, "positions need their labels"
            features = features.index_select(0, positions)  # (M, F): no data-dependent indexing
            rows = positions // T  # (M,) the sentence of each scored token
        loss = compiled(weighted_token_nll) if self.compile_loss else weighted_token_nll
        total, per_token = loss(self.out, features, labels, row_weights[rows], impl=self.vocab_loss,
                                chunk=self.loss_chunk)
        per_sentence = torch.zeros(B, dtype=per_token.dtype, device=per_token.device).index_add(0, rows, per_token)
        return total, per_sentence


def output_projection(d: int, latent: int, vocab: int, factored: bool) -> nn.Module:
    if factored:
        return nn.Sequential(nn.Linear(d + latent, d, bias=False), nn.Linear(d, vocab))
    return nn.Linear(d + latent, vocab)


def shifted_inputs(start: nn.Embedding, embeddings: nn.Embedding, targets: torch.Tensor, lang: torch.Tensor,
                   language_start: bool) -> torch.Tensor:
    """Decoder inputs for teacher forcing: the language's start embedding, then targets[:, :-1]: (B, T, d)."""
    first = start(lang if language_start else torch.zeros_like(lang))[:, None, :]  # (B, 1, d)
    return torch.cat([first, embeddings(targets[:, :-1])], dim=1)


INIT_STD = 0.02


class LatentDecoder(LatentOutput):
    def __init__(self, embeddings: nn.Embedding, num_languages: int, layers: int, heads: int, ffn: int,
                 latent: int, max_length: int, dropout: float = 0.1, language_start: bool = True,
                 factored: bool = False):
        super().__init__()
        d = embeddings.embedding_dim
        self.embeddings = embeddings  # shared with the encoders
        self.positions = nn.Embedding(max_length + 1, d)
        self.start = nn.Embedding(num_languages if language_start else 1, d)
        for table in (self.positions, self.start):  # at the shared token table's scale (BERT's initializer_range):
            nn.init.normal_(table.weight, std=INIT_STD)  # N(0, 1) would drown the previous token 50:1 at the input
        self.language_start = language_start
        self.layers = nn.ModuleList(LatentDecoderLayer(d, heads, ffn, latent, dropout) for _ in range(layers))
        self.dropout = nn.Dropout(dropout)
        self.out = output_projection(d, latent, embeddings.num_embeddings, factored)
        self.checkpointing: dict[str, Any] | None = None  # torch.utils.checkpoint's arguments, when on

    def activation_checkpointing_enable(self, activation_checkpointing_kwargs: dict[str, Any] | None = None) -> None:
        """Recompute each layer's activations in the backward pass (the trainer's ``gradient_checkpointing``
        switch, full or selective: common/training/activation_checkpointing.py; the paper's Limitations: decoders
        "can be trained with gradient checkpointing")."""
        self.checkpointing = activation_checkpointing_kwargs or {"use_reentrant": False}

    def features(self, targets: torch.Tensor, target_mask: torch.Tensor, lang: torch.Tensor,
                 z_sem: torch.Tensor, z_lang: torch.Tensor) -> torch.Tensor:
        """The output projection's input for predicting ``targets`` (B, T) token by token (position t reads the
        start embedding and targets[:, :t]): [hidden; z_l; z_sem], (B, T, d + 2k). z_sem, z_lang: (B, k)."""
        B, T = targets.shape
        x = shifted_inputs(self.start, self.embeddings, targets, lang, self.language_start)  # (B, T, d)
        x = self.dropout(x + self.positions(torch.arange(T, device=x.device))[None])
        causal = torch.triu(torch.ones(T, T, dtype=torch.bool, device=x.device), diagonal=1)
        pad = torch.cat([torch.zeros(B, 1, dtype=torch.bool, device=x.device), ~target_mask[:, :-1].bool()], dim=1)
        z = torch.cat([z_sem, z_lang], dim=-1)  # (B, 2k)
        for layer in self.layers:
            if self.checkpointing is not None and self.training:
                x = checkpoint(layer, x, z, causal, pad, **self.checkpointing)
            else:
                x = layer(x, z, causal, pad)
        zz = torch.cat([z_lang, z_sem], dim=-1)[:, None, :].expand(-1, T, -1)
        return torch.cat([x, zz], dim=-1)


class T5LatentSublayer(nn.Module):
    """Stands in for a T5 block's cross-attention sub-layer: x + dropout(W [layer_norm(x); z]), pre-norm like the
    block's other sub-layers. The block calls it as it would call cross-attention, with z as the (B, 1, 2k)
    "encoder states"; it returns the block's expected (hidden, position bias, attention weights)."""

    def __init__(self, d: int, latent: int, eps: float, dropout: float):
        super().__init__()
        from transformers.models.t5.modeling_t5 import T5LayerNorm

        self.layer_norm = T5LayerNorm(d, eps=eps)
        self.latent = nn.Linear(d + latent, d, bias=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, hidden_states: torch.Tensor, key_value_states: torch.Tensor, **_) -> tuple:
        z = key_value_states[:, :1, :].expand(-1, hidden_states.shape[1], -1)  # (B, T, 2k)
        h = self.latent(torch.cat([self.layer_norm(hidden_states), z.to(hidden_states.dtype)], dim=-1))
        return hidden_states + self.dropout(h), None, None


class T5LatentDecoder(LatentOutput):
    """A pretrained T5 / mT5 decoder stack (``T5Stack``) with each block's cross-attention replaced by
    :class:`T5LatentSublayer` (its self-attention, feed-forward and layer norms keep their pretrained weights);
    ``layers`` keeps the first blocks only (Table 4's shallower decoders). The output projection's hidden-state
    columns start from ``lm_head`` (the checkpoint's, with T5's d^-0.5 output scaling folded in where it ties
    the head to the embeddings: :func:`papers.vmsst.train.pretrained_decoder`), its latent columns at zero;
    every language's start embedding starts from the checkpoint's decoder start token."""

    def __init__(self, stack: nn.Module, lm_head: nn.Linear, embeddings: nn.Embedding, num_languages: int,
                 latent: int, layers: int | None = None, language_start: bool = True, factored: bool = False):
        super().__init__()
        cfg = stack.config
        d = cfg.d_model
        if layers is not None and layers < len(stack.block):
            stack.block = stack.block[:layers]  # block 0 holds the relative position bias table
        for block in stack.block:
            block.layer[1] = T5LatentSublayer(d, latent, cfg.layer_norm_epsilon, cfg.dropout_rate)
        stack.set_input_embeddings(embeddings)  # shared with the encoders
        self.stack, self.embeddings, self.language_start = stack, embeddings, language_start
        self.start = nn.Embedding(num_languages if language_start else 1, d)
        with torch.no_grad():
            self.start.weight.copy_(embeddings.weight[cfg.decoder_start_token_id].expand_as(self.start.weight))
        self.out = output_projection(d, latent, embeddings.num_embeddings, factored)
        if not factored:
            with torch.no_grad():
                self.out.weight.zero_()
                self.out.weight[:, :d].copy_(lm_head.weight)

    def features(self, targets: torch.Tensor, target_mask: torch.Tensor, lang: torch.Tensor,
                 z_sem: torch.Tensor, z_lang: torch.Tensor) -> torch.Tensor:
        B, T = targets.shape
        x = shifted_inputs(self.start, self.embeddings, targets, lang, self.language_start)  # (B, T, d)
        mask = torch.cat([torch.ones_like(target_mask[:, :1]), target_mask[:, :-1]], dim=1)  # (B, T)
        z = torch.cat([z_sem, z_lang], dim=-1)[:, None, :]  # (B, 1, 2k): the blocks' "encoder states"
        h = self.stack(inputs_embeds=x, attention_mask=mask, encoder_hidden_states=z,
                       encoder_attention_mask=torch.ones_like(mask[:, :1]), use_cache=False).last_hidden_state
        zz = torch.cat([z_lang, z_sem], dim=-1)[:, None, :].expand(-1, T, -1)
        return torch.cat([h, zz.to(h.dtype)], dim=-1)
