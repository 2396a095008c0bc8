"""VMSST's Table 8 claim (section 7.3): Δ = (VMSST − BiTranslation) on unseen languages minus the same on seen ones,
as a paired difference whose two sides are scored on the same test items (seen and unseen languages differ)."""
import pytest

from common.report.claims import Gap, MeanOfAccuracies, paired_difference
from papers.vmsst.measures import delta_sides


def tatoeba(*per_language: str) -> MeanOfAccuracies:
    return MeanOfAccuracies([o for outcomes in per_language for o in (outcomes, outcomes)], tied=2)


def test_delta_of_seen_and_unseen_gaps_by_hand():
    # seen (one language, 4 sentences): BiTranslation 1 of 4, VMSST 2 of 4 -> +25; unseen (one language, 2
    # sentences): 0 of 2 against 2 of 2 -> +100; Δ = 75
    on_seen = {1: Gap(tatoeba("1000"), tatoeba("1100"))}
    on_unseen = {1: Gap(tatoeba("00"), tatoeba("11"))}
    with pytest.raises(ValueError, match="same test items"):  # the two gaps side by side: different items
        paired_difference(on_seen, on_unseen)
    a, b = delta_sides(on_seen, on_unseen)
    assert (a[1].value(), b[1].value()) == (25.0, 100.0)
    assert paired_difference(a, b).mean == pytest.approx(75.0)


def test_a_one_seed_tables_notes_name_that_seed_not_the_configs():
    """Tables 4 and 6 train one seed; their first note says so instead of
    the config's seed list."""
    from papers.vmsst.report import where

    cfg = {"description": "d", "seeds": [1, 2], "encoders": {}}
    ctx = type("Ctx", (), {"scale": "mini", "cfg": cfg, "manifest": {"leakage": {"dropped_total": 0}}})()
    assert "Seeds [1, 2] (mean ± sd). " in where(ctx)
    assert "Seeds [1] (one run). " in where(ctx, [1]) and "[1, 2]" not in where(ctx, [1])
