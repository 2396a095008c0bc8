from common.data import loaders
from common.data.corpus import prepare
from common.data.leakage import LeakageFilter, normalize


def test_normalize():
    assert normalize("Tom is here.") == normalize("  tom IS here ") == "tomishere"
    assert normalize("我 爱 你。") == normalize("我爱你")


def test_drops_pairs_with_either_side_and_counts():
    f = LeakageFilter(["Hello world.", "Bonjour."])
    kept, dropped = f.filter_pairs([("hallo welt", "hello world"), ("bonjour", "hi"), ("a", "b")])
    assert kept == [("a", "b")] and dropped == 2


def test_mini_corpus_has_no_evaluation_sentence(data_root, tmp_path):
    spec = {"multi30k": [], "cmn": True, "stsb_multi_mt": ["zh"], "bucc_pairs": ["zh"],
            "bucc_gold_fraction": 0.035, "seed": 1}
    manifest = prepare("mini", tmp_path, data_root, spec)
    leak = manifest["leakage"]
    # cmn.txt overlaps Tatoeba cmn-eng: the rule must have dropped those pairs and counted them.
    assert leak["dropped"]["cmn"] > 392
    xx, en = loaders.read_tatoeba(data_root / "tatoeba_v1", "cmn")
    evals = {normalize(s) for s in xx + en}
    train = loaders.read_tsv_pairs(manifest["train"]["cmn"])
    assert not any(normalize(a) in evals or normalize(b) in evals for a, b in train)
    assert leak["pairs_before"]["cmn"] - leak["dropped"]["cmn"] == len(train)
    # the BUCC-style benchmark: real BUCC layout, about 3.5 % gold, three splits
    for split in ("sample", "training", "test"):
        b = loaders.read_bucc(tmp_path / "bucc", "zh-en", split)
        assert 0.02 <= len(b.gold) / len(b.src) <= 0.05
