"""Claims as declarations: a claim evaluated to its record, claims a scale cannot score left out, ids unique, and
the cross-paper index joining declarations with the reports' records."""
from dataclasses import asdict
from types import SimpleNamespace

import pytest

from common.io import read_json, write_json
from common.report import claims_index
from common.report.claim import Claim, ClaimRecord, NotApplicable, Side, claims_table, reported, unseeded_side
from common.report.claims import MeanOfAccuracies
from common.report.results import Stat


def side(label, *outcomes):
    """Two seeds, each the same outcomes (one bit per test item, one string per language)."""
    return Side(label, lambda ctx: {1: MeanOfAccuracies(list(outcomes)), 2: MeanOfAccuracies(list(outcomes))})


def missing(ctx):
    raise NotApplicable("no such languages here")


def test_claims_table_and_records():
    """B right on every item where A is wrong on every one: +100 [100, 100] over 2 seeds, 'holds'; the same claim
    with the paper expecting the other sign reads 'reversed', with no direction 'no direction claimed'."""
    a, b = side("A", "0000", "00"), side("B", "1111", "11")
    claims = [Claim("up", "toy", "Table 1", "B above A", "accuracy", a, b),
              Claim("down", "toy", "Table 2", "B below A", "accuracy", a, b, sign=-1),
              Claim("level", "toy", "Table 3", "no direction", "accuracy", a, b, sign=0, setting="s",
                    reported=reported(52.5, 55.6, "6 layers")),
              Claim("skipped", "toy", "Table 4", "needs data", "accuracy", a, Side("B", missing))]
    t = claims_table(claims, SimpleNamespace(), "caption", ["a note"])
    assert [r[0] for r in t.rows] == ["B above A", "B below A", "no direction"]  # the last one left out
    assert t.rows[0][4:] == ["A", Stat(0.0, 0.0, 2), "B", Stat(100.0, 0.0, 2), 100.0, "[100.0, 100.0]", "–", 2,
                             "holds"]
    assert t.rows[2][10] == "6 layers: 52.5 → 55.6 (+3.1)"  # the paper's own numbers beside ours
    assert [r[-1] for r in t.rows] == ["holds", "reversed", "no direction claimed"]
    assert t.records[2] == {"paper": "toy", "id": "level", "where": "Table 3", "statement": "no direction",
                            "metric": "accuracy", "setting": "s", "a": "A", "b": "B", "a_score": 0.0,
                            "b_score": 100.0, "difference": 100.0, "lo": 100.0, "hi": 100.0, "seeds": 2, "sign": 0,
                            "verdict": "no direction claimed", "reason": "", "reported": "6 layers: 52.5 → 55.6 (+3.1)"}
    assert t.notes[0] == "a note"
    assert t.notes[-1] == "Not applicable at this scale: needs data (accuracy): no such languages here."
    assert (t.records[3]["verdict"], t.records[3]["reason"]) == ("not applicable here", "no such languages here")
    with pytest.raises(ValueError, match="declared twice"):
        claims_table(claims[:1] * 2, SimpleNamespace(), "caption")


def test_index_joins_declarations_with_the_reports_records(tmp_path):
    """Every paper's claims at smoke scale are listed; one with a record in its report's claims.json carries that
    verdict, the others say they have not been evaluated."""
    record = ClaimRecord("moco", "queue-beats-inbatch.sts", "Table 5", "queue beats in-batch", "STS", "", "in-batch",
                         "queue", 70.0, 71.5, 1.5, 0.5, 2.5, 5, 1, "holds")
    write_json(tmp_path / "moco" / "smoke" / "claims.json", {"caption": "c", "records": [asdict(record)]})
    table, records = claims_index.index("smoke", tmp_path)
    assert {r["paper"] for r in records} == {"dap", "hictl", "moco", "vmsst"}
    assert len({(r["paper"], r["id"]) for r in records}) == len(records)  # ids unique within a paper
    moco = {r["id"]: r for r in records if r["paper"] == "moco"}
    assert (moco["queue-beats-inbatch.sts"]["verdict"], moco["queue-beats-inbatch.sts"]["seeds"]) == ("holds", 5)
    assert moco["queue-beats-inbatch.bucc"]["verdict"] == claims_index.NOT_RUN
    assert "moco: 8 claims (holds 1, not evaluated yet 7)" in table.notes[0]  # the smoke config's sweeps
    # the paper's column comes from the declarations, evaluated or not: MoCo-BERT's Table 5 (76.20 with momentum,
    # -0.01 without)
    assert moco["no-momentum-fails.sts"]["reported"] == "-0.01 → 76.2 (+76.21)"
    assert moco["queue-beats-inbatch.sts"]["reported"] == ""  # no table of the paper has an in-batch model
    claims_index.main(["--scale", "smoke", "--figures", str(tmp_path)])
    assert len(read_json(tmp_path / "claims" / "smoke.json")["records"]) == len(records)


def test_unseeded_side_stands_for_every_seed():
    """An encoder before training, run on seed 1 only, paired with each of three trained seeds: A's one result
    (1 of 4 items right) against B's 2, 3 and 4 of 4 gives differences 25, 50, 75 (mean 50) over 3 seeds."""
    asked = []

    class Store:
        registry = SimpleNamespace(seeds=lambda method, init: {"init": [1], "dap": [1, 2, 3]}[method])

        def item_metrics(self, method, task, init=None, seeds=None, languages=None):
            asked.append((method, seeds, languages))
            right = {"init": {1: "1000"}, "dap": {1: "1100", 2: "1110", 3: "1111"}}[method]
            return {s: MeanOfAccuracies([right[s]]) for s in (seeds or self.registry.seeds(method, init))}

    a = unseeded_side("no pre-training", "init", "tatoeba@cosine", "minilm", [1, 2, 3], languages=lambda ctx: ["deu"])
    b = Side("DAP", lambda ctx: ctx.store.item_metrics("dap", "tatoeba@cosine", "minilm"))
    t = claims_table([Claim("up", "dap", "Table 1", "DAP above it", "accuracy", a, b)],
                     SimpleNamespace(store=Store()), "caption")
    assert asked[0] == ("init", [1], ["deu"])  # the one registered seed, the side's languages
    r = t.records[0]
    assert (r["a_score"], r["b_score"], r["difference"], r["seeds"]) == (25.0, 75.0, 50.0, 3)
    empty = unseeded_side("no pre-training", "init", "tatoeba@cosine", "minilm", [1, 2, 3], languages=[])
    with pytest.raises(NotApplicable, match="no languages to score tatoeba@cosine"):
        empty.measure(SimpleNamespace(store=Store()))



def test_reported_prints_the_papers_two_sides_and_their_difference():
    """One decimal, two where the paper (or a mean of its two directions) has them; nothing where a side is not
    reported."""
    assert reported(90.1, 91.05, "mBERT") == "mBERT: 90.1 → 91.05 (+0.95)"
    assert reported(56.1, 55.7) == "56.1 → 55.7 (-0.4)"
    assert reported(0.0, 93.14) == "0.0 → 93.14 (+93.14)"
    assert reported(None, 3.0) == ""
