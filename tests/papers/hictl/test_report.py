"""HICTL's report arithmetic on the paper's own numbers."""
import pytest
import yaml

from papers.hictl.report import HERE, paper_row, xtreme_average


def test_xtreme_average_reproduces_every_complete_row_of_tables_1_and_3():
    """Table 1's Avg. is the mean of the nine tasks with a QA task as (F1 + EM) / 2 (XLM-R 68.2, HICTL + Hns 74.8);
    the paper prints it cut to one decimal (HICTL: 69.66 printed 69.6)."""
    d = yaml.safe_load((HERE / "reported.yaml").read_text())
    rows = [cells for block in d["table1"].values() for cells in block.values()] + list(d["table3"].values())
    checked = 0
    for cells in rows:
        row = paper_row(cells)
        if None in row[:-1]:
            continue
        assert xtreme_average(row[:-1]) == pytest.approx(row[-1], abs=0.07)
        checked += 1
    assert checked == 11


def test_paper_rows_expand_missing_qa_cells_to_two_columns():
    row = paper_row([76.2, None, None, None, None, [63.7, 46.3], None, None, None, None])
    assert row == [76.2, None, None, None, None, None, 63.7, 46.3, None, None, None, None, None]


def test_the_task_note_tells_a_task_left_out_from_one_without_data():
    """XQuAD's data is in the mini corpus; a config that does not run qa@xquad must not claim 'no data' for it."""
    from types import SimpleNamespace

    from papers.hictl.report import task_note

    manifest = {"kind": "mini", "qa": {"xquad": {"description": "XQuAD-R, 12 test paragraphs"}}}
    cfg = {"hictl": {"tasks": ["xnli@zero-shot", "bucc@ratio-k4", "tatoeba@cosine"], "temperature": 0.05}}
    note = task_note(SimpleNamespace(cfg=cfg, manifest=manifest, scale="mini"))
    assert "no data for PAWS-X, POS, NER, MLQA, TyDiQA at this scale" in note
    assert "under XQuAD: the corpus has its data (XQuAD-R, 12 test paragraphs), but scale 'mini' does not run" in note
    cfg["hictl"]["tasks"].append("qa@xquad")
    note = task_note(SimpleNamespace(cfg=cfg, manifest=manifest, scale="mini"))
    assert "does not run" not in note and "XQuAD (ours): XQuAD-R, 12 test paragraphs; SQuAD v1.1 F1 / EM." in note
    del manifest["qa"]
    cfg["hictl"]["tasks"].remove("qa@xquad")
    note = task_note(SimpleNamespace(cfg=cfg, manifest=manifest, scale="mini"))
    assert "no data for PAWS-X, POS, NER, XQuAD, MLQA" in note


def test_the_decoding_column_names_a_length_cap_only_where_it_is_not_fairseqs():
    from papers.hictl.report_nmt import decoding

    assert decoding({"beam": 5, "lenpen": 1.0}) == "beam 5, lenpen 1.0"  # results written before the cap existed
    assert decoding({"beam": 4, "lenpen": 0.6, "max_len": [0, 200]}) == "beam 4, lenpen 0.6"
    capped = decoding({"beam": 5, "lenpen": 1.0, "max_len": [2, 20]})
    assert capped == "beam 5, lenpen 1.0, at most 2 x source + 20 tokens"


def test_the_scoring_note_shows_each_signature_with_its_tests_and_why_a_test_is_lower_cased(tmp_path):
    """Issue 33: the signature under each NMT table shows the tokenizer chosen by the target language (En->Zh
    IWSLT'17: zh) and the case (IWSLT'14: lower-cased by the benchmark's preparation), from results written by
    common.nmt.bleu.score itself."""
    import json
    from types import SimpleNamespace

    from common.config import load_paper_config
    from common.nmt import bleu, plan
    from papers.hictl.report_nmt import scoring_note

    cfg = load_paper_config("hictl", "paper")
    for t in plan.translations(cfg["nmt"]):
        out = tmp_path / t.path(".")
        out.parent.mkdir(parents=True, exist_ok=True)
        result = bleu.score(["Ein Test ."], ["Ein Test ."], t.pair.split("-")[1], t.test, uncased_model=False,
                            tokenized=False)
        out.write_text(json.dumps(result))
    note = scoring_note(SimpleNamespace(cfg=cfg, results=tmp_path))
    sigs = dict(part.rsplit(" (", 1) for part in note.removeprefix("sacreBLEU signatures: ").split(". ")[0].split("; "))
    zh = [sig for sig, used in sigs.items() if "En→Zh IWSLT'17" in used]
    assert len(zh) == 1 and "tok:zh" in zh[0] and "case:mixed" in zh[0]
    iwslt14 = [sig for sig, used in sigs.items() if "IWSLT'14" in used]
    assert iwslt14 and all("case:lc" in sig and "tok:13a" in sig for sig in iwslt14)
    assert "Lower-cased: the benchmark's references, as fairseq's prepare-iwslt14.sh prepares them (IWSLT'14)" in note
