import pytest

from common.leaderboard.report import cell


def tatoeba(xx2en: str, en2xx: str, main_score: float) -> dict:
    return {"items": {"deu": {"xx2en": xx2en, "en2xx": en2xx}}, "main_score": main_score}


def test_cell_gives_the_mean_over_seeds_with_its_interval():
    d = cell("tatoeba@cosine", [tatoeba("1111", "1100", 75.0), tatoeba("1111", "1111", 100.0)])
    # two seeds (75, 100): the seeds' part is t(1) x 12.5 = 158.8 wide on each side; honest, and far from narrow
    assert d.mean == pytest.approx(87.5) and d.seeds == 2 and d.se_seed == pytest.approx(12.5)
    assert d.hi - d.mean == pytest.approx((12.7062047 ** 2 * 12.5 ** 2 + 1.959964 ** 2 * d.se_items ** 2) ** 0.5)
    right = cell("tatoeba@cosine", [tatoeba("11", "11", 100.0)])
    assert (right.mean, right.lo, right.hi) == (100.0, 100.0, 100.0)


def test_cell_refuses_items_that_do_not_give_the_main_score():
    with pytest.raises(ValueError, match="tatoeba@cosine: the item-level metric of seed index 1 gives 50.0"):
        cell("tatoeba@cosine", [tatoeba("11", "11", 100.0), tatoeba("10", "10", 40.0)])


def test_bleu_cell_is_the_runs_bleu_with_an_interval_over_sentences():
    from common.leaderboard.report import bleu_cell
    from common.nmt import bleu

    hyps = ["the cat sat on the mat", "a dog ran", "it is raining today in paris", "hello there"]
    refs = ["the cat sat on a mat", "the dog ran away", "today it is raining in paris", "hello there"]
    main = bleu.sacre_bleu(hyps, refs)["bleu"]
    result = {"items": bleu.sentence_statistics(hyps, refs), "items_smoothing": "exp", "main_score": main,
              "checkpoint": "ck.pt"}
    d = bleu_cell(result)
    assert d.mean == pytest.approx(main) and d.lo <= main <= d.hi and d.lo < d.hi
    with pytest.raises(ValueError, match="ck.pt: BLEU from the stored sentence statistics"):
        bleu_cell({**result, "main_score": main + 1})


def test_the_na_note_appears_only_where_a_cell_is_na():
    from types import SimpleNamespace

    from common.leaderboard.report import table

    ctx = SimpleNamespace(scale="smoke", manifest={"leakage": {"dropped_total": 3}},
                          cfg={"description": "d", "encoders": {"tiny": {}}, "seeds": [1],
                               "training": {"max_steps": 10, "global_batch_size": 4},
                               "tasks": ["tatoeba@cosine", "xnli@zero-shot"]})
    d = cell("tatoeba@cosine", [tatoeba("11", "11", 100.0)])
    with_na = table(ctx, {"tr": {"tatoeba@cosine": (d, [100.0]), "xnli@zero-shot": None}}, None, {})
    assert any(n.startswith("n/a:") for n in with_na.notes) and with_na.rows[0][4:] == ["n/a"] * 3
    ctx.cfg["tasks"] = ["tatoeba@cosine"]
    without = table(ctx, {"tr": {"tatoeba@cosine": (d, [100.0])}}, None, {})
    assert not any(n.startswith("n/a:") for n in without.notes)
    assert without.rows == [["TR (in-batch translation ranking)", 100.0, "[100.0, 100.0]", "100.0"]]


def test_the_leaderboard_states_no_verdict_and_says_why():
    """A claim on runs under 10 minutes needs 5 seeds; the leaderboard's runs are that short and the mini
    config trains fewer (its budget), so its table ranks nothing and its notes say so with the seed count."""
    from types import SimpleNamespace

    from common.config import load_leaderboard_config
    from common.leaderboard.report import CLAIM_MIN_SEEDS, table

    cfg = load_leaderboard_config("mini")
    assert len(cfg["seeds"]) < CLAIM_MIN_SEEDS == 5
    ctx = SimpleNamespace(scale="mini", manifest={"leakage": {"dropped_total": 3}},
                          cfg={**cfg, "tasks": ["tatoeba@cosine"]})
    d = cell("tatoeba@cosine", [tatoeba("11", "11", 100.0)] * len(cfg["seeds"]))
    notes = table(ctx, {"tr": {"tatoeba@cosine": (d, [100.0] * len(cfg["seeds"]))}}, None, {}).notes
    assert notes[-1].startswith("No verdicts: the leaderboard describes, it does not rank; each paper's claims")
    assert notes[-1].endswith(f"needs at least 5 seeds (here {len(cfg['seeds'])}).")
    ctx.scale = "paper"  # days-long runs: the reason for small scales does not apply
    paper = table(ctx, {"tr": {"tatoeba@cosine": (d, [100.0] * len(cfg["seeds"]))}}, None, {}).notes[-1]
    assert paper.startswith("No verdicts") and "minutes" not in paper


def test_the_nmt_note_gives_each_sacrebleu_signature_and_the_case(tmp_path):
    """A BLEU column shows how it was scored (the tokenizer follows the target language, the case the
    benchmark); the note reads both from the runs' result files."""
    from types import SimpleNamespace

    from common.io import write_json
    from common.leaderboard import nmt as lbnmt
    from common.leaderboard.report import nmt_results, scoring
    from common.nmt import plan

    nmt = {"settings": {lbnmt.SETTING: {"finetune": ["de-en"], "systems": ["dap", plan.RANDOM],
                                        "tests": {"default": ["multi30k_test_2016_flickr"]}}}}
    sig = "nrefs:1|case:lc|eff:no|tok:13a|smooth:exp|version:2.6.0"
    for system in ("dap", plan.RANDOM):
        path = tmp_path / lbnmt.translation(nmt, system).path(str(tmp_path))
        path.parent.mkdir(parents=True, exist_ok=True)
        write_json(path, {"sacrebleu": {"signature": sig}, "case": "lower-cased: the model's vocabulary is uncased"})
    ctx = SimpleNamespace(results=tmp_path)
    assert scoring(nmt_results(ctx, nmt)) == (f"sacreBLEU signature: {sig}; case: lower-cased: the model's "
                                              "vocabulary is uncased.")
    write_json(tmp_path / lbnmt.translation(nmt, plan.RANDOM).path(str(tmp_path)),
               {"sacrebleu": {"signature": sig.replace("13a", "zh")}})
    two = scoring(nmt_results(ctx, nmt))
    assert two.startswith(f"sacreBLEU signatures: {sig} (DAP") and "tok:zh" in two and two.endswith(
        "case: cased; lower-cased: the model's vocabulary is uncased.")


def test_paper_rows_stand_beside_dap_methods_only_on_the_papers_basis():
    """Every table puts the paper's number beside ours where the paper has one on the same basis: at paper scale the
    leaderboard trains DAP's methods from XLM-R base on DAP's corpus, so TR gets DAP's XLM-R+TR row (Table 1's 36,
    both directions: (91.6 + 86.4) / 2 = 89.0; Table 3's BUCC test average 83.1; Table 4's XNLI average 73.1); a
    BUCC on the public splits (threshold on sample, F1 on training) is not Table 3's basis, MiniLM not the paper's
    encoder, and MoCo-BERT's paper reports no such row."""
    from types import SimpleNamespace

    from common.languages import XTREME_36
    from common.leaderboard.report import table

    tasks = ["tatoeba@cosine", "bucc@ratio-k4", "xnli@zero-shot"]
    manifest = {"leakage": {"dropped_total": 0}, "tatoeba_languages": sorted(XTREME_36),
                "bucc_pairs": ["de-en", "fr-en", "ru-en", "zh-en"], "bucc_splits": {"tune": "training", "test": "test"},
                "nli_languages": ["ar", "bg", "de", "el", "en", "es", "fr", "hi", "ru", "sw", "th", "tr", "ur", "vi",
                                  "zh"]}
    ctx = SimpleNamespace(scale="paper", manifest=manifest, cfg={
        "description": "d", "encoders": {"xlmr": {}}, "seeds": [1], "tasks": tasks,
        "training": {"max_steps": 10, "global_batch_size": 4}})
    d = cell("tatoeba@cosine", [tatoeba("11", "11", 100.0)])
    ours = {t: (d, [100.0]) for t in tasks}
    t = table(ctx, {"tr": ours, "moco": {**ours, "xnli@zero-shot": None}}, None, {})
    assert [r[0] for r in t.rows] == ["TR (in-batch translation ranking)",
                                      "paper: XLM-R+TR (Li et al. 2023 (DAP), ACL)",
                                      "MoCo-BERT (dual momentum contrast)"]
    assert t.rows[1][1:] == [pytest.approx(89.0), None, None, 83.1, None, None, 73.1, None, None]
    assert any(n.startswith("'paper:' rows") and "DAP's Tables 1" in n for n in t.notes)
    # the initial encoder: the authors' own run of XLM-R in Tables 1 and 3, Table 4's XLM-R row
    init = table(ctx, {"init": ours}, None, {}).rows[1]
    assert init[0] == "paper: XLM-R (recomputed) (Li et al. 2023 (DAP), ACL)"
    assert init[1:] == [pytest.approx(54.3), None, None, 57.6, None, None, 73.7, None, None]
    manifest["bucc_splits"] = {"tune": "sample", "test": "training"}
    assert table(ctx, {"tr": ours}, None, {}).rows[1][4] is None
    ctx.scale = "rehearsal"  # the paper's path on tiny stand-ins of its encoder: not the paper's models
    assert len(table(ctx, {"tr": ours}, None, {}).rows) == 1
    ctx.scale, ctx.cfg["encoders"] = "mini", {"minilm": {}}
    mini = table(ctx, {"tr": ours}, None, {})
    assert len(mini.rows) == 1 and not any(n.startswith("'paper:'") for n in mini.notes)


def test_readout_notes_give_each_seeds_three_readouts_and_head_ratio(tmp_path):
    from types import SimpleNamespace

    from common.leaderboard import report
    from common.leaderboard.report import readout_notes
    from common.runs import Run, RunRegistry

    def model(saved, pooled, centred, ratio):
        return {"summary": {"saved": {"both": saved[0], "mean_cosine": saved[1]},
                            "pooled": {"both": pooled[0], "mean_cosine": pooled[1]},
                            "centred": {"both": centred[0], "mean_cosine": centred[1]}}, "head_singular_ratio": ratio}

    from common.eval.readout import READOUTS
    from common.io import write_json

    assert READOUTS == report.READOUTS  # the report's copy of the names, in the note's order
    # written as the readout check writes it (keys sorted: centred, pooled, saved)
    write_json(tmp_path / "readout" / "vmsst.json", [model((0.21, 0.914), (3.04, 0.55), (1.26, 0.004), [12.34]),
                                                     model((0.3, 0.9), (3.0, 0.5), (1.0, 0.0), [])])
    registry = RunRegistry("leaderboard", [Run("vmsst", "minilm", 1, ()), Run("vmsst", "minilm", 2, ())])
    ctx = SimpleNamespace(cfg={"readout": ["vmsst", "tr"], "methods": ["vmsst"]}, results=tmp_path,
                          store=SimpleNamespace(registry=registry))
    (note,) = readout_notes(ctx, ["vmsst", "tr"])  # tr: in readout, but not a method of this run
    assert note.startswith("Readout check, VMSST (variational source separation) (python -m common.eval.readout, fp32;")
    assert note.endswith("losing it): seed 1: saved 0.2 (0.91) / pooled 3.0 (0.55) / centred 1.3 (0.00), head 12.3; "
                         "seed 2: saved 0.3 (0.90) / pooled 3.0 (0.50) / centred 1.0 (0.00), no head.")
    assert readout_notes(ctx, ["tr"]) == []
    ctx.store.registry = RunRegistry("leaderboard", [Run("vmsst", "minilm", 1, ())])
    with pytest.raises(ValueError):  # a results file of another seed count
        readout_notes(ctx, ["vmsst"])


def test_rows_mode_refuses_what_would_mix_two_tables():
    """``--rows`` regenerates rows of the committed table: it needs that table and the methods, and refuses outside
    models (their own target) and fewer tasks or seeds than the table has."""
    import argparse

    from common.config import load_leaderboard_config
    from common.leaderboard.report import adjust, options

    def parse(*args):
        p = argparse.ArgumentParser()
        p.add_argument("--out", default="figures/leaderboard/mini")  # common.report.cli's
        options(p)
        return p.parse_args(list(args))

    base = ("--rows", "--trained-from", "figures/leaderboard/mini", "--methods", "vmsst_step0,vmsst")
    cfg = load_leaderboard_config("mini")
    adjust(cfg, parse(*base, "--tasks", ",".join([*cfg["tasks"], "nmt"]), "--seeds", "1,2"))
    assert cfg["rows"] == ["vmsst_step0", "vmsst"] and cfg["nmt"] and "leaderboard/rows" in cfg["report_command"]
    for extra in (("--seeds", "1"), ("--tasks", "tatoeba@cosine"), ("--models", "all-MiniLM-L6-v2")):
        with pytest.raises(SystemExit):
            adjust(load_leaderboard_config("mini"), parse(*base, *extra))
    with pytest.raises(SystemExit, match="--rows needs --trained-from"):
        adjust(load_leaderboard_config("mini"), parse("--rows", "--methods", "vmsst"))
    # --nmt-column (leaderboard/nmt): every row kept, none regenerated; only where the column is a target of its own
    cfg = load_leaderboard_config("mini")
    adjust(cfg, parse("--nmt-column", "--trained-from", "figures/leaderboard/mini"))
    assert cfg["rows"] == [] == cfg["methods"] and cfg["all_methods"] == load_leaderboard_config("mini")["methods"]
    for args in (("--nmt-column",), ("--nmt-column", "--trained-from", "f", "--rows", "--methods", "tr")):
        with pytest.raises(SystemExit, match="--nmt-column needs --trained-from"):
            adjust(load_leaderboard_config("mini"), parse(*args))
    with pytest.raises(SystemExit, match="nmt.own_target"):
        adjust(load_leaderboard_config("smoke"), parse("--nmt-column", "--trained-from", "f"))
