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


def test_tsv_rows_with_a_leaking_column_are_dropped_and_counted():
    f = LeakageFilter(["A man sleeps."])
    kept, dropped = f.filter_tsv(["a man sleeps\tsomeone rests\tentailment", "x\tA MAN SLEEPS!\tneutral",
                                  "", "x\ty\tcontradiction"])
    assert kept == ["x\ty\tcontradiction"] and dropped == 2


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
    # the file lists its pairs source by source: cmn.txt's, then stsb-multi-mt's (train_sources counts them)
    (first, n_cmn), (second, n_stsb) = manifest["train_sources"]["cmn"]
    assert (first, second) == ("en_zh_tatoeba_cmn", "stsb_multi_mt") and n_cmn + n_stsb == len(train)
    cmn_txt = {(zh, en) for en, zh in loaders.read_tsv(data_root / "en_zh_tatoeba_cmn" / "cmn.txt", 2)}
    assert all(p in cmn_txt for p in train[:n_cmn]) and not any(p in cmn_txt for p in train[n_cmn:])
    assert leak["pairs_before"]["cmn"] - leak["dropped"]["cmn"] == len(train)
    assert manifest["bucc_benchmark"]["zh-en"]["test"]["gold"] == 150
    # BUCC's distractors are in no training pair (before the rule) and no other evaluation set; the excluded
    # candidates are counted
    from common.data.corpus_mini import _mini_training_pairs, evaluation_sentences

    elsewhere = {normalize(x) for sents in evaluation_sentences(data_root).values() for x in sents}
    elsewhere |= {normalize(x) for pairs in _mini_training_pairs(data_root, spec, {}, {}).values() for p in pairs
                  for x in p}
    for split in ("sample", "training", "test"):
        b = loaders.read_bucc(tmp_path / "bucc", "zh-en", split)
        gold_src, gold_trg = {s for s, _ in b.gold}, {t for _, t in b.gold}
        distractors = [x for i, x in b.src.items() if i not in gold_src] + [
            x for i, x in b.trg.items() if i not in gold_trg]
        assert distractors and not any(normalize(x) in elsewhere for x in distractors)
    assert leak["bucc_distractors_excluded"] == manifest["bucc_benchmark"]["zh-en"]["distractors_excluded"] > 0
    # the NLI multi-task file (XNLI dev English) under the same rule: none of its sentences is in BUCC
    bucc_sents = {normalize(x) for split in ("sample", "training", "test")
                  for b in [loaders.read_bucc(tmp_path / "bucc", "zh-en", split)]
                  for x in (*b.src.values(), *b.trg.values())}
    nli = loaders.read_xnli_tsv(manifest["nli_train"])
    assert leak["nli_dropped"] > 0 and not {normalize(x) for x in nli.premise + nli.hypothesis} & bucc_sents
    total = len(loaders.read_xnli_tsv(data_root / "xnli_dev" / "dev-en.tsv").premise)
    assert len(nli.premise) == total - leak["nli_dropped"]
