import json

import pytest
import torch

from common.models.embedder import load_embedder, save_dual_encoder, save_sentence_encoder
from common.models.encoder import EncoderSpec, SentenceEncoder, build_encoder, encode_sentences
from common.models.tokenizer import train_wordpiece

SENTS = ["the man sees a dog", "ku ma so", "a dog", "so li ku ma"]


@pytest.fixture(scope="module")
def tok(tmp_path_factory):
    return train_wordpiece(SENTS * 3, 60, tmp_path_factory.mktemp("tok"), min_frequency=1)


def encoder(tok, seed):
    torch.manual_seed(seed)
    return SentenceEncoder(build_encoder(EncoderSpec(hidden_size=16, num_layers=1, num_heads=2, intermediate_size=32),
                                         len(tok)), "mean").eval()


def test_sentence_encoder_folder_round_trip(tok, tmp_path):
    enc = encoder(tok, 0)
    save_sentence_encoder(enc, tok, tmp_path / "m", max_length=8)
    assert json.loads((tmp_path / "m" / "embedder.json").read_text()) == {"kind": "sentence-encoder", "max_length": 8,
                                                                        "pooling": "mean",
                                                                        "modules": ["Transformer", "Pooling"]}
    emb = load_embedder(tmp_path / "m", batch_size=2)
    want = encode_sentences(enc, tok, SENTS, max_length=8)
    assert emb.hf_model_dir() == tmp_path / "m"
    assert (torch.allclose(emb.encode(SENTS, "deu"), want, atol=1e-6)
            and torch.allclose(emb.encode(SENTS, "en"), want, atol=1e-6))


def test_dual_encoder_routes_by_language(tok, tmp_path):
    xx, en = encoder(tok, 1), encoder(tok, 2)
    save_dual_encoder({"xx": (xx, tok), "en": (en, tok)}, tmp_path / "m", max_length=8)
    emb = load_embedder(tmp_path / "m")
    assert torch.allclose(emb.encode(SENTS, "cmn"), encode_sentences(xx, tok, SENTS, max_length=8), atol=1e-6)
    for lang in ("en", "eng"):
        assert torch.allclose(emb.encode(SENTS, lang), encode_sentences(en, tok, SENTS, max_length=8), atol=1e-6)
    with pytest.raises(RuntimeError, match="no single HF encoder"):
        emb.hf_model_dir()


def test_folder_without_kind_is_refused(tmp_path):
    with pytest.raises(FileNotFoundError, match="no embedder.json"):
        load_embedder(tmp_path)
    (tmp_path / "embedder.json").write_text('{"kind": "nope", "max_length": 8}')
    with pytest.raises(ValueError, match="unknown embedder kind 'nope'"):
        load_embedder(tmp_path)
