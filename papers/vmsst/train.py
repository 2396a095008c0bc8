"""VMSST training (sections 4-6): one run (objective, variant) on one encoder setting, one seed.

``python -m papers.vmsst.train --help`` lists the arguments (:mod:`common.training.cli`); ``--method`` is a run
name of :mod:`papers.vmsst.variants`. Writes ``model/``: the semantic inference network as a
``sentence-encoder`` folder whose pooled output goes through the saved mean projection (the sentence
embedding of section 5), a Dense module: ``SentenceTransformer(model)`` computes that embedding.

Dropout (section 6.4): 0.1 for Contrastive, none for BiTranslation, VMSST and VMSST Contrastive (the paper's
24-layer random-init VMSST Contrastive used 0.1: ``vmsst.dropout_by_setting``).
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from torch import nn
from transformers import AutoConfig, AutoModelForSeq2SeqLM, PretrainedConfig

from common.data.stream import Concat, TsvPairs, tagged
from common.models.embedder import save_sentence_encoder
from common.models.encoder import (
    ENCODER_ONLY,
    EncoderSpec,
    SentenceEncoder,
    build_encoder,
    encoder_spec,
    resolve_pretrained,
)
from common.models.tokenizer import load_tokenizer
from common.training.cli import Built, RunArguments, main
from papers.vmsst import variants
from papers.vmsst.data import VMSSTCollator
from papers.vmsst.model import VMSST


def language_ids(manifest: dict, languages: list[str] | None = None) -> dict[str, int]:
    """English is 0, every other language of the training pairs (of ``languages`` only, if given) 1.. in sorted
    order. A manifest key ``xxx`` holds (xxx, English) pairs, ``xxx-yyy`` (xxx, yyy) pairs (VMSST's Spanish pivot
    at paper scale). Restricted to ``languages``, Table 6's unshared model builds one encoder and one decoder per
    language it trains on, not per language of the corpus."""
    keys = [k for k in manifest["train"] if languages is None or k.partition("-")[0] in languages]
    langs = {part for key in keys for part in key.split("-")} - {"en"}
    return {"en": 0} | {lang: i + 1 for i, lang in enumerate(sorted(langs))}


def load_examples(manifest: dict, languages: list[str] | None = None) -> Sequence[tuple[str, str, int, int]]:
    """(x, its translation, language id of x, language id of the translation) for every training pair (of
    ``languages`` only, if given), read by position (common/data/stream.py)."""
    ids = language_ids(manifest, languages)
    parts: list[Sequence[tuple[str, str, int, int]]] = []
    for key, path in sorted(manifest["train"].items()):
        lang, _, pivot = key.partition("-")
        if languages is None or lang in languages:
            parts.append(tagged(TsvPairs(path), ids[lang], ids[pivot or "en"]))
    return Concat(parts)


def set_dropout(module: nn.Module, p: float) -> None:
    """Every dropout of a (pretrained) encoder at rate ``p``: the ``nn.Dropout`` modules, and the attention-weight
    dropout that T5 / mT5 attention (and ``nn.MultiheadAttention``) keep as a float read from the config at build
    time (``T5Attention.dropout``), which the modules alone miss: the paper's "no dropout" for VMSST on mT5 would
    have kept mT5's 0.1 on its attention weights. The rates of every config in ``module`` change too: a seq2seq
    model's encoder and decoder stacks hold their own copies of its config (``T5ForConditionalGeneration``
    deep-copies it), and layers built later from a stack's config (:class:`papers.vmsst.decoder.T5LatentDecoder`'s
    latent sublayers) read their rate there."""
    configs = {}
    for m in module.modules():
        if isinstance(m, nn.Dropout):
            m.p = p
        elif isinstance(getattr(m, "dropout", None), float):
            m.dropout = p
        if getattr(m, "config", None) is not None:
            configs[id(m.config)] = m.config
    for config in configs.values():
        for name in ("hidden_dropout_prob", "attention_probs_dropout_prob", "dropout_rate"):
            if hasattr(config, name):
                setattr(config, name, p)


def has_pretrained_decoder(config: PretrainedConfig | None) -> bool:
    """An encoder-decoder checkpoint's config (mT5's): its decoder starts pretrained; an encoder-only one's (MiniLM's,
    XLM-R's) or none (from scratch): VMSST's decoder starts from scratch."""
    return config is not None and config.model_type in ENCODER_ONLY


def pretrained_decoder(spec: EncoderSpec, dropout: float) -> tuple[nn.Module, nn.Linear] | None:
    """(decoder stack, lm_head) of a pretrained encoder-decoder checkpoint (the paper's mT5-large setting); None for
    an encoder-only or from-scratch spec (the decoder is then built from scratch)."""
    if not spec.pretrained:
        return None
    path = resolve_pretrained(spec.pretrained)
    if not has_pretrained_decoder(AutoConfig.from_pretrained(path)):
        return None
    full = AutoModelForSeq2SeqLM.from_pretrained(path)
    set_dropout(full, dropout)
    head = full.lm_head
    if full.config.tie_word_embeddings:  # T5 v1.0 scales the decoder output by d^-0.5 before a tied head
        head = nn.Linear(head.in_features, head.out_features, bias=False)
        head.weight.data.copy_(full.lm_head.weight * full.config.d_model ** -0.5)
    return full.get_decoder(), head


class VMSSTRecipe:
    paper = "vmsst"
    same_step_as = staticmethod(variants.same_step_as)  # the census's stand-in for a routed run too large to build

    def _resolve(self, cfg: dict, run: RunArguments):
        spec = encoder_spec(cfg["encoders"][run.init], run.tokenizer)
        config = AutoConfig.from_pretrained(resolve_pretrained(spec.pretrained)) if spec.pretrained else None
        depth = config.num_hidden_layers if config is not None else spec.num_layers
        return spec, variants.resolve(run.method, cfg, run.init, depth, has_pretrained_decoder(config))

    def examples(self, cfg: dict, run: RunArguments, manifest: dict) -> Sequence:
        _, (_, _, languages) = self._resolve(cfg, run)
        return load_examples(manifest, languages)

    def build(self, cfg: dict, run: RunArguments, manifest: dict, examples: Sequence) -> Built:
        spec, (settings, overrides, languages) = self._resolve(cfg, run)
        tokenizer = load_tokenizer(run.tokenizer)
        backbone = build_encoder(spec, len(tokenizer))
        v = cfg["vmsst"]
        dropout = {**v["dropout"], **v.get("dropout_by_setting", {}).get(run.init, {})}.get(settings.objective, 0.0)
        set_dropout(backbone, dropout)
        c = backbone.config
        model = VMSST(backbone, settings, num_languages=len(language_ids(manifest, languages)),
                      max_length=cfg["training"]["max_length"], decoder_heads=c.num_attention_heads,
                      decoder_ffn=getattr(c, "intermediate_size", None) or c.d_ff, dropout=dropout, seed=run.seed,
                      pretrained_decoder=pretrained_decoder(spec, dropout) if settings.objective != "contrastive"
                      else None)

        def save(trained: VMSST, out: Path) -> None:
            encoder = SentenceEncoder(trained.semantic.backbone, "mean")
            save_sentence_encoder(encoder, tokenizer, out, cfg["eval"]["max_length"], projection=trained.semantic.mean)

        method = {"settings": vars(settings), "languages": languages or sorted(manifest["train"]), "dropout": dropout}
        collate = VMSSTCollator(tokenizer, cfg["training"]["max_length"], cfg["training"].get("pad_scored_to", 1))
        return Built(model, collate, save, method, overrides)


if __name__ == "__main__":
    main(VMSSTRecipe())
