"""The leaderboard's NMT column as a target of its own (mini: nmt.own_target): its report's table, and the main table
reading the column back from it (common/leaderboard/report_nmt.py, common/leaderboard/report.py)."""
from pathlib import Path
from types import SimpleNamespace

import pytest

from common.config import load_leaderboard_config
from common.io import write_json
from common.leaderboard import nmt as lbnmt
from common.leaderboard.committed import NOT_RUN, label
from common.nmt import bleu
from common.nmt import plan as nmtplan

REFS = ["the cat sat on a mat", "the dog ran away", "today it is raining in paris", "hello there"]
HYPS = {  # a system's outputs: each row's BLEU differs
    "init": ["the cat sat on the mat", "a dog ran", "it is raining today in paris", "hello there"],
    "dap": ["the cat sat on a mat", "the dog ran", "today it is raining in paris", "hello there"],
    "moco": ["a cat", "dog", "raining", "hello"],
    "hictl": ["the cat sat on a mat", "the dog ran away", "today it rains in paris", "hello there"],
    "vmsst": ["cat mat", "a dog", "it rains", "hi there"],
    nmtplan.RANDOM: ["the cat on the mat", "the dog ran", "it is raining in paris", "hello"],
}


def mini_ctx(tmp_path):
    """The mini config (the column a target of its own) with a BLEU file for each of its systems."""
    cfg = load_leaderboard_config("mini")
    nmt = lbnmt.nmt_config(cfg)
    assert nmt_own(cfg) and nmt["settings"][lbnmt.SETTING]["systems"] == [*HYPS]
    sig = "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0"
    for system, hyps in HYPS.items():
        path = Path(lbnmt.translation(nmt, system).path(str(tmp_path / "results")))
        path.parent.mkdir(parents=True, exist_ok=True)
        write_json(path, {"items": bleu.sentence_statistics(hyps, REFS), "items_smoothing": "exp",
                          "main_score": bleu.sacre_bleu(hyps, REFS)["bleu"], "checkpoint": f"{system}.pt",
                          "sacrebleu": {"signature": sig}, "case": "cased"})
    ctx = SimpleNamespace(scale="mini", cfg={**cfg, "out": str(tmp_path / "figures")}, results=tmp_path / "results",
                          manifest={"leakage": {"dropped_total": 3}})
    return ctx, nmt


def nmt_own(cfg):
    from common.targets import nmt_own_target

    return nmt_own_target(cfg)


def committed_copy(tmp_path, monkeypatch):
    """The committed mini table copied into ``<tmp>/figures``, BLEU files for the column's systems (:func:`mini_ctx`),
    and the arguments a report run over them takes (the corpus manifest a stub)."""
    import shutil

    from common.config import ROOT
    from common.report import cli

    mini_ctx(tmp_path)
    fig = tmp_path / "figures"
    fig.mkdir()
    for ext in ("csv", "md"):
        shutil.copy(ROOT / "figures" / "leaderboard" / "mini" / f"leaderboard.{ext}", fig)
    monkeypatch.setattr(cli, "load_manifest", lambda path: {"leakage": {"dropped_total": 3}})
    return fig, ["--scale", "mini", "--results", str(tmp_path / "results"), "--corpus", "manifest.json"]


def test_the_nmt_report_has_every_method_the_random_init_row_and_how_they_ran(tmp_path):
    from common.leaderboard.report_nmt import nmt_table

    ctx, nmt = mini_ctx(tmp_path)
    t = nmt_table(ctx)
    col = "nmt@de-en.multi30k_test_2016_flickr"
    assert t.columns == ["method", col, f"{col} 95% CI", f"{col} per seed"]
    rows = {r[0]: r[1:] for r in t.rows}
    assert list(rows) == [label(m) for m in [*ctx.cfg["methods"], nmtplan.RANDOM]]
    for m in ctx.cfg["methods"]:
        if m not in HYPS:  # TR, TR+TLM, MLM/TLM only and VMSST's step 0: no run of their own at mini
            assert rows[label(m)] == [NOT_RUN] * 3
    for system, hyps in HYPS.items():
        score = bleu.sacre_bleu(hyps, REFS)["bleu"]
        mean, ci, per_seed = rows[label(system)]
        assert mean == pytest.approx(score) and per_seed == f"{score:.1f}" and ci.startswith("[")
    notes = " ".join(t.notes)
    assert ("stage 1 at most 600 updates (on the setting's pairs together; stops after 5 validations without a "
            "better loss) + stage 2 400 per pair") in notes
    assert "at most 1,000 updates on the pair alone; the same number of updates for every final model." in notes
    assert "a dictionary of its own, 8,000 BPE pieces" in notes and "sacreBLEU signature: nrefs:1|case:mixed" in notes
    assert f"{label('vmsst_step0')}: no NMT run of its own" in notes


def test_the_leaderboard_reads_its_nmt_column_from_the_nmt_report(tmp_path):
    """Every row's NMT cell is the NMT report's, as written (the random-init row after the methods, before the
    outside rows); a method the report lacks reads '-'. Before the NMT target has run, every cell reads '-' and the
    note says how to make them."""
    from common.leaderboard.report import is_nmt_note, nmt_column, nmt_notes, reported_nmt_note, with_reported_nmt
    from common.leaderboard.report_nmt import nmt_table
    from common.report.claims import Difference
    from common.report.tables import write_table

    ctx, nmt = mini_ctx(tmp_path)
    col = nmt_column(nmt)
    d = (Difference(4.4, 4.2, 4.7, 2, 1000), [4.4, 4.4])
    values = {"init": {"tatoeba@cosine": d}, "tr": {"tatoeba@cosine": d}, "dap": {"tatoeba@cosine": d},
              "m": {"tatoeba@cosine": d}}
    before = with_reported_nmt(ctx, nmt, values)
    assert list(before) == ["init", "tr", "dap", "m"] and {v[col] for v in before.values()} == {NOT_RUN}
    assert reported_nmt_note(ctx, nmt) == (f"{col}: not run yet; at this scale it is a workflow target of its own "
                                           "(`snakemake leaderboard/nmt --cores 2 --config scale=mini`).")
    t = nmt_table(ctx)
    write_table(t, tmp_path / "figures" / "nmt")
    after = with_reported_nmt(ctx, nmt, values)
    assert list(after) == ["init", "tr", "dap", nmtplan.RANDOM, "m"]
    for system in ("init", "dap", nmtplan.RANDOM):
        cell, per_seed = after[system][col]
        assert cell.mean == pytest.approx(bleu.sacre_bleu(HYPS[system], REFS)["bleu"], abs=1e-4)
        assert per_seed == [round(cell.mean, 1)]
    assert after["tr"][col] == after["m"][col] == NOT_RUN and after["init"]["tatoeba@cosine"] is d
    assert after[nmtplan.RANDOM]["tatoeba@cosine"] == NOT_RUN
    note = reported_nmt_note(ctx, nmt)
    assert note.startswith(f"{col}: BLEU after HICTL's two-stage NMT fine-tuning of each method's seed-1 encoder, "
                           "from the table beside this one (nmt/leaderboard_nmt.md)")
    # the notes a committed table had for the column when it ran with the leaderboard are told from the others
    assert all(is_nmt_note(n, nmt) for n in [*nmt_notes(nmt, ["vmsst_step0"], {}), note])
    assert not any(is_nmt_note(n, nmt) for n in t.notes[:2])


def test_the_nmt_target_rewrites_the_committed_tables_column_and_nothing_else(tmp_path, monkeypatch):
    """``leaderboard/nmt`` at mini: the NMT report, then the committed table rewritten with ``--nmt-column`` (as the
    workflow's rule runs both): every row, outside ones included, and every other cell as the table had them; the
    column's cells the report's; the column's notes replaced by the one that points to the report."""
    import csv

    from common.leaderboard import report, report_nmt
    from common.leaderboard.methods import registry
    from common.report import cli

    fig, common = committed_copy(tmp_path, monkeypatch)
    report_nmt.run([*common, "--out", str(fig / "nmt")])
    cfg = load_leaderboard_config("mini")

    def read(path):
        with open(path, newline="", encoding="utf-8") as fh:
            return list(csv.DictReader(fh))

    def notes(path):
        return [line for line in path.read_text(encoding="utf-8").splitlines() if line.startswith("- ")]

    before, notes_before = read(fig / "leaderboard.csv"), notes(fig / "leaderboard.md")
    cli.main("leaderboard", "Leaderboard", load_leaderboard_config, registry, report.build, None,
             [*common, "--out", str(fig), "--trained-from", str(fig), "--nmt-column", "--methods",
              ",".join(cfg["methods"]), "--tasks", ",".join([*cfg["tasks"], "nmt"]), "--seeds", "1,2"],
             options=report.options, adjust=report.adjust)
    after, column = read(fig / "leaderboard.csv"), {r["method"]: r for r in read(fig / "nmt" / "leaderboard_nmt.csv")}
    col = "nmt@de-en.multi30k_test_2016_flickr"
    assert [r["method"] for r in after] == [r["method"] for r in before]
    for old, new in zip(before, after):
        nmt_fields = (col, f"{col} 95% CI", f"{col} per seed")
        assert {k: v for k, v in new.items() if k not in nmt_fields} == {
            k: v for k, v in old.items() if k not in nmt_fields}
        kept = column.get(new["method"], dict.fromkeys(nmt_fields, NOT_RUN))
        assert [new[f] for f in nmt_fields] == [kept[f] for f in nmt_fields]
    assert float(after[0][col]) == pytest.approx(bleu.sacre_bleu(HYPS["init"], REFS)["bleu"], abs=1e-4)
    written = notes(fig / "leaderboard.md")
    fresh = (f"- {col}:", "- Decoding:", "- Every method:")  # the last: written from the manifest, a stub here
    assert [n for n in written if not n.startswith(fresh)] == [
        n for n in notes_before if not n.startswith(fresh) and "no NMT run of its own" not in n]
    assert [n for n in written if n.startswith(f"- {col}:")] == [
        f"- {col}: BLEU after HICTL's two-stage NMT fine-tuning of each method's seed-1 encoder, from the table beside "
        "this one (nmt/leaderboard_nmt.md), whose notes say how each model was trained and scored; at this scale it "
        "is a workflow target of its own (`snakemake leaderboard/nmt --cores 2 --config scale=mini`)."]


@pytest.mark.parametrize("reported", [False, True])
def test_the_other_modes_keep_the_committed_column_until_the_nmt_report_exists(tmp_path, monkeypatch, reported):
    """``--trained-from`` without ``--rows`` (leaderboard/models' mode) at mini: before leaderboard/nmt has run, the
    NMT column, the random-init row and the column's notes as the committed table has them (they describe the run
    that made them); once its report exists, the report's cells and the note that points to it."""
    import csv

    from common.leaderboard import report, report_nmt
    from common.leaderboard.methods import registry
    from common.report import cli

    fig, common = committed_copy(tmp_path, monkeypatch)
    if reported:
        report_nmt.run([*common, "--out", str(fig / "nmt")])

    def read(path):
        with open(path, newline="", encoding="utf-8") as fh:
            return {r["method"]: r for r in csv.DictReader(fh) if not r["method"].startswith("outside model")}

    def nmt_notes(path):
        return [n for n in path.read_text(encoding="utf-8").splitlines() if n.startswith("- ") and report.is_nmt_note(
            n[2:], lbnmt.nmt_config(load_leaderboard_config("mini")))]

    before, notes_before = read(fig / "leaderboard.csv"), nmt_notes(fig / "leaderboard.md")
    assert len(notes_before) == 3  # the column's, VMSST's step 0 sharing the initial encoder's run, the decoding cap
    cfg = load_leaderboard_config("mini")
    cli.main("leaderboard", "Leaderboard", load_leaderboard_config, registry, report.build, None,
             [*common, "--out", str(fig), "--trained-from", str(fig), "--methods", ",".join(cfg["methods"]),
              "--tasks", ",".join([*cfg["tasks"], "nmt"]), "--seeds", "1,2"], options=report.options,
             adjust=report.adjust)
    after, col = read(fig / "leaderboard.csv"), "nmt@de-en.multi30k_test_2016_flickr"
    assert list(after) == list(before)
    if not reported:
        assert after == before and nmt_notes(fig / "leaderboard.md") == notes_before
        return
    column = read(fig / "nmt" / "leaderboard_nmt.csv")
    assert {m: r[col] for m, r in after.items()} == {m: column[m][col] if m in column else NOT_RUN for m in after}
    assert [n.split(": ")[1][:9] for n in nmt_notes(fig / "leaderboard.md")] == ["BLEU afte"]


def test_committed_nmt_notes_replace_the_columns_notes_where_they_stood():
    from common.leaderboard.report import committed_nmt_notes

    nmt = lbnmt.nmt_config(load_leaderboard_config("mini"))
    col = "nmt@de-en.multi30k_test_2016_flickr"
    notes = ["Scale 'mini'.", f"{col}: new.", "Decoding: outputs capped at 2 x.", "Departures from the papers: (1)."]
    assert committed_nmt_notes(notes, ["Scale: old.", f"{col}: old.", "Readout check, x."], nmt) == [
        "Scale 'mini'.", f"{col}: old.", "Departures from the papers: (1)."]
    assert committed_nmt_notes(["a."], [f"{col}: old."], nmt) == ["a.", f"{col}: old."]
