"""The readout check (common/eval/readout.py): its measures worked out by hand, and the three readouts of a saved
folder with a linear head."""
import math

import pytest
import torch
from torch import nn

from common.eval.readout import centred, main, mean_cosine_non_parallel, readout_check, singular_ratio
from common.models.embedder import load_embedder, save_sentence_encoder
from common.models.encoder import EncoderSpec, SentenceEncoder, build_encoder
from common.models.tokenizer import train_wordpiece

SENTS = ["the man sees a dog", "ku ma so", "a dog", "so li ku ma", "li so", "the dog"]


def test_a_shared_direction_shows_in_the_mean_cosine_and_centring_removes_it():
    """x = y = (10, +-1): every non-parallel pair (0, 1) and (1, 0) has cosine (100 - 1) / 101; the set's mean is
    (10, 0), so centred vectors are (0, +-1) and those pairs' cosine is -1."""
    x = torch.tensor([[10.0, 1.0], [10.0, -1.0]])
    assert mean_cosine_non_parallel(x, x.clone(), pairs=1000) == pytest.approx(99 / 101)
    cx, cy = centred(x, x.clone())
    assert torch.equal(cx, torch.tensor([[0.0, 1.0], [0.0, -1.0]])) and torch.equal(cy, cx)
    assert mean_cosine_non_parallel(cx, cy, pairs=1000) == pytest.approx(-1.0)


def test_random_non_parallel_pairs_never_pair_a_translation():
    """With fewer pairs drawn than exist, each draw pairs row i of x with another row of y: y's rows are x's negated,
    so a translation pair would count -1, every other pair (orthogonal one-hot rows) 0."""
    x = torch.eye(50)
    assert mean_cosine_non_parallel(x, -x, pairs=1000, seed=3) == 0.0
    with pytest.raises(ValueError, match="aligned sets"):
        mean_cosine_non_parallel(x, x[:10], pairs=10)


def test_singular_ratio_is_top_over_median():
    assert singular_ratio(torch.diag(torch.tensor([1.0, 4.0, 2.0]))) == pytest.approx(2.0)  # 4 / 2
    assert singular_ratio(torch.diag(torch.tensor([8.0, 1.0, 3.0, 1.0]))) == pytest.approx(4.0)  # 8 / ((3 + 1) / 2)
    rotation = torch.tensor([[math.cos(0.3), -math.sin(0.3)], [math.sin(0.3), math.cos(0.3)]])
    assert singular_ratio(rotation @ torch.diag(torch.tensor([6.0, 2.0]))) == pytest.approx(6 / 4)


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    """One tiny encoder saved twice: with a 16 -> 4 head (a Dense module) and without."""
    root = tmp_path_factory.mktemp("readout")
    tok = train_wordpiece(SENTS * 3, 60, root / "tok", min_frequency=1)
    torch.manual_seed(0)
    enc = SentenceEncoder(build_encoder(EncoderSpec(hidden_size=16, num_layers=1, num_heads=2, intermediate_size=32),
                                        len(tok)), "mean").eval()
    head = nn.Linear(16, 4, bias=False)
    save_sentence_encoder(enc, tok, root / "head", max_length=8, projection=head)
    save_sentence_encoder(enc, tok, root / "plain", max_length=8)
    tatoeba = root / "tatoeba"
    tatoeba.mkdir()
    (tatoeba / "tatoeba.xxx-eng.xxx").write_text("ku ma so\nso li ku ma\nli so\n")
    (tatoeba / "tatoeba.xxx-eng.eng").write_text("the man sees a dog\na dog\nthe dog\n")
    return root, head.weight.detach(), {"tatoeba_dir": str(tatoeba), "tatoeba_languages": ["xxx"]}


def test_the_three_readouts_of_a_folder_with_a_head(folders):
    """``pooled`` is what the same encoder saved without the head scores; ``centred`` is the saved vectors minus
    their set's mean; the head's ratio is its weight's; the embedder keeps its head afterwards."""
    root, weight, manifest = folders
    embedder = load_embedder(root / "head")
    before = embedder.encode(["li so"], "xxx")
    out = readout_check(embedder, manifest, pairs=1000)
    plain = readout_check(load_embedder(root / "plain"), manifest, pairs=1000)
    assert out["head"] == ["16->4"] and plain["head"] == []
    assert out["head_singular_ratio"] == [pytest.approx(singular_ratio(weight))]
    assert out["per_language"]["pooled"] == plain["per_language"]["saved"]
    x, y = embedder.encode(["ku ma so", "so li ku ma", "li so"], "xxx"), embedder.encode(
        ["the man sees a dog", "a dog", "the dog"], "en")
    assert out["per_language"]["centred"]["xxx"]["mean_cosine"] == pytest.approx(
        mean_cosine_non_parallel(*centred(x, y), pairs=1000))
    assert out["per_language"]["saved"]["xxx"]["mean_cosine"] == pytest.approx(  # the head on the pooled vectors
        mean_cosine_non_parallel(x, y, pairs=1000))
    assert out["summary"]["saved"] == out["per_language"]["saved"]["xxx"]
    assert torch.equal(embedder.encode(["li so"], "xxx"), before)


def test_the_command_line_writes_one_entry_per_model(folders, tmp_path):
    import json

    root, _, tatoeba = folders
    manifest = {"kind": "files", "train": {}, "train_languages": [], "leakage": {}, "bucc_dir": "", "bucc_pairs": [],
                **tatoeba}
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    main([str(root / "head"), str(root / "plain"), "--corpus", str(tmp_path / "manifest.json"),
          "--out", str(tmp_path / "r.json")])
    out = json.loads((tmp_path / "r.json").read_text())
    assert [r["model"] for r in out] == [str(root / "head"), str(root / "plain")]
    assert out[0]["per_language"]["pooled"] == out[1]["per_language"]["saved"]
