"""Table notes shared by every report."""
import pytest


def test_the_leakage_note_says_which_staged_sources_trained_the_model():
    from common.report.tables import leakage_note

    plain = {"leakage": {"dropped_total": 12}}
    assert leakage_note(plain) == "Leakage rule dropped 12 training pairs."
    staged = {"leakage": {"dropped_total": 812, "by_source": {
        "anki_pairs": {"spa": {"taken": 118964, "leaked": 800}, "hin": {"taken": 2979, "leaked": 12}},
        "ntrex128": {"ita": {"taken": 1997, "leaked": 0}}}}}
    assert leakage_note(staged) == (
        "Leakage rule dropped 812 training pairs. Staged parallel sources trained on (pairs taken, of which dropped "
        "as leaked): anki_pairs: hin 2,979 (12), spa 118,964 (800); ntrex128: ita 1,997 (0).")
    # the BUCC distractors and NLI items the rule removed are counted in the note too
    counted = {"leakage": {"dropped_total": 5, "bucc_distractors_excluded": 1547, "nli_dropped": 0}}
    assert leakage_note(counted) == ("Leakage rule dropped 5 training pairs. BUCC distractor candidates excluded by "
                                     "the same rule: 1,547. NLI training items dropped by the same rule: 0.")


def test_the_vocabulary_table_reads_what_the_tokenizer_rule_saved(tmp_path):
    import json

    from common.report.vocabulary_table import extended, vocabulary_table

    cfg = {"encoders": {"minilm": {"pretrained": "x", "vocabulary": {"max_new": 50}}, "scratch": {"num_layers": 2}}}
    folder = tmp_path / "tokenizer" / "minilm" / "shared"
    folder.mkdir(parents=True)
    (folder / "vocabulary.json").write_text(json.dumps({
        "old_size": 1000, "added": 40, "max_new": 50, "pieces": [],
        "pieces_per_word": {"tur": {"before": 3.0, "after": 1.5, "unknown_before": 2.0, "unknown_after": 0.0},
                            "deu": {"before": 2.0, "after": 1.6}}}))  # a file written before the [UNK] shares
    assert extended(cfg) == ["minilm"]
    table = vocabulary_table(cfg, tmp_path)
    assert table.rows == [["minilm", "deu", 2.0, 1.6, 0.8, None, None], ["minilm", "tur", 3.0, 1.5, 0.5, 2.0, 0.0]]
    assert "40 pieces added to the 1,000" in table.notes[0]


def test_the_vocabulary_table_of_an_extension_made_outside_a_workflow(tmp_path):
    """The command line reads the folder an extension wrote and says what made it; a label without a folder is an
    error naming the argument."""
    import json

    from common.report import vocabulary_table

    (tmp_path / "ext").mkdir()
    (tmp_path / "ext" / "vocabulary.json").write_text(json.dumps({
        "old_size": 1000, "added": 40, "max_new": 50, "pieces": [],
        "pieces_per_word": {"jpn": {"before": 4.0, "after": 1.0}}}))
    vocabulary_table.main(["--vocabulary", f"minilm={tmp_path / 'ext'}", "--note", "made by hand",
                           "--out", str(tmp_path / "out")])
    text = (tmp_path / "out" / "table_vocabulary.md").read_text()
    assert "| minilm | jpn | 4.0 | 1.0 | 0.2" in text and text.rstrip().endswith("- made by hand")
    with pytest.raises(SystemExit):
        vocabulary_table.main(["--vocabulary", str(tmp_path / "ext"), "--out", str(tmp_path / "out")])


def test_the_departures_note_numbers_each_declared_departure_on_one_line():
    from common.report.tables import departures_note

    assert departures_note({}) == ""
    cfg = {"departures": ["BERT-shaped encoders\n  (6 layers)", "gradient clip 1.0"]}
    assert departures_note(cfg) == (" Departures from the paper: (1) BERT-shaped encoders (6 layers) "
                                    "(2) gradient clip 1.0")
