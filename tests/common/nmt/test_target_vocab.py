"""The target side's own dictionary (common/nmt/target_vocab.py): cased pieces that spell the text back exactly,
each piece's spelling in the encoder's pieces, the logit bias's target rows as the mean of those rows (against a
loop, in value and gradient), and a setting's data binarized with it."""
import json
import math

import pytest
import torch

from tests.common.nmt.conftest import SENTS, build_nmt_model

pytest.importorskip("fairseq")
from transformers import AutoTokenizer  # noqa: E402

from common.nmt.target_vocab import SPECIALS, _renumber, special_ids, spelling, train_target_tokenizer  # noqa: E402

GERMAN = ["Ein Mann fährt Fahrrad.", "Zwei Hunde spielen im Schnee.", "Eine Frau trägt einen Hut.",
          "Ein Mädchen läuft über die Straße."] * 3
ENGLISH = ["A man rides a bike.", "Two dogs play in the snow.", "A woman wears a hat.",
           "A girl runs across the street."] * 3


def _write(path, lines):
    path.write_text("".join(f"{x}\n" for x in lines), encoding="utf-8")
    return str(path)


@pytest.fixture(scope="module")
def target_tok(tmp_path_factory):
    d = tmp_path_factory.mktemp("tgt")
    return AutoTokenizer.from_pretrained(train_target_tokenizer([_write(d / "de", GERMAN), _write(d / "en", ENGLISH)],
                                                                300, d / "tok"))


@pytest.fixture(scope="module")
def renumbered(tmp_path_factory, encoder_dir):
    """The target dictionary as the workflow learns it: special pieces at the encoder tokenizer's ids."""
    d = tmp_path_factory.mktemp("tgt_ids")
    ids = special_ids(encoder_dir[1])
    return AutoTokenizer.from_pretrained(train_target_tokenizer([_write(d / "de", GERMAN), _write(d / "en", ENGLISH)],
                                                                300, d / "tok", ids))


def test_target_pieces_spell_cased_accented_text_back_exactly(target_tok):
    assert [target_tok.convert_ids_to_tokens(i) for i in range(4)] == list(SPECIALS)
    assert (target_tok.pad_token_id, target_tok.eos_token_id, target_tok.unk_token_id) == (0, 1, 2)
    for text in ["Ein Mädchen läuft über die Straße.", "A girl runs.", "Zwei  Hunde"]:
        ids = target_tok(text, add_special_tokens=False)["input_ids"]
        assert target_tok.unk_token_id not in ids
        assert target_tok.decode(ids) == text
    assert target_tok("Ein")["input_ids"] != target_tok("ein")["input_ids"]  # cased
    # every whitespace character is a space: no piece holds one (fairseq writes pieces separated by whitespace)
    ids = target_tok("Zwei\u00a0Hunde\tspielen", add_special_tokens=False)["input_ids"]
    assert target_tok.decode(ids) == "Zwei Hunde spielen"
    assert not any(ch.isspace() for piece in target_tok.get_vocab() for ch in piece)


def test_generated_pieces_read_back_as_the_text(tmp_path, target_tok):
    """fairseq-generate's hypothesis line (pieces and a language tag) back to text with the target dictionary."""
    from common.nmt import bleu
    from common.nmt.fairseq_plugin.dictionary import HFDictionary

    text = "Ein Mädchen läuft über die Straße."
    pieces = target_tok.convert_ids_to_tokens(target_tok(text, add_special_tokens=False)["input_ids"])
    assert pieces[0].startswith("\u2581") and len(pieces) > 1
    log = tmp_path / "gen.txt"
    log.write_text(f"H-0\t-0.1\t<2de> {' '.join(pieces)}\n", encoding="utf-8")
    assert bleu.read_generate(log, target_tok, HFDictionary(target_tok, ["de"]).indices, 1) == [text]


def test_special_pieces_take_the_encoders_ids_and_the_rest_fill_the_gaps():
    trained = {"model": {"vocab": {"<pad>": 0, "</s>": 1, "<unk>": 2, "<s>": 3, "a": 4, "b": 5, "ab": 6}},
               "added_tokens": [{"content": p, "id": i} for i, p in enumerate(SPECIALS)]}
    out = _renumber(trained, {"<pad>": 0, "</s>": 5, "<unk>": 4, "<s>": 6})
    assert out["model"]["vocab"] == {"<pad>": 0, "</s>": 5, "<unk>": 4, "<s>": 6, "a": 1, "b": 2, "ab": 3}
    assert [a["id"] for a in out["added_tokens"]] == [0, 5, 4, 6]
    with pytest.raises(ValueError, match="has 7 pieces"):
        _renumber(trained, {"<pad>": 0, "</s>": 102})
    with pytest.raises(ValueError, match="share an id"):
        _renumber(trained, {"<pad>": 0, "</s>": 0})


def test_each_piece_is_spelled_in_the_encoders_pieces(encoder_dir, target_tok):
    _, tok = encoder_dir
    spelled = spelling(target_tok, tok)
    assert len(spelled) == len(target_tok)
    assert spelled[:4] == [[], [], [], []]  # the special pieces
    i = target_tok.get_vocab()["\u2581Hunde"]
    assert spelled[i] == tok("Hunde", add_special_tokens=False)["input_ids"]  # the encoder's (lower-cased) pieces
    assert spelled[i]
    cont = next(p for p in target_tok.get_vocab() if not p.startswith("\u2581") and p not in SPECIALS and len(p) > 2)
    assert spelled[target_tok.get_vocab()[cont]] == tok(cont, add_special_tokens=False)["input_ids"]  # its own word


def test_target_spelling_is_the_mean_of_the_encoders_rows_in_value_and_gradient():
    from common.nmt.fairseq_plugin.model import TargetSpelling

    spelled = [[], [3], [0, 2], [1, 1, 4]]
    table = torch.randn(5, 3, dtype=torch.float64, requires_grad=True)
    got = TargetSpelling(spelled)(table)
    naive = torch.stack([table[s].mean(0) if s else torch.zeros(3, dtype=torch.float64) for s in spelled])
    assert torch.allclose(got, naive)
    w = torch.randn(4, 3, dtype=torch.float64)
    (g,) = torch.autograd.grad((got * w).sum(), table)
    expected = torch.zeros(5, 3, dtype=torch.float64)  # row r gets w[v] / len(s_v) per occurrence in s_v
    for v, s in enumerate(spelled):
        for r in s:
            expected[r] += w[v] / len(s)
    assert torch.allclose(g, expected)


def test_cls_bias_over_an_own_target_dictionary_equals_a_cosine_loop(encoder_dir, renumbered):
    path, tok = encoder_dir
    target_tok = renumbered
    assert special_ids(target_tok) == special_ids(tok)
    model = build_nmt_model(path, tok, target_tok).eval()
    assert model.decoder.embed_tokens.num_embeddings == len(target_tok) + 2  # the target pieces and two tags
    b = tok(SENTS[:2], padding=True, return_tensors="pt")
    with torch.no_grad():
        out = model.encoder(b["input_ids"])
    bias, h = out["cls_bias"][0], out["encoder_out"][0][0]  # (B, V_tgt + tags), (B, C)
    table = model.encoder.backbone.get_input_embeddings().weight.detach()
    spelled = spelling(target_tok, tok)
    assert bias.shape == (2, len(target_tok) + 2)
    for i in range(2):
        for v, s in enumerate(spelled):
            e = [sum(float(table[r, c]) for r in s) / len(s) for c in range(table.shape[1])] if s else [0.0] * 16
            a = h[i].tolist()
            norms = math.sqrt(sum(x * x for x in a) * sum(y * y for y in e))
            assert float(bias[i, v]) == pytest.approx(sum(x * y for x, y in zip(a, e)) / norms if norms else 0.0,
                                                      abs=1e-5)
        assert bias[i, len(target_tok):].tolist() == [0.0, 0.0]
    with torch.no_grad():  # no bias asked: none computed
        assert "cls_bias" not in build_nmt_model(path, tok, target_tok, cls_logit_bias=False).encoder(b["input_ids"])


def test_a_setting_binarized_with_its_own_target_dictionary(tmp_path, encoder_dir):
    from fairseq.data import indexed_dataset

    from common.nmt.data import build
    from common.nmt.fairseq_plugin.task import TranslationHFTask
    from common.nmt.target_vocab import TARGET_TOKENIZER

    _, tok = encoder_dir
    tok_dir = tmp_path / "enc_tok"
    tok.save_pretrained(tok_dir)
    d = tmp_path / "raw"
    d.mkdir()
    manifest = {"translation": {
        "de-en": {"train": [_write(d / "train.de", GERMAN), _write(d / "train.en", ENGLISH)],
                  "valid": [_write(d / "valid.de", GERMAN[:2]), _write(d / "valid.en", ENGLISH[:2])],
                  "tests": {"t": [_write(d / "test.de", ["Ein Hund."]), _write(d / "test.en", ["A dog."])]}},
        "en-de": {"train": [_write(d / "train2.en", ENGLISH), _write(d / "train2.de", GERMAN)],
                  "valid": [_write(d / "valid2.en", ENGLISH[:2]), _write(d / "valid2.de", GERMAN[:2])],
                  "tests": {"t": [_write(d / "test2.en", ["A dog."]), _write(d / "test2.de", ["Ein Hund."])]}}}}
    out = tmp_path / "out"
    build(manifest, tok_dir, ["de-en", "en-de"], {"de-en": ["t"], "en-de": ["t"]}, out, target_vocab=300)
    own = AutoTokenizer.from_pretrained(out / "target_tokenizer")
    assert special_ids(own) == special_ids(tok)  # fairseq's translation task shares them between the sides
    assert "\u2581Mädchen" in own.get_vocab()  # learned on both targets, cased, accents kept
    for folder in ("stage1", "de-en", "en-de"):
        assert (out / folder / TARGET_TOKENIZER / "tokenizer.json").read_text() == (
            out / "target_tokenizer" / "tokenizer.json").read_text()
    tags = json.loads((out / "de-en" / "tags.json").read_text())["tags"]
    src_dict = TranslationHFTask.load_dictionary(str(out / "de-en" / "dict.src.txt"))
    tgt_dict = TranslationHFTask.load_dictionary(str(out / "de-en" / "dict.tgt.txt"))
    assert len(src_dict) == len(tok) + len(tags) and len(tgt_dict) == len(own) + len(tags)
    src = indexed_dataset.make_dataset(str(out / "de-en" / "train.src-tgt.src"), impl="mmap")
    tgt = indexed_dataset.make_dataset(str(out / "de-en" / "train.src-tgt.tgt"), impl="mmap")
    assert src[0].tolist() == tok(GERMAN[0])["input_ids"]  # the encoder's own ids, [CLS] x [SEP]
    row = tgt[0].tolist()
    assert row[0] == tgt_dict.tags["en"] and row[-1] == tgt_dict.eos() == own.eos_token_id
    assert own.decode(row[1:-1]) == ENGLISH[0]
    with pytest.raises(ValueError, match=r"test pairs \['de-fr'\] translate into a language"):
        manifest["translation"]["de-fr"] = manifest["translation"]["de-en"]
        build(manifest, tok_dir, ["de-en", "en-de"], {"de-fr": ["t"]}, tmp_path / "out2", target_vocab=300)


def test_a_result_scored_before_the_target_dictionary_is_refused(tmp_path):
    from common.io import write_json
    from common.nmt.describe import read_result

    old = tmp_path / "old.json"
    write_json(old, {"case": "lower-cased: the model's vocabulary is uncased", "main_score": 3.0})
    assert read_result({}, str(old))["main_score"] == 3.0  # the config without a dictionary of its own
    with pytest.raises(ValueError, match="old.json: scored in the encoder's uncased vocabulary"):
        read_result({"target_vocab": 8000}, str(old))
    new = tmp_path / "new.json"
    write_json(new, {"case": "cased", "main_score": 28.0})
    assert read_result({"target_vocab": 8000}, str(new))["main_score"] == 28.0
