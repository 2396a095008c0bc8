"""Each paper's training model at its rehearsal widths, with a batch from its own collator: what the step tests
compile (tests/papers/test_compiled_steps.py).

The widths are the rehearsal's (common/rehearsal/checkpoints.py ``WIDTH``: 32 wide, 2 layers, 2 heads, 64-wide
feed-forward; VMSST's from-scratch ``l6`` entry of papers/vmsst/config/rehearsal.yaml), and the method settings
come from each paper's rehearsal config and its variants; the models are built from configs (no download), with a
WordPiece vocabulary trained on a few sentences, and dropout 0 so that two runs of a step compute the same thing.
DAP and HICTL run XLM-R-shaped encoders as their rehearsals do (HICTL: ``xlmr_base``; DAP: the ``xlmr`` run of the
rehearsal); DAP's TR also on a BERT (mBERT's family)."""
from __future__ import annotations

import dataclasses
import functools
import tempfile
from collections.abc import Callable
from typing import Any

import torch
from torch import nn

from common.config import load_config
from common.rehearsal.checkpoints import WIDTH

NO_DROPOUT = {"hidden_dropout_prob": 0.0, "attention_probs_dropout_prob": 0.0}
SENTENCES = [("kitu ma sola bena", "the man sees the dog"), ("ba ru", "a dog"), ("kitu ba ru ma", "the dog eats bread"),
             ("sola nemo kitu", "yes he sees"), ("ru ru ba kitu ma sola", "the dog and the man eat bread"),
             ("bena", "bread"), ("ma sola ru", "he sees a dog"), ("nemo ba", "no dog")]


@functools.lru_cache(maxsize=1)
def tokenizer():
    from common.models.tokenizer import train_wordpiece

    text = [s for pair in SENTENCES for s in pair] * 4
    return train_wordpiece(text, vocab_size=120, out_dir=tempfile.mkdtemp(prefix="steps-tok-"), min_frequency=1)


def masked_lm(kind: str) -> nn.Module:
    """A masked LM at the rehearsal's widths: "bert" (mBERT's family) or "xlmr" (XLM-R's)."""
    from transformers import BertConfig, BertForMaskedLM, XLMRobertaConfig, XLMRobertaForMaskedLM

    tok = tokenizer()
    torch.manual_seed(0)
    if kind == "bert":
        return BertForMaskedLM(BertConfig(vocab_size=len(tok), max_position_embeddings=128, **WIDTH, **NO_DROPOUT))
    return XLMRobertaForMaskedLM(XLMRobertaConfig(vocab_size=len(tok), max_position_embeddings=130,
                                                  pad_token_id=tok.pad_token_id, **WIDTH, **NO_DROPOUT))


def dap(method: str, kind: str = "xlmr", **options: Any) -> tuple[nn.Module, dict]:
    from papers.dap import variants
    from papers.dap.data import DAPCollator
    from papers.dap.model import DAPModel

    cfg, tok = load_config("dap", "rehearsal"), tokenizer()
    d = cfg["dap"]
    m = variants.resolve(method, d)
    model = DAPModel(masked_lm(kind), m["objectives"], temperature=d["temperature"], margin=d["margin"],
                     rtl_layers=m["rtl_layers"], direction=m["direction"], rtl_weight=d["rtl_weight"],
                     tlm_weight=d["tlm_weight"], num_languages=3, pooling=cfg["pooling"],
                     mask_token_id=tok.mask_token_id, **options)
    collate = DAPCollator(tok, cfg["training"]["max_length"], m["objectives"], rho=m["rho"], direction=m["direction"],
                          tlm_mask_prob=0.3)
    return model, collate([(x, y, 1 + i % 2) for i, (x, y) in enumerate(SENTENCES)], torch.Generator().manual_seed(0))


def hictl(method: str = "hictl_hns", **options: Any) -> tuple[nn.Module, dict]:
    from papers.hictl import variants
    from papers.hictl.data import MONO, PARALLEL, HICTLCollator
    from papers.hictl.model import HICTL

    cfg, tok = load_config("hictl", "rehearsal"), tokenizer()
    h, v = cfg["hictl"], variants.resolve(method)
    model = HICTL(masked_lm("xlmr"), tok.all_special_ids, sentence=v["sentence"], word=v["word"],
                  hard_negatives=v["hard_negatives"], temperature=h["temperature"], zeta=h["zeta"], window=h["window"],
                  word_negatives=h["word_negatives"], pooling=cfg["pooling"], **options)
    collate = HICTLCollator(tok, cfg["training"]["max_length"], h["mask_bilingual"], h["mask_monolingual"],
                            word_negatives=h["word_negatives"])
    examples = [(x, y, PARALLEL) if i % 2 == 0 else (x, None, MONO) for i, (x, y) in enumerate(SENTENCES)]
    batch = collate(examples, torch.Generator().manual_seed(0))
    model.window.update(torch.tensor(2.0))  # a p_avg > 0, so that eq. 6's interpolated negatives are in the step
    return model, batch


def vmsst(method: str = "vmsst", **options: Any) -> tuple[nn.Module, dict]:
    from common.models.encoder import build_encoder, encoder_spec
    from papers.vmsst import variants
    from papers.vmsst.data import VMSSTCollator
    from papers.vmsst.model import VMSST

    cfg, tok = load_config("vmsst", "rehearsal"), tokenizer()
    spec = encoder_spec({**cfg["encoders"]["l6"], "dropout": 0.0})
    settings, _, _ = variants.resolve(method, cfg, "l6", spec.num_layers)
    if "vocab_loss" in options:  # a setting of VMSST's (its config's vmsst.vocab_loss)
        settings = dataclasses.replace(settings, vocab_loss=options.pop("vocab_loss"))
    torch.manual_seed(0)
    backbone = build_encoder(spec, len(tok))
    c = backbone.config
    model = VMSST(backbone, settings, num_languages=3, max_length=cfg["training"]["max_length"],
                  decoder_heads=c.num_attention_heads, decoder_ffn=c.intermediate_size, dropout=0.0, **options)
    model.on_step(5)
    collate = VMSSTCollator(tok, cfg["training"]["max_length"])
    examples = [(x, y, 1 + i % 2, 0) for i, (x, y) in enumerate(SENTENCES)]
    return model, collate(examples, torch.Generator().manual_seed(0))


def moco(method: str = "moco") -> tuple[nn.Module, dict]:
    from papers.moco import variants
    from papers.moco.data import MocoCollator
    from papers.moco.train import build_model

    cfg, tok = load_config("moco", "rehearsal"), tokenizer()
    s = variants.resolve(method, cfg)
    from common.models.encoder import EncoderSpec

    spec = EncoderSpec(hidden_size=WIDTH["hidden_size"], num_layers=WIDTH["num_hidden_layers"],
                       num_heads=WIDTH["num_attention_heads"], intermediate_size=WIDTH["intermediate_size"],
                       max_position=128, dropout=0.0)
    torch.manual_seed(0)
    model = build_model(cfg, {**s, "queue_size": 16}, (spec, spec), tok, tok, seed=1)
    collate = MocoCollator(tok, tok, cfg["training"]["max_length"])
    return model, collate(SENTENCES, torch.Generator().manual_seed(0))


# every paper's model step the tests check, by name
STEPS: dict[str, Callable[..., tuple[nn.Module, dict]]] = {
    "dap/tr (mbert)": functools.partial(dap, "tr", "bert"),
    "dap/tr": functools.partial(dap, "tr"),
    "dap/tr_tlm": functools.partial(dap, "tr_tlm"),
    "dap/dap": functools.partial(dap, "dap"),
    "dap/dap_dir-both": functools.partial(dap, "dap_dir-both"),
    "dap/dap_rho-0.5": functools.partial(dap, "dap_rho-0.5"),
    "hictl/hictl_hns": functools.partial(hictl, "hictl_hns"),
    "vmsst/vmsst": functools.partial(vmsst, "vmsst"),
    "vmsst/vmsst_contrastive": functools.partial(vmsst, "vmsst_contrastive"),
    "moco/moco": functools.partial(moco, "moco"),
    "moco/inbatch": functools.partial(moco, "inbatch"),
}
