"""A tiny saved encoder and the NMT model fairseq builds from it, shared by the plugin and embedder tests."""
import argparse
from types import SimpleNamespace

import pytest
import torch

from common.models.embedder import save_sentence_encoder
from common.models.encoder import EncoderSpec, SentenceEncoder, build_mlm_model
from common.models.tokenizer import train_wordpiece

SENTS = ["the cat sees a dog", "a dog eats bread", "die katze sieht einen hund", "le chat voit un chien"] * 5


@pytest.fixture(scope="module")
def encoder_dir(tmp_path_factory):
    """(a ``sentence-encoder`` folder, its tokenizer): 2 layers, width 16, dropout 0.3, [CLS] pooling."""
    out = tmp_path_factory.mktemp("nmt_enc")
    tok = train_wordpiece(SENTS, vocab_size=100, out_dir=out / "tok", min_frequency=1)
    torch.manual_seed(0)
    mlm = build_mlm_model(EncoderSpec(hidden_size=16, num_layers=2, num_heads=2, intermediate_size=32,
                                      dropout=0.3), len(tok))
    save_sentence_encoder(SentenceEncoder(mlm.base_model, "cls"), tok, out / "model", max_length=32)
    return out / "model", tok


def build_nmt_model(path, tok, target_tok=None, **flags):
    """The model as fairseq builds it: the command-line flags given, the architecture's defaults for the rest;
    ``target_tok``: the target side's own tokenizer (else the encoder's)."""
    pytest.importorskip("fairseq")
    from common.nmt.fairseq_plugin.dictionary import HFDictionary
    from common.nmt.fairseq_plugin.model import HFEncoderTransformer, hf_architecture

    args = argparse.Namespace(**{"hf_encoder": str(path), "cls_logit_bias": True, "decoder_layers": 1,
                                 "dropout": 0.0, "attention_dropout": 0.0, **flags})
    hf_architecture(args)
    d = HFDictionary(tok, ["de", "en"])
    t = d if target_tok is None else HFDictionary(target_tok, ["de", "en"])
    torch.manual_seed(1)
    return HFEncoderTransformer.build_model(args, SimpleNamespace(source_dictionary=d, target_dictionary=t))
