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
    spec = {"multi30k": [], "cmn": True, "stsb_multi_mt": ["zh"], "seed": 1,
            "bucc": {"pairs": ["zh"], "sources": ["stsb", "xnli", "xquad"],
                     "english_extra": ["iwslt", "xquad_contexts"],
                     "gold_per_split": {"sample": 50, "training": 150, "test": 150},
                     "english_per_split": 5000, "seed": 1}}
    manifest = prepare("mini", tmp_path, data_root, spec)
    leak = manifest["leakage"]
    # cmn.txt overlaps Tatoeba cmn-eng: the rule must have dropped those pairs and counted them.
    assert leak["dropped"]["cmn"] > 392
    xx, en = loaders.read_tatoeba(data_root / "tatoeba_v1", "cmn")
    evals = {normalize(s) for s in xx + en}
    for split in ("sample", "training", "test"):  # the BUCC-style benchmark is evaluation data too
        b = loaders.read_bucc(tmp_path / "bucc", "zh-en", split)
        evals |= {normalize(s) for s in (*b.src.values(), *b.trg.values())}
    train = loaders.read_tsv_pairs(manifest["train"]["cmn"])
    assert not any(normalize(a) in evals or normalize(b) in evals for a, b in train)
    assert leak["pairs_before"]["cmn"] - leak["dropped"]["cmn"] == len(train)
    assert manifest["bucc_benchmark"]["zh-en"]["test"]["gold"] == 150
