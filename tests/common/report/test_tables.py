"""Table notes shared by every report."""


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
