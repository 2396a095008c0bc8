import pytest
import torch
from transformers import AutoModel

from common.models.encoder import EncoderSpec, SentenceEncoder, build_mlm_model, encode_sentences
from common.models.pooling import pool
from common.models.tokenizer import load_tokenizer, train_wordpiece


def test_pooling_hand_computed():
    h = torch.tensor([[[1.0, 2.0], [3.0, 4.0], [100.0, 100.0]]])  # (1, 3, 2), last position padded
    m = torch.tensor([[1, 1, 0]])
    assert pool(h, m, "cls").tolist() == [[1.0, 2.0]]
    assert pool(h, m, "mean").tolist() == [[2.0, 3.0]]
    assert pool(h, m, "max").tolist() == [[3.0, 4.0]]
    with pytest.raises(ValueError):
        pool(h, m, "first")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    out = tmp_path_factory.mktemp("enc")
    sents = ["the cat sees a dog", "a dog eats bread", "die katze sieht einen hund", "我爱你"] * 5
    tok = train_wordpiece(sents, vocab_size=120, out_dir=out / "tok", min_frequency=1)
    torch.manual_seed(0)
    mlm = build_mlm_model(EncoderSpec(hidden_size=16, num_layers=2, num_heads=2, intermediate_size=32), len(tok))
    enc = SentenceEncoder(mlm.base_model, "mean")
    enc.save(out / "model", tok)
    return enc, tok, out / "model", sents


def test_saved_model_loads_with_automodel_and_sentence_transformers(tiny):
    enc, tok, path, sents = tiny
    ours = encode_sentences(enc, tok, sents[:4])
    auto = AutoModel.from_pretrained(path).eval()
    b = tok(sents[:4], padding=True, return_tensors="pt")
    with torch.no_grad():
        h = auto(**b).last_hidden_state
    assert torch.allclose(pool(h, b["attention_mask"], "mean"), ours, atol=1e-5)
    from sentence_transformers import SentenceTransformer

    st = SentenceTransformer(str(path), device="cpu")
    assert torch.allclose(torch.tensor(st.encode(sents[:4])), ours, atol=1e-5)
    reloaded = SentenceEncoder.load(path)
    assert reloaded.pooling == "mean"
    assert torch.allclose(encode_sentences(reloaded, load_tokenizer(path), sents[:4]), ours, atol=1e-5)


def test_tokenizer_roundtrip(tiny):
    _, tok, path, _ = tiny
    ids = tok("the cat")["input_ids"]
    assert ids[0] == tok.cls_token_id and ids[-1] == tok.sep_token_id
    assert "[UNK]" not in tok.convert_ids_to_tokens(ids)


def test_tokenizer_training_is_deterministic(tmp_path):
    sents = [f"ku{i % 7} ma{i % 5} so{i % 3} the man{i % 5} sees dog{i % 7}" for i in range(64)]
    for run in ("a", "b"):
        train_wordpiece(sents, vocab_size=100, out_dir=tmp_path / run, min_frequency=1)
    assert (tmp_path / "a" / "tokenizer.json").read_bytes() == (tmp_path / "b" / "tokenizer.json").read_bytes()


def test_tokenizer_alphabet_has_continuations_only_of_word_inner_characters(tmp_path):
    """Every character is a piece; its "##" form only if it occurs inside a word (CJK characters never do: the
    normalizer isolates them)."""
    sents = ["我们 看 狗", "ab ba", "c"] * 3
    tok = train_wordpiece(sents, vocab_size=1, out_dir=tmp_path / "t", min_frequency=1)
    alphabet = {t for t in tok.get_vocab() if len(t.removeprefix("##")) == 1}
    assert alphabet == {"我", "们", "看", "狗", "a", "b", "c", "##a", "##b"}
    assert tok.convert_ids_to_tokens(tok("我们 ab")["input_ids"]) == ["[CLS]", "我", "们", "a", "##b", "[SEP]"]


def test_tokenizer_vocabulary_is_deterministic_at_the_size_limit(tmp_path):
    """HF's trainer alone learned a different vocabulary in 1 of 4 runs on the smoke corpus
    (ties between equal-count merges broken by ids given in hash-map order); 6 runs on that
    corpus, cut at the smoke vocabulary size, must agree byte for byte."""
    from common.data.loaders import read_tsv_pairs
    from common.data.synthetic import SyntheticSpec, write_synthetic_corpus

    write_synthetic_corpus(tmp_path / "corpus", SyntheticSpec(seed=1, n_languages=5, train_pairs_per_language=3000))
    sents = [s for f in sorted((tmp_path / "corpus" / "train").glob("*.tsv")) for p in read_tsv_pairs(f) for s in p]
    texts = set()
    for run in range(6):
        train_wordpiece(sents, vocab_size=3000, out_dir=tmp_path / str(run), min_frequency=1)
        texts.add((tmp_path / str(run) / "tokenizer.json").read_bytes())
    assert len(texts) == 1


def test_the_pretrained_pooler_reaches_a_classifier_fine_tuned_on_the_saved_encoder(tmp_path):
    """A bare encoder is built without BERT's pooler (training never runs it) but keeps the checkpoint's, and the
    saved folder holds it: AutoModelForSequenceClassification on the saved model starts from the pre-trained pooler
    (as fine-tuning the checkpoint itself would), not a random one; also through a masked-LM build (DAP, HICTL)."""
    from transformers import AutoModelForSequenceClassification, BertConfig, BertModel

    from common.models.encoder import EncoderSpec, SentenceEncoder, build_mlm_model, checkpoint_pooler, load_backbone

    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=60, hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32)
    original = BertModel(cfg)  # with its pooler, as a pre-trained checkpoint is
    original.save_pretrained(tmp_path / "ckpt")
    want = original.pooler.dense.weight.detach().clone()
    assert torch.equal(checkpoint_pooler(tmp_path / "ckpt")["pooler.dense.weight"], want)
    for name, backbone in (("bare", load_backbone(tmp_path / "ckpt")),
                           ("mlm", build_mlm_model(EncoderSpec(pretrained=str(tmp_path / "ckpt"))).base_model)):
        SentenceEncoder(backbone, "cls").save(tmp_path / name)
        clf = AutoModelForSequenceClassification.from_pretrained(tmp_path / name, num_labels=3)
        assert torch.equal(clf.bert.pooler.dense.weight, want), name
        assert torch.equal(checkpoint_pooler(tmp_path / name)["pooler.dense.bias"], original.pooler.dense.bias)
    # a checkpoint without a pooler (an encoder trained here from scratch) keeps none
    SentenceEncoder(BertModel(cfg, add_pooling_layer=False), "cls").save(tmp_path / "scratch")
    assert checkpoint_pooler(tmp_path / "scratch") == {}


def test_repeated_sentences_are_embedded_once(tiny):
    enc, tok, _, sents = tiny  # the four fixture sentences, five times over
    calls = []

    class Counting:  # the tokenizer, recording what each batch asks it to encode
        def __call__(self, batch, **kw):
            calls.append(list(batch))
            return tok(batch, **kw)

    out = encode_sentences(enc, Counting(), sents, batch_size=3)
    assert sorted(s for batch in calls for s in batch) == sorted(sents[:4])
    alone = encode_sentences(enc, tok, sents[:4])
    assert out.shape == (20, 16)
    assert torch.allclose(out, alone.repeat(5, 1), atol=1e-6)
