"""Download code against a local HTTP server serving small files in the real formats."""
import hashlib
import zipfile
from pathlib import Path

import pytest

from common.data import download as dl
from common.data import loaders

from .mirror import _tar_bz2, _zip, serve


def serve_bucc_one_pair(root: Path, xx: str, text: str) -> None:
    """The three BUCC 2018 archives of ``xx-en``, one gold pair per split (the test split has no gold file)."""
    for split, s in (("sample-gold", "sample"), ("training-gold", "training"), ("test", "test")):
        src = f"{text} (test)" if s == "test" else text  # the test split's own sentence
        members = {f"bucc2018/{xx}-en/{xx}-en.{s}.{xx}": f"{xx}-000001\t{src}\n",
                   f"bucc2018/{xx}-en/{xx}-en.{s}.en": "en-000001\tHello\n"}
        if split != "test":
            members[f"bucc2018/{xx}-en/{xx}-en.{s}.gold"] = f"{xx}-000001\ten-000001\n"
        serve(root, dl.bucc2018(f"{xx}-en", split).url, _tar_bz2(members))


def test_pinned_sha256_and_mismatch(server, tmp_path):
    root, base = server
    src, eng = b"Hallo Welt.\nGuten Tag.\n", b"Hello world.\nGood day.\n"
    res = dl.tatoeba("deu", "0" * 64, "0" * 64)
    sha_src, sha_eng = serve(root, res[0].url, src), serve(root, res[1].url, eng)
    d = dl.Downloader(tmp_path / "dl", base_url=base)
    for r, sha in zip(dl.tatoeba("deu", sha_src, sha_eng), (sha_src, sha_eng)):
        assert dl.sha256_file(d.fetch(r)) == sha
    xx, en = loaders.read_tatoeba(tmp_path / "dl" / "tatoeba", "deu")
    assert xx == ["Hallo Welt.", "Guten Tag."] and en[0] == "Hello world."
    with pytest.raises(dl.ChecksumError, match=r"tatoeba/tatoeba\.fra-eng\.fra: sha256 .* does not match"):
        serve(root, dl.tatoeba("fra", "1" * 64, "1" * 64)[0].url, b"x\n")
        d.fetch(dl.tatoeba("fra", "1" * 64, "1" * 64)[0])
    assert not (tmp_path / "dl" / "tatoeba" / "tatoeba.fra-eng.fra").exists()  # nothing half-written


def test_shipped_tatoeba_pins_match_shared_data(data_root):
    import yaml

    pins = yaml.safe_load((Path(dl.__file__).parent / "tatoeba_v1.sha256.yaml").read_text())
    assert len(pins) == 36
    assert dl.sha256_file(data_root / "tatoeba_v1" / "tatoeba.deu-eng.deu") == pins["deu"]["src"]


def test_opus_moses_revision_lock(server, tmp_path):
    root, base = server
    res = dl.opus_moses("Europarl", "v8", "en", "de")
    serve(root, res.url, _zip({"Europarl.de-en.de": "Hallo\nWelt\n", "Europarl.de-en.en": "Hello\nWorld\n",
                               "LICENSE": "CC-BY"}))
    d = dl.Downloader(tmp_path / "dl", base_url=base)
    path = d.fetch(res)
    assert dl.read_opus_moses(path, "Europarl", "en", "de") == [("Hello", "Hallo"), ("World", "Welt")]
    assert dl.read_opus_moses(path, "Europarl", "de", "en")[0] == ("Hallo", "Hello")
    assert "trust on first use" in (tmp_path / "dl" / "downloads.lock.json").read_text()
    # the same versioned URL later serving other bytes is refused
    path.unlink()
    serve(root, res.url, b"changed")
    with pytest.raises(dl.ChecksumError):
        dl.Downloader(tmp_path / "dl", base_url=base).fetch(res)


def test_bucc_archive_to_loader_layout(server, tmp_path):
    root, base = server
    files = {"bucc2018/de-en/de-en.training.de": "de-000001\tHallo Welt\nde-000002\tNein\n",
             "bucc2018/de-en/de-en.training.en": "en-000001\tHello world\nen-000002\tMaybe\n",
             "bucc2018/de-en/de-en.training.gold": "de-000001\ten-000001\n"}
    res = dl.bucc2018("de-en", "training-gold")
    serve(root, res.url, _tar_bz2(files))
    d = dl.Downloader(tmp_path / "dl", base_url=base)
    extracted = dl.extract(d.fetch(res), tmp_path / "x")
    dl.bucc_layout(extracted, tmp_path / "bucc")
    split = loaders.read_bucc(tmp_path / "bucc", "de-en", "training")
    assert split.gold == {("de-000001", "en-000001")}


def test_xnli_zip_to_per_language_files(server, tmp_path):
    root, base = server
    header = "language\tgold_label\tsentence1_binary_parse\tsentence2_binary_parse\tsentence1\tsentence2"
    rows = ["de\tentailment\t-\t-\tEr kam.\tJemand kam.", "en\tcontradiction\t-\t-\tHe came.\tNobody came."]
    serve(root, dl.xnli().url, _zip({"XNLI-1.0/xnli.test.tsv": "\n".join([header, *rows]) + "\n"}))
    path = dl.Downloader(tmp_path / "dl", base_url=base).fetch(dl.xnli())
    out = dl.extract(path, tmp_path / "x")
    langs = dl.split_xnli_test(out / "XNLI-1.0" / "xnli.test.tsv", tmp_path / "xnli")
    assert langs == ["de", "en"]
    de = loaders.read_xnli_tsv(tmp_path / "xnli" / "test-de.tsv")
    assert de.premise == ["Er kam."] and de.label == [0]


def test_unsafe_archive_rejected(tmp_path):
    bad = tmp_path / "bad.zip"
    with zipfile.ZipFile(bad, "w") as z:
        z.writestr("../evil.txt", "x")
    with pytest.raises(ValueError, match="unsafe member"):
        dl.extract(bad, tmp_path / "out")


def test_unpinned_resource_is_refused():
    with pytest.raises(ValueError, match="pinned"):
        dl.Resource("x", "https://example.org/x")


def _files_when_sampling(monkeypatch, module, train_dir: Path) -> list[list[str]]:
    """The training files already written each time ``module`` draws a language's sample: a paper-scale corpus
    holds one language's sample at a time, so each is written before the next is drawn."""
    seen: list[list[str]] = []
    real = module.reservoir_sample

    def spy(items, cap, rng):
        seen.append(sorted(p.name for p in train_dir.glob("*.tsv")))
        return real(items, cap, rng)

    monkeypatch.setattr(module, "reservoir_sample", spy)
    return seen


def test_paper_corpus_from_local_mirror(server, tmp_path, data_root, monkeypatch):
    import yaml

    from common.data import corpus_paper
    from common.data.corpus import prepare

    root, base = server
    pins = yaml.safe_load((Path(dl.__file__).parent / "tatoeba_v1.sha256.yaml").read_text())
    for lang, sha in pins.items():  # the real Tatoeba files, checked against the pinned digests
        for res in dl.tatoeba(lang, sha["src"], sha["eng"]):
            serve(root, res.url, (data_root / "tatoeba_v1" / Path(res.name).name).read_bytes())
    tat_de = (data_root / "tatoeba_v1" / "tatoeba.deu-eng.deu").read_text().splitlines()
    # the last pairs leak a Tatoeba sentence and the BUCC *test* split's sentence (the split that is reported)
    de = [f"Satz {i}." for i in range(50)] + [tat_de[0], "Hallo (test)"]
    en = [f"Sentence {i}." for i in range(50)] + ["anything", "something"]
    serve(root, dl.opus_moses("Europarl", "v8", "de", "en").url,
          _zip({"Europarl.de-en.de": "\n".join(de) + "\n", "Europarl.de-en.en": "\n".join(en) + "\n"}))
    serve_bucc_one_pair(root, "de", "Hallo")
    header = "language\tgold_label\tsentence1\tsentence2"
    serve(root, dl.xnli().url, _zip({"XNLI-1.0/xnli.test.tsv":
                                     f"{header}\nde\tneutral\tA b.\tC d.\nen\tneutral\tE.\tF.\n"}))
    serve(root, dl.multinli().url, _zip({"multinli_1.0/multinli_1.0_train.txt":
                                         "gold_label\tsentence1\tsentence2\nentailment\tX y.\tX.\n-\tZ.\tW.\n"}))
    spec = {"opus_languages": ["de", "fr"], "opus_corpora": [["Europarl", "v8"]], "max_pairs_per_language": 60,
            "bucc_pairs": ["de"], "seed": 1}
    written = _files_when_sampling(monkeypatch, corpus_paper, tmp_path / "corpus" / "train")
    m = prepare("paper", tmp_path / "corpus", "", spec, base_url=base)
    assert written == [[], ["deu-en.tsv"]]
    assert m["opus_skipped"] == ["Europarl/v8 fr-en"]  # not served: 404, skipped and listed
    train = loaders.read_tsv_pairs(m["train"]["deu"])
    assert len(train) == 50 and m["leakage"]["dropped"]["deu"] == 2  # the Tatoeba and the BUCC test sentence
    assert all(a not in (tat_de[0], "Hallo (test)") for a, _ in train)
    assert loaders.read_bucc(m["bucc_dir"], "de-en", "training").gold == {("de-000001", "en-000001")}
    assert m["bucc_splits"] == {"tune": "sample", "test": "training"}  # public protocol: the test gold is not public
    gold_dir = tmp_path / "gold"
    gold_dir.mkdir()
    (gold_dir / "de-en.test.gold").write_text("de-000001\ten-000001\n")
    m = prepare("paper", tmp_path / "corpus2", "", {**spec, "bucc_test_gold_dir": str(gold_dir)}, base_url=base)
    assert m["bucc_splits"] == {"tune": "training", "test": "test"}  # DAP appendix B, with the gold supplied
    assert loaders.read_bucc(m["bucc_dir"], "de-en", "test").gold == {("de-000001", "en-000001")}
    assert len(loaders.read_xnli_tsv(m["xnli_train"])) == 1 and m["nli_languages"] == ["de", "en"]
    assert len(m["tatoeba_languages"]) == 36


def test_moco_paper_corpus_from_local_mirror(server, tmp_path, data_root):
    """MoCo-BERT Table 7: OPUS corpora sampled to their sizes, a CWMT corpus read from the
    manual folder, duplicates removed, the leakage rule against Tatoeba cmn / BUCC / STS."""
    import yaml

    from common.data.corpus import prepare

    root, base = server
    pins = yaml.safe_load((Path(dl.__file__).parent / "tatoeba_v1.sha256.yaml").read_text())
    for res in dl.tatoeba("cmn", pins["cmn"]["src"], pins["cmn"]["eng"]):
        serve(root, res.url, (data_root / "tatoeba_v1" / Path(res.name).name).read_bytes())
    tat_zh = (data_root / "tatoeba_v1" / "tatoeba.cmn-eng.cmn").read_text().splitlines()
    sts_en = loaders.read_stsb(data_root / "sts" / "stsbenchmark" / "sts-test.csv").sent1[0]
    corpora = {"Tatoeba": ("v2023-04-12", [(f"句子{i}", f"Sentence {i}.") for i in range(10)] + [(tat_zh[0], "leaks")]),
               "News-Commentary": ("v16", [("新闻", "News.")] * 3 + [("另一个", sts_en)]),
               "UNPC": ("v1.0", [(f"联合国{i}", f"UN {i}.") for i in range(40)])}
    for corpus, (version, pairs) in corpora.items():
        serve(root, dl.opus_moses(corpus, version, "zh", "en").url,
              _zip({f"{corpus}.en-zh.en": "".join(e + "\n" for _, e in pairs),
                    f"{corpus}.en-zh.zh": "".join(z + "\n" for z, _ in pairs)}))
    serve_bucc_one_pair(root, "zh", "你好")
    header = "gold_label\tsentence1\tsentence2\n"
    serve(root, dl.multinli().url, _zip({"multinli_1.0/multinli_1.0_train.txt":
                                         header + "entailment\tX y.\tX.\n-\tZ.\tW.\n"}))
    serve(root, dl.snli().url, _zip({"snli_1.0/snli_1.0_train.txt": header + "neutral\tA man.\tA tall man.\n"}))
    spec = {"corpora": [{"name": "Tatoeba", "kind": "opus", "corpus": "Tatoeba", "version": "v2023-04-12"},
                        {"name": "NC", "kind": "opus", "corpus": "News-Commentary", "version": "v16"},
                        {"name": "UN", "kind": "opus", "corpus": "UNPC", "version": "v1.0"},
                        {"name": "CWMT-x", "kind": "manual", "note": "registration required"}],
            "sample_sizes": {"Tatoeba": 100, "NC": 100, "UN": 25, "CWMT-x": 100}, "bucc_pairs": ["zh"], "seed": 1}
    with pytest.raises(FileNotFoundError, match=r"CWMT-x: registration required; place .*manual/CWMT-x\.zh"):
        prepare("paper_enzh", tmp_path / "corpus", data_root, spec, base_url=base)
    (tmp_path / "corpus" / "manual").mkdir(parents=True)
    (tmp_path / "corpus" / "manual" / "CWMT-x.zh").write_text("甲\n乙\n")
    (tmp_path / "corpus" / "manual" / "CWMT-x.en").write_text("A.\nB.\n")
    m = prepare("paper_enzh", tmp_path / "corpus", data_root, spec, base_url=base)
    assert m["sampled"] == {"Tatoeba": 11, "NC": 4, "UN": 25, "CWMT-x": 2}
    assert m["leakage"]["duplicates_removed"] == 2  # the repeated News Commentary pair
    assert m["leakage"]["dropped_total"] == 2  # a Tatoeba cmn sentence and an STS-B test sentence
    train = loaders.read_tsv_pairs(m["train"]["cmn"])
    assert len(train) == 11 + 4 + 25 + 2 - 2 - 2 and all(z != tat_zh[0] for z, _ in train)
    assert loaders.read_bucc(m["bucc_dir"], "zh-en", "training").gold == {("zh-000001", "en-000001")}
    assert len(loaders.read_xnli_tsv(m["nli_train"])) == 2  # MNLI's labelled pair + SNLI's


def test_question_retrieval_converters(tmp_path):
    """PAQ (NQ-open JSON lines), DPR's nq-test.qa.csv (tab-separated, Python list literals, CSV quoting) and MKQA
    (gzipped JSON lines, English answers and aliases) -> the question files of common.eval.question_retrieval."""
    import gzip
    import json

    from common.data.questions import read_questions

    (tmp_path / "paq.jsonl").write_text('{"question": "who wrote hamlet", "answer": ["William Shakespeare"]}\n'
                                        '{"question": "capital of france", "answer": ["Paris"]}\n')
    assert dl.paq_to_bank(tmp_path / "paq.jsonl", tmp_path / "bank.jsonl") == 2
    assert read_questions(tmp_path / "bank.jsonl")[1] == {"id": "paq2", "question": "capital of france",
                                                          "answers": ["Paris"]}
    (tmp_path / "nq.csv").write_text("who got the first nobel prize in physics\t['Wilhelm Conrad Röntgen']\n"
                                     '"what is ""the"" answer"\t[\'a\', "b\'s"]\n', encoding="utf-8")
    assert dl.nq_to_queries(tmp_path / "nq.csv", tmp_path / "nq.jsonl") == 2
    q = read_questions(tmp_path / "nq.jsonl")
    assert q[0]["answers"] == ["Wilhelm Conrad Röntgen"] and q[1] == {"id": "nq2", "question": 'what is "the" answer',
                                                                        "answers": ["a", "b's"]}
    (tmp_path / "bad.csv").write_text("ok\t['x']\nno answers here\n")
    with pytest.raises(ValueError, match=r"bad\.csv:2: expected"):
        dl.nq_to_queries(tmp_path / "bad.csv", tmp_path / "bad.jsonl")
    records = [{"example_id": 7,
                "queries": {"en": "who wrote hamlet", "de": "wer schrieb hamlet", "zh_cn": "谁写了哈姆雷特"},
                "answers": {"en": [{"type": "entity", "text": "William Shakespeare", "aliases": ["Shakespeare"]}]}},
               {"example_id": 8, "queries": {"en": "is it raining", "de": "regnet es"},
                "answers": {"en": [{"type": "unanswerable", "text": None}]}}]
    with gzip.open(tmp_path / "mkqa.jsonl.gz", "wt", encoding="utf-8") as fh:
        fh.write("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))
    paths = dl.mkqa_to_queries(tmp_path / "mkqa.jsonl.gz", tmp_path, ["de", "zh_cn"])
    assert sorted(paths) == ["de", "zh"]  # MKQA's zh_cn is Table 12's zh
    (de,) = read_questions(paths["de"])  # the unanswerable question is left out
    assert de == {"id": "mkqa7", "question": "wer schrieb hamlet", "answers": ["William Shakespeare", "Shakespeare"]}
    assert read_questions(paths["zh"])[0]["question"] == "谁写了哈姆雷特"
    # malformed records name the file and the line
    from common.io import DataFormatError

    (tmp_path / "paq.jsonl").write_text('{"question": "q", "answer": ["a"]}\n{"question": "q", "answer": "Paris"}\n')
    with pytest.raises(DataFormatError, match=r"paq\.jsonl:2: expected \{'question': str, 'answer': \[str"):
        dl.paq_to_bank(tmp_path / "paq.jsonl", tmp_path / "bank.jsonl")
    with gzip.open(tmp_path / "mkqa.jsonl.gz", "wt", encoding="utf-8") as fh:
        fh.write(json.dumps({k: v for k, v in records[0].items() if k != "example_id"}) + "\n")
    with pytest.raises(DataFormatError, match=r"mkqa\.jsonl\.gz:1: expected an MKQA record with 'example_id'"):
        dl.mkqa_to_queries(tmp_path / "mkqa.jsonl.gz", tmp_path, ["de"])


def test_nli_converters_name_the_file_and_count_short_rows(tmp_path, caplog):
    from common.io import DataFormatError

    (tmp_path / "train.txt").write_text("gold_label\tx\tsentence1\tsentence2\nentailment\t-\tA  man.\tA person.\n"
                                        "-\t-\tA.\tB.\ncut short\n\nneutral\t-\tC.\tD.\n")
    with caplog.at_level("WARNING"):
        assert dl.multinli_train_to_tsv(tmp_path / "train.txt", tmp_path / "out.tsv") == 2  # '-' and the short row
    assert "1 rows without the gold_label, sentence1 and sentence2 columns skipped (lines [4])" in caplog.text
    assert (tmp_path / "out.tsv").read_text() == "A man.\tA person.\tentailment\nC.\tD.\tneutral\n"
    (tmp_path / "xnli.test.tsv").write_text("language\tgold_label\tsentence1\n")
    with pytest.raises(DataFormatError, match=r"xnli\.test\.tsv:1: no column \['sentence2'\] in the header"):
        dl.split_xnli_test(tmp_path / "xnli.test.tsv", tmp_path / "xnli")


def test_vmsst_paper_corpus_from_local_mirror(server, tmp_path, data_root, monkeypatch):
    """VMSST section 6.1 / appendix B: OPUS bitexts with English and Spanish pivots sampled to Table 15's counts,
    all 112 Tatoeba languages (pinned), BUCC, PAQ / NQ / MKQA; the leakage rule over every evaluation set."""
    import gzip
    import json

    import yaml

    from common.data import corpus_vmsst
    from common.data.corpus import prepare
    from common.data.questions import read_questions

    root, base = server
    pins = yaml.safe_load((Path(dl.__file__).parent / "tatoeba_v1_all.sha256.yaml").read_text())
    assert len(pins) == 112
    for lang, sha in pins.items():
        for res in dl.tatoeba(lang, sha["src"], sha["eng"]):
            serve(root, res.url, (data_root / "tatoeba_v1" / Path(res.name).name).read_bytes())
    tat_de = (data_root / "tatoeba_v1" / "tatoeba.deu-eng.deu").read_text().splitlines()
    sts17_es = (data_root / "sts" / "sts17" / "STS2017.eval.v1.1" / "STS.input.track3.es-es.txt").read_text(
        encoding="utf-8").splitlines()[0].split("\t")[0]
    de_en = [(f"Satz {i}.", f"Sentence {i}.") for i in range(30)] + [(tat_de[0], "a Tatoeba sentence")]
    de_es = [(f"Satz {i}.", f"Frase {i}.") for i in range(100, 110)] + [("Satz x.", sts17_es)]
    es_en = [(f"Frase {i}.", f"Sentence {i}.") for i in range(20)] + [("¿quién escribió hamlet?", "who wrote hamlet")]
    for (src, trg), pairs in {("de", "en"): de_en, ("de", "es"): de_es, ("en", "es"): es_en}.items():
        a, b = sorted((src, trg))
        cols = {src: [p[0] for p in pairs], trg: [p[1] for p in pairs]}
        serve(root, dl.opus_moses("Europarl", "v8", src, trg).url,
              _zip({f"Europarl.{a}-{b}.{x}": "".join(s + "\n" for s in cols[x]) for x in (a, b)}))
    serve_bucc_one_pair(root, "de", "Hallo")
    serve(root, dl.paq().url, _tar_bz2({"PAQ/PAQ.filtered.jsonl":
                                        '{"question": "who wrote macbeth", "answer": ["William Shakespeare"]}\n'},
                                       "w:gz"))
    serve(root, dl.nq_test().url, b"who wrote hamlet\t['William Shakespeare']\n")
    mkqa = {"example_id": 1, "queries": {"de": "wer schrieb hamlet", "es": "¿quién escribió hamlet?"},
            "answers": {"en": [{"type": "entity", "text": "William Shakespeare", "aliases": []}]}}
    serve(root, dl.mkqa().url, gzip.compress((json.dumps(mkqa, ensure_ascii=False) + "\n").encode()))
    spec = {"languages": {"de": 1000, "es": 15, "en": 15, "fr": 10}, "pivots": ["en", "es"],
            "opus_corpora": [["Europarl", "v8"]], "bucc_pairs": ["de"], "mkqa_languages": ["de", "es"], "seed": 1}
    written = _files_when_sampling(monkeypatch, corpus_vmsst, tmp_path / "corpus" / "train")
    m = prepare("paper_vmsst", tmp_path / "corpus", data_root, spec, base_url=base)
    assert written == [[], ["deu-en.tsv", "deu-spa.tsv"], ["deu-en.tsv", "deu-spa.tsv", "spa-en.tsv"]]
    assert sorted(m["train"]) == ["deu", "deu-spa", "spa"]  # "<xx>" pairs with English, "<xx>-spa" with Spanish
    assert m["opus_skipped"] == ["Europarl/v8 fr-en", "Europarl/v8 fr-es"]  # not served: 404, skipped and listed
    assert len(loaders.read_tsv_pairs(m["train"]["deu"])) == 30 and m["leakage"]["dropped"]["deu"] == 1  # Tatoeba
    assert len(loaders.read_tsv_pairs(m["train"]["deu-spa"])) == 10 and m["leakage"]["dropped"]["deu-spa"] == 1  # STS17
    # es: Table 15's count of Spanish-English pairs (15 of 21 sampled); the NQ / MKQA question is never trained on
    spa = loaders.read_tsv_pairs(m["train"]["spa"])
    assert len(spa) + m["leakage"]["dropped"]["spa"] == 15 and all(e != "who wrote hamlet" for _, e in spa)
    assert m["train_languages"] == ["deu", "spa"] and len(m["tatoeba_languages"]) == 112
    qr = m["question_retrieval"]
    assert read_questions(qr["bank"])[0]["question"] == "who wrote macbeth"
    assert read_questions(qr["nq"]["en"])[0]["answers"] == ["William Shakespeare"]
    assert sorted(qr["mkqa"]) == ["de", "es"] and not (tmp_path / "corpus" / "tmp_paq").exists()


def _squad_json(items: list[tuple[str, str, str, str]]) -> str:
    """SQuAD v1.1 JSON from (id, context, question, answer) tuples."""
    import json

    return json.dumps({"data": [{"title": "t", "paragraphs": [
        {"context": c, "qas": [{"id": i, "question": q, "answers": [{"text": a, "answer_start": c.index(a)}]}]}
        for i, c, q, a in items]}]})


def test_hictl_paper_corpus_from_local_mirror(server, tmp_path, data_root, monkeypatch):
    """HICTL section 4.1 / appendix A and XTREME's task data: OPUS pairs sampled to Table 8's counts, CC-100 lines,
    XNLI (+ XNLI-MT), PAWS-X, UD POS (CoNLL-U), PAN-X (placed by hand), SQuAD / XQuAD / MLQA / TyDiQA-GoldP (+ the
    translated SQuAD), BUCC, Tatoeba; the leakage rule over every evaluation set, monolingual lines included."""
    import lzma

    import yaml

    from common.data import translation_paper as tp
    from common.data import xtreme
    from common.data.corpus import prepare
    from common.data.squad import read_squad
    from common.eval.token_classification import read_conll

    root, base = server
    pins = yaml.safe_load((Path(dl.__file__).parent / "tatoeba_v1.sha256.yaml").read_text())
    for lang, sha in pins.items():
        for res in dl.tatoeba(lang, sha["src"], sha["eng"]):
            serve(root, res.url, (data_root / "tatoeba_v1" / Path(res.name).name).read_bytes())
    tat_de = (data_root / "tatoeba_v1" / "tatoeba.deu-eng.deu").read_text().splitlines()
    de = [f"Satz {i}." for i in range(20)] + [tat_de[0]]
    en = [f"Sentence {i}." for i in range(20)] + ["leaks"]
    serve(root, dl.opus_moses("EUbookshop", "v2", "de", "en").url,
          _zip({"EUbookshop.de-en.de": "\n".join(de) + "\n", "EUbookshop.de-en.en": "\n".join(en) + "\n"}))
    serve(root, xtreme.cc100("de").url, lzma.compress(b"Ein Dokument.\nC de.\n\nDrittes.\n"))
    serve(root, xtreme.cc100("zh").url, lzma.compress("一个文件。\n\nA paraphrase test sentence.\n".encode()))
    serve_bucc_one_pair(root, "de", "Hallo")
    header = "language\tgold_label\tsentence1\tsentence2"
    serve(root, dl.xnli().url, _zip({"XNLI-1.0/xnli.test.tsv":
                                     f"{header}\nde\tneutral\tA b.\tC d.\nen\tneutral\tE.\tF.\n"}))
    serve(root, dl.multinli().url, _zip({"multinli_1.0/multinli_1.0_train.txt":
                                         "gold_label\tsentence1\tsentence2\nentailment\tX y.\tX.\n"}))
    serve(root, xtreme.xnli_mt().url, _zip({"XNLI-MT-1.0/multinli/multinli.train.de.tsv":
                                            "premise\thypo\tlabel\nX y de.\tX de.\tcontradictory\n"}))
    paws_head = "id\tsentence1\tsentence2\tlabel\n"
    serve(root, xtreme.pawsx().url, _tar_bz2({
        "x-final/en/train.tsv": paws_head + "1\tA paraphrase test sentence.\tB.\t1\n",
        "x-final/en/test_2k.tsv": paws_head + "2\tC.\tD.\t0\n",
        "x-final/de/test_2k.tsv": paws_head + "2\tC de.\tD de.\t0\n",
        "x-final/de/translated_train.tsv": paws_head + "1\tA de.\tB de.\t1\n"}, "w:gz"))
    conllu = "# text = Das Haus\n1\tDas\tder\tDET\t_\t_\t2\tdet\t_\t_\n1-2\tzum\t_\t_\t_\t_\t_\t_\t_\t_\n" \
             "2\tHaus\tHaus\tNOUN\t_\t_\t0\troot\t_\t_\n\n"
    serve(root, xtreme.udpos().url, _tar_bz2({
        "ud-treebanks-v2.5/UD_English-EWT/en_ewt-ud-train.conllu":
            conllu.replace("Das", "The").replace("Haus", "house"),
        "ud-treebanks-v2.5/UD_German-GSD/de_gsd-ud-test.conllu": conllu,
        "ud-treebanks-v2.5/UD_German-HDT/de_hdt-ud-test.conllu": conllu}, "w:gz"))
    manual = tmp_path / "corpus" / "manual" / "panx_dataset"
    manual.mkdir(parents=True)
    for lang in ("en", "de"):
        (manual / f"{lang}.tar.gz").write_bytes(_tar_bz2({"train": f"{lang}:Paris\tB-LOC\n{lang}:is\tO\n\n",
                                                           "test": f"{lang}:Anna\tB-PER\n\n"}, "w:gz"))
    squad = _squad_json([("s1", "The cat sat on the mat.", "Where did the cat sit?", "on the mat")])
    serve(root, xtreme.squad_train().url, squad.encode())
    serve(root, xtreme.squad_translate_train("de").url,
          _squad_json([("s1d", "Die Katze sass auf der Matte.", "Wo sass die Katze?", "auf der Matte")]).encode())
    xq = {lang: _squad_json([(f"x-{lang}", f"Context {lang}.", f"Question {lang}?", lang)]).encode()
          for lang in ("en", "de")}
    monkeypatch.setattr(xtreme, "XQUAD_SHA256", {lang: hashlib.sha256(b).hexdigest() for lang, b in xq.items()})
    for lang, body in xq.items():
        serve(root, xtreme.xquad(lang).url, body)
    serve(root, xtreme.mlqa().url, _zip({f"MLQA_V1/test/test-context-{x}-question-{x}.json":
                                         _squad_json([(f"m-{x}", f"Kontext {x}.", f"Frage {x}?", x)])
                                         for x in ("en", "de")}))
    serve(root, xtreme.tydiqa("train").url, _squad_json([("english-1", "Tydi context.", "Tydi q?", "Tydi")]).encode())
    serve(root, xtreme.tydiqa("dev").url, _squad_json([("english-2", "Dev ctx.", "Dev q?", "Dev"),
                                                       ("swahili-3", "Sw ctx.", "Sw q?", "Sw")]).encode())
    # section 4.2's translation data (one test-only language here); its test sets join the leakage rule
    stem = "wikipedia_en_ne_si_test_sets/wikipedia.devtest.ne-en"
    flores = serve(root, f"https://raw.githubusercontent.com/facebookresearch/flores/{tp.FLORES_COMMIT}/"
                         "previous_releases/floresv1/data/wikipedia_en_ne_si_test_sets.tgz",
                   _tar_bz2({f"{stem}.ne": "Ne.\n", f"{stem}.en": "Sentence 3.\n"}, "w:gz"))
    monkeypatch.setattr(tp, "FLORES_V1_SHA256", flores)
    monkeypatch.setattr(tp, "LANGUAGES", tp._languages())
    spec = {"monolingual": {"languages": ["de", "zh"], "sentences_per_language": 5},
            "parallel": {"de": {"corpora": [["EUbookshop", "v2"], ["Tanzil", "v1"]], "pairs": 100}},
            "translation": {"languages": ["ne"]},
            "xtreme": {"pawsx_languages": ["en", "de"], "pos_languages": ["de"], "ner_languages": ["en", "de"],
                       "xquad_languages": ["en", "de"], "mlqa_languages": ["en", "de"], "translate_train": True},
            "bucc_pairs": ["de"], "seed": 1}
    m = prepare("paper_hictl", tmp_path / "corpus", data_root, spec, base_url=base)
    assert m["opus_skipped"] == ["Tanzil/v1 de-en"]
    # a Tatoeba sentence and the FLoRes test sentence leak
    assert len(loaders.read_tsv_pairs(m["train"]["deu"])) == 19 and m["leakage"]["dropped"]["deu"] == 2
    assert sorted(m["translation"]) == ["ne-en"]
    # CC-100: non-empty lines; "C de." is a PAWS-X test sentence (dropped); the Chinese file's English line is a
    # PAWS-X *train* sentence, not evaluation data (kept)
    assert sorted(Path(m["monolingual"]["de"]).read_text().splitlines()) == ["Drittes.", "Ein Dokument."]
    assert m["leakage"]["monolingual_dropped"] == {"de": 1, "zh": 0}
    assert len(Path(m["monolingual"]["zh"]).read_text().splitlines()) == 2
    assert m["xnli_translate_train"]["de"].endswith("translate_train-de.tsv")
    assert loaders.read_xnli_tsv(m["xnli_translate_train"]["de"]).label == [2]  # 'contradictory' -> contradiction
    paws = m["pair_classification"]["pawsx"]
    assert sorted(paws["test"]) == ["de", "en"] and loaders.read_pawsx_tsv(paws["translate_train"]["de"]).label == [1]
    pos = m["token_classification"]["udpos"]
    assert read_conll(pos["train"]) == [(["The", "house"], ["DET", "NOUN"])]  # the multi-word token line skipped
    assert len(read_conll(pos["test"]["de"])) == 2  # both German test treebanks pooled
    assert read_conll(m["token_classification"]["panx"]["test"]["de"]) == [(["Anna"], ["B-PER"])]
    qa = m["qa"]
    assert [e.answers for e in read_squad(qa["xquad"]["test"]["de"])] == [["de"]]
    assert sorted(qa["mlqa"]["test"]) == ["de", "en"] and sorted(qa["tydiqa"]["test"]) == ["en", "sw"]
    assert read_squad(qa["xquad"]["translate_train"]["de"])[0].answers == ["auf der Matte"]
    assert len(m["tatoeba_languages"]) == 36


def test_panx_without_the_manual_download_says_where(tmp_path):
    from common.data import xtreme

    with pytest.raises(FileNotFoundError, match=r"manual download.*panx_dataset/en\.tar\.gz"):
        xtreme.panx_layout(tmp_path / "manual", tmp_path, ["en"])


def test_panx_lines_need_their_language_prefix_and_archives_their_members(tmp_path):
    import tarfile

    from common.data import xtreme
    from common.io import DataFormatError

    def archive(members):
        (tmp_path / "src").mkdir(exist_ok=True)
        (tmp_path / "manual" / "panx_dataset").mkdir(parents=True, exist_ok=True)
        with tarfile.open(tmp_path / "manual" / "panx_dataset" / "de.tar.gz", "w:gz") as tar:
            for name, text in members.items():
                (tmp_path / "src" / name).write_text(text)
                tar.add(tmp_path / "src" / name, arcname=name)

    archive({"test": "de:Berlin\tB-LOC\n\nde:ist\tO\n"})
    entry = xtreme.panx_layout(tmp_path / "manual", tmp_path / "out", ["de"])
    assert (tmp_path / "out" / "panx" / "test.de.conll").read_text() == "Berlin\tB-LOC\n\nist\tO\n"
    assert entry["test"]["de"].endswith("test.de.conll")
    archive({"test": "de:Berlin\tB-LOC\nist\tO\n"})
    with pytest.raises(DataFormatError, match=r"test:2: expected 'de:word<TAB>tag'"):
        xtreme.panx_layout(tmp_path / "manual", tmp_path / "out", ["de"])
    archive({"dev": "de:x\tO\n"})
    with pytest.raises(FileNotFoundError, match=r"de\.tar\.gz: no member 'test'"):
        xtreme.panx_layout(tmp_path / "manual", tmp_path / "out2", ["de"])


def test_cc100_sample_reads_text_line_ends_and_names_bad_utf8(tmp_path):
    import lzma
    import random

    from common.data import xtreme
    from common.io import DataFormatError

    with lzma.open(tmp_path / "x.txt.xz", "wb") as fh:
        fh.write(b"a\r\nb\rc\n\n d \n")
    assert sorted(xtreme.sample_cc100(tmp_path / "x.txt.xz", 10, random.Random(1))) == ["a", "b", "c", "d"]
    with lzma.open(tmp_path / "x.txt.xz", "wb") as fh:
        fh.write(b"ok\nfine\nbad \xff byte\n")
    with pytest.raises(DataFormatError, match=r"x\.txt\.xz:3: invalid UTF-8"):
        xtreme.sample_cc100(tmp_path / "x.txt.xz", 10, random.Random(1))
