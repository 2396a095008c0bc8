"""``hf_encoder_transformer``: NMT from a pretrained encoder of this repository (HICTL section 3.2, Figure 3).

* Encoder: a saved HF encoder (``--hf-encoder``: any model folder the repository writes, e.g. HICTL's, DAP's or
  VMSST's ``model/``), reading the binarized source as ``[CLS] x [SEP]`` with the tokenizer's own ids.
* Decoder: a new Transformer decoder (section 4.2: "a shallower decoder with 4 identical layers"), randomly
  initialised, attending to the encoder states; its input and output embeddings tied, of the encoder's width.
* [CLS]-vocabulary logit bias (``--cls-logit-bias``): "we compute the similarities between the [CLS]
  representation of the encoder and all target words in advance. Then we aggregate them with the logits before the
  softmax of each decoder step through an element-wise additive operation." The similarity is HICTL's score
  function s (eq. 1, cosine) between the encoder's final [CLS] state and each word's embedding in the *encoder's*
  table (the one the word-level CTL of eq. 7 trains); computed once per sentence in the encoder and added to the
  logits at every step (target-language tags, which the encoder has no embedding for, get 0). Where the target side
  has a dictionary of its own (:mod:`common.nmt.target_vocab`), a target piece's row in that table is the mean of
  the rows of the encoder's pieces of its text (:class:`TargetSpelling`; our choice, the paper's target words are
  the encoder's).
* ``--freeze-encoder`` (stage 1): the encoder's parameters get no gradient (so no optimizer state) and the encoder
  runs in eval mode (no dropout), so it stays bit-identical; stage 2 trains everything.
"""
from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any, Self

import torch
import torch.nn.functional as F
from fairseq.models import FairseqEncoder, FairseqEncoderDecoderModel, register_model, register_model_architecture
from fairseq.models.transformer import TransformerDecoder, TransformerModel, base_architecture
from torch import nn

from common.models.encoder import load_backbone
from common.nmt.target_vocab import spelling

if TYPE_CHECKING:
    from common.nmt.fairseq_plugin.dictionary import HFDictionary
    from common.nmt.fairseq_plugin.task import TranslationHFTask

EncoderOut = dict[str, list[torch.Tensor]]


def autocast(enabled: bool, device: torch.device) -> torch.autocast:
    """bf16 autocast (``--autocast-bf16``: CPU AMX or GPU tensor cores); fp32 weights, fp32 log-softmax."""
    return torch.autocast(device.type, dtype=torch.bfloat16, enabled=enabled)


class TargetSpelling(nn.Module):
    """Each target piece's row in the encoder's embedding table: the mean of the rows of the encoder's pieces of its
    text (:func:`common.nmt.target_vocab.spelling`), zero for a piece with none (the special pieces). Rebuilt from
    the two tokenizers with the model, so not saved in checkpoints."""

    def __init__(self, spelled: list[list[int]]) -> None:
        super().__init__()
        lengths = torch.tensor([len(s) for s in spelled], dtype=torch.long)
        self.ids: torch.Tensor
        self.offsets: torch.Tensor
        self.register_buffer("ids", torch.tensor([i for s in spelled for i in s], dtype=torch.long), persistent=False)
        self.register_buffer("offsets", torch.cumsum(lengths, 0) - lengths, persistent=False)

    def forward(self, table: torch.Tensor) -> torch.Tensor:  # (V_src, C) -> (V_tgt, C)
        return F.embedding_bag(self.ids, table, self.offsets, mode="mean")


class HFEncoder(FairseqEncoder):
    def __init__(self, dictionary: HFDictionary, backbone: nn.Module, logit_bias: bool, frozen: bool,
                 bf16: bool = False, target_size: int | None = None, spelling: TargetSpelling | None = None) -> None:
        super().__init__(dictionary)
        self.backbone, self.logit_bias, self.frozen, self.bf16 = backbone, logit_bias, frozen, bf16
        self.target_size = len(dictionary) if target_size is None else target_size  # the bias's width
        self.spelling = spelling
        if frozen:
            for p in self.backbone.parameters():
                p.requires_grad = False

    def train(self, mode: bool = True) -> Self:
        super().train(mode and not self.frozen)
        return self

    def forward(self, src_tokens: torch.Tensor, src_lengths: torch.Tensor | None = None, **_: Any) -> EncoderOut:
        mask = src_tokens.ne(self.dictionary.pad())  # (B, T)
        with autocast(self.bf16, src_tokens.device):
            h = self.backbone(input_ids=src_tokens, attention_mask=mask.long()).last_hidden_state  # (B, T, C)
        h = h.float()
        out = {"encoder_out": [h.transpose(0, 1)], "encoder_padding_mask": [~mask], "encoder_embedding": [],
               "encoder_states": [], "src_tokens": [], "src_lengths": []}
        if self.logit_bias:
            table = self.backbone.get_input_embeddings().weight  # (V_tok, C)
            if self.spelling is not None:
                table = self.spelling(table)  # (V_tok, C): the target pieces' rows
            sims = F.normalize(h[:, 0].float(), dim=-1) @ F.normalize(table.float(), dim=-1).T  # (B, V_tok)
            out["cls_bias"] = [F.pad(sims, (0, self.target_size - table.shape[0]))]  # (B, V): tags get 0
        return out

    def reorder_encoder_out(self, encoder_out: EncoderOut, new_order: torch.Tensor) -> EncoderOut:
        out = dict(encoder_out)
        out["encoder_out"] = [x.index_select(1, new_order) for x in encoder_out["encoder_out"]]
        for key in ("encoder_padding_mask", "cls_bias"):
            if key in encoder_out:
                out[key] = [x.index_select(0, new_order) for x in encoder_out[key]]
        return out

    def max_positions(self) -> int:
        cfg = self.backbone.config
        offset = (getattr(cfg, "pad_token_id", 0) or 0) + 1 if cfg.model_type in ("roberta", "xlm-roberta") else 0
        return getattr(cfg, "max_position_embeddings", 512) - offset


class BiasedTransformerDecoder(TransformerDecoder):
    """fairseq's Transformer decoder whose logits get the encoder's [CLS]-vocabulary similarities added."""

    bf16 = False

    def forward(self, prev_output_tokens: torch.Tensor, encoder_out: EncoderOut | None = None,
                incremental_state: dict[str, dict[str, torch.Tensor | None]] | None = None, features_only: bool = False,
                **kwargs: Any) -> tuple[torch.Tensor, dict[str, Any]]:
        with autocast(self.bf16, prev_output_tokens.device):
            x, extra = super().forward(prev_output_tokens, encoder_out=encoder_out,
                                       incremental_state=incremental_state, features_only=True, **kwargs)
            if features_only:
                return x, extra
            logits = self.output_layer(x)  # (B, T, V)
        logits = logits.float()
        if encoder_out is not None and encoder_out.get("cls_bias"):
            logits = logits + encoder_out["cls_bias"][0][:, None, :].to(logits.dtype)
        return logits, extra


@register_model("hf_encoder_transformer")
class HFEncoderTransformer(FairseqEncoderDecoderModel):
    @staticmethod
    def add_args(parser: argparse.ArgumentParser) -> None:
        TransformerModel.add_args(parser)
        parser.add_argument("--hf-encoder", required=True, help="a saved HF encoder folder (with its tokenizer)")
        parser.add_argument("--freeze-encoder", action="store_true", help="stage 1: train the decoder only")
        parser.add_argument("--cls-logit-bias", action="store_true",
                            help="add the [CLS]-vocabulary similarities to the decoder's logits (section 3.2)")
        parser.add_argument("--hf-random-init", action="store_true",
                            help="the encoder's architecture with random weights (the random-init baseline)")
        parser.add_argument("--autocast-bf16", action="store_true", help="bf16 autocast (fp32 weights)")

    @classmethod
    def build_model(cls, args: argparse.Namespace, task: TranslationHFTask) -> Self:
        backbone = load_backbone(args.hf_encoder)
        if args.hf_random_init:  # same shape, fresh weights (the config's initialisation), no pooler either
            pooler = {"add_pooling_layer": False} if hasattr(backbone, "pooler") else {}
            backbone = type(backbone)(backbone.config, **pooler)
        if len(task.source_dictionary) - len(task.source_dictionary.tags) != backbone.get_input_embeddings(
                ).num_embeddings:
            raise ValueError(f"{args.hf_encoder}: the encoder's vocabulary differs from the binarized data's tokenizer")
        width = backbone.config.hidden_size
        args.encoder_embed_dim = args.decoder_embed_dim = args.decoder_output_dim = args.decoder_input_dim = width
        args.decoder_ffn_embed_dim = 4 * width  # the decoder's shape follows the encoder's width (not stated)
        args.decoder_attention_heads = max(1, width // 64)
        src, tgt = task.source_dictionary, task.target_dictionary
        spelled = None
        if args.cls_logit_bias and tgt.symbols != src.symbols:  # a target dictionary of its own
            spelled = TargetSpelling(spelling(tgt.tokenizer, src.tokenizer))
        encoder = HFEncoder(src, backbone, args.cls_logit_bias, args.freeze_encoder, args.autocast_bf16, len(tgt),
                            spelled)
        embed = nn.Embedding(len(tgt), width, padding_idx=tgt.pad())
        nn.init.normal_(embed.weight, mean=0, std=width ** -0.5)
        nn.init.constant_(embed.weight[tgt.pad()], 0)
        decoder = BiasedTransformerDecoder(args, tgt, embed)
        decoder.bf16 = args.autocast_bf16
        return cls(encoder, decoder)

    def max_positions(self) -> tuple[int, int]:
        return self.encoder.max_positions(), self.decoder.max_positions()


@register_model_architecture("hf_encoder_transformer", "hf_encoder_transformer")
def hf_architecture(args: argparse.Namespace) -> None:
    """Section 4.2: a 4-layer decoder; dropout 0.1; tied decoder embeddings. Its width is the encoder's, its
    feed-forward 4x that and one head per 64 dimensions (set when the model is built; the paper states the depth
    only)."""
    args.decoder_layers = getattr(args, "decoder_layers", 4)
    args.dropout = getattr(args, "dropout", 0.1)
    args.attention_dropout = getattr(args, "attention_dropout", 0.1)
    args.share_decoder_input_output_embed = getattr(args, "share_decoder_input_output_embed", True)
    args.freeze_encoder = getattr(args, "freeze_encoder", False)  # fairseq leaves absent model flags unset
    args.cls_logit_bias = getattr(args, "cls_logit_bias", False)
    args.hf_random_init = getattr(args, "hf_random_init", False)
    args.autocast_bf16 = getattr(args, "autocast_bf16", False)
    base_architecture(args)
