"""Reading a leaderboard table back as it stands (common/leaderboard/committed.py): the targets that regenerate part of
the table keep the rest from it."""
import pytest


def test_trained_rows_kept_from_the_committed_table_render_as_they_were(tmp_path):
    """``--trained-from``: a table's trained rows and notes read back (outside rows and their note left out) give the
    same CSV cells when the table is written again."""
    from types import SimpleNamespace

    from common.leaderboard.committed import committed_table, label
    from common.leaderboard.report import table
    from common.report.tables import to_csv

    header = ["method", "tatoeba@cosine", "tatoeba@cosine 95% CI", "tatoeba@cosine per seed"]
    rows = [f"{label('init')},4.4481,\"[4.2, 4.7]\",4.4", f"{label('tr')},9.9421,\"[7.3, 12.6]\",10.1 / 9.7",
            f"{label('random')},–,–,–", "outside model: m (untrained),4.4,\"[4.2, 4.7]\",4.4"]
    (tmp_path / "leaderboard.csv").write_text(",".join(header) + "\n" + "\n".join(rows) + "\n", encoding="utf-8")
    (tmp_path / "leaderboard.md").write_text("**t**\n\n| a |\n|---|\n| 1 |\n\n- Scale 'mini': the corpus.\n"
                                             "- Outside models: an old note.\n- No verdicts.\n", encoding="utf-8")
    values, notes = committed_table(tmp_path, ["tatoeba@cosine"])
    assert list(values) == ["init", "tr", "random"]
    assert notes == ["Scale 'mini': the corpus.", "Outside models: an old note.", "No verdicts."]
    d, seeds = values["tr"]["tatoeba@cosine"]
    assert (d.mean, d.lo, d.hi, d.seeds, seeds) == (9.9421, 7.3, 12.6, 2, [10.1, 9.7])
    ctx = SimpleNamespace(scale="mini", manifest={"leakage": {"dropped_total": 3}},
                          cfg={"tasks": ["tatoeba@cosine"], "description": "d", "encoders": {"minilm": {}},
                               "training": {"max_steps": 1, "global_batch_size": 2}, "seeds": [1, 2]})
    assert to_csv(table(ctx, values, None, {})).splitlines() == [",".join(header), *rows[:3]]


def test_rows_mode_keeps_every_other_row_and_each_rows_own_notes(tmp_path):
    """``--rows``: the committed table's rows all kept (outside ones too); of its notes, the provenance ones and the
    notes of rows not regenerated; the regenerated rows take their place in the config's method order."""
    from common.leaderboard.committed import committed_table, kept_notes, label
    from common.leaderboard.report import in_config_order

    header = ["method", "tatoeba@cosine", "tatoeba@cosine 95% CI", "tatoeba@cosine per seed"]
    rows = [f"{label('init')},4.4,\"[4.2, 4.7]\",4.4", f"{label('vmsst')},0.2,\"[-0.0, 0.4]\",0.2 / 0.2",
            f"{label('random')},–,–,–", "outside model: m (untrained),4.1,\"[3.9, 4.3]\",4.1"]
    (tmp_path / "leaderboard.csv").write_text(",".join(header) + "\n" + "\n".join(rows) + "\n", encoding="utf-8")
    notes = ["Scale 'mini': the corpus.", f"Readout check, {label('vmsst')} (old): seed 1.",
             f"Readout check, {label('tr')} (kept): seed 1.", f"Row regenerated alone: {label('vmsst')} (`old`).",
             f"Row regenerated alone: {label('tr')} (`kept`).", "Departures from the papers: (1) old.",
             "Trained rows: as the table had them.", "Outside models: how m was built."]
    (tmp_path / "leaderboard.md").write_text("".join(f"- {n}\n" for n in notes), encoding="utf-8")
    values, committed = committed_table(tmp_path, ["tatoeba@cosine"], outside=True)
    assert list(values) == ["init", "vmsst", "random", "m"] and committed == notes
    assert kept_notes(committed, ["vmsst_step0", "vmsst"]) == [notes[2], notes[4], notes[6], notes[7]]
    fresh = {"vmsst_step0": {"tatoeba@cosine": "step0"}, "vmsst": {"tatoeba@cosine": "new"}}
    ordered = in_config_order({**values, **fresh}, ["init", "tr", "vmsst_step0", "vmsst"])
    assert list(ordered) == ["init", "vmsst_step0", "vmsst", "random", "m"]
    assert ordered["vmsst"]["tatoeba@cosine"] == "new"


def test_a_table_written_for_other_columns_or_rows_is_refused_naming_file_and_line(tmp_path):
    from common.leaderboard.committed import committed_table, label

    header = "method,tatoeba@cosine,tatoeba@cosine 95% CI,tatoeba@cosine per seed\n"
    rows = f"{label('init')},4.4,\"[4.2, 4.7]\",4.4\nno such row,1,\"[1, 1]\",1\n"
    (tmp_path / "leaderboard.csv").write_text(header + rows, encoding="utf-8")
    (tmp_path / "leaderboard.md").write_text("- a note\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"leaderboard.csv, line 1: no column bucc@cosine"):
        committed_table(tmp_path, ["tatoeba@cosine", "bucc@cosine"])
    with pytest.raises(ValueError, match=r"leaderboard.csv, line 3: row 'no such row' is no registered method"):
        committed_table(tmp_path, ["tatoeba@cosine"])
