"""The difference curve between two methods' snapshots (common/report/gap_curve.py)."""
import json

import pytest

from common.eval.results import write_result
from common.report import gap_curve

TASK = "tatoeba@cosine"


def _result(path, items):
    scores = {"main_score": 0.0, "items": {lang: {"xx2en": x, "en2xx": e} for lang, (x, e) in items.items()}}
    write_result(path / f"{TASK}.json", task=TASK, split="test", languages=list(items), scores=scores,
                 model={"name": "m"}, scale="smoke", seed=1, config={}, data_files=[], evaluation_time=0.0)


@pytest.fixture()
def runs(tmp_path):
    """Seed 1 of A and B at step 10, two languages of 4 pairs each."""
    _result(tmp_path / "a/seed1/step10", {"spa": ("1100", "1000"), "deu": ("0000", "0000")})
    _result(tmp_path / "b/seed1/step10", {"spa": ("1110", "1100"), "deu": ("1000", "0000")})
    return tmp_path


def test_the_difference_is_worked_out_by_hand_on_each_group(runs):
    """all: A = mean(50, 25, 0, 0) = 18.75, B = mean(75, 50, 25, 0) = 37.5; spa alone: 37.5 against 62.5."""
    groups = gap_curve.resolve_groups(["all", "spa=spa"], None)
    points = gap_curve.gap_curve(TASK, runs / "a", runs / "b", [10], groups, replicates=50)
    got = {p.group: (p.a, p.b, p.diff, p.seeds, p.per_seed) for p in points}
    assert got == {"all": (18.75, 37.5, 18.75, 1, (18.75,)), "spa": (37.5, 62.5, 25.0, 1, (25.0,))}
    assert all(p.lo <= p.diff <= p.hi for p in points)


def _retrieval(path, outcomes):
    task = "question-retrieval@nq"
    write_result(path / f"{task}.json", task=task, split="test", languages=["en"],
                 scores={"main_score": 0.0, "items": {"en": outcomes}}, model={"name": "m"}, scale="smoke", seed=1,
                 config={}, data_files=[], evaluation_time=0.0)


def test_several_tasks_make_their_weighted_mean_worked_out_by_hand(runs):
    """Tatoeba (A 18.75, B 37.5, above) weighted 1/4 and NQ (A '1000' = 25, B '1110' = 75) weighted 3/4:
    A = 4.6875 + 18.75 = 23.4375, B = 9.375 + 56.25 = 65.625, B - A = 42.1875."""
    _retrieval(runs / "a/seed1/step10", "1000")
    _retrieval(runs / "b/seed1/step10", "1110")
    tasks = [TASK, "question-retrieval@nq"]
    (p,) = gap_curve.gap_curve(tasks, runs / "a", runs / "b", [10], {"all": None}, replicates=50,
                               weights=[0.25, 0.75])
    assert (p.a, p.b, p.diff) == pytest.approx((23.4375, 65.625, 42.1875))
    assert p.lo <= p.diff <= p.hi
    (equal,) = gap_curve.gap_curve(tasks, runs / "a", runs / "b", [10], {"all": None}, replicates=50)
    assert equal.diff == pytest.approx((18.75 + 50.0) / 2)
    with pytest.raises(ValueError, match="1 weights for 2 tasks"):
        gap_curve.gap_curve(tasks, runs / "a", runs / "b", [10], {"all": None}, weights=[1.0])
    out = runs / "out/score"  # the command line takes the weights as fractions
    gap_curve.main(["--task", TASK, "--weight", "1/4", "--task", "question-retrieval@nq", "--weight", "3/4",
                    "--metric", "Score", "--a", f"A={runs / 'a'}", "--b", f"B={runs / 'b'}", "--steps", "10",
                    "--replicates", "50", "--out", str(out)])
    saved = json.loads(out.with_suffix(".json").read_text())
    assert (saved["task"], saved["weights"]) == ("Score", [0.25, 0.75])
    assert saved["points"][0]["diff"] == pytest.approx(42.1875)


def test_the_cli_writes_the_table_the_json_and_the_figure(runs):
    out = runs / "out/gap"
    gap_curve.main(["--task", TASK, "--a", f"TR={runs / 'a'}", "--b", f"DAP={runs / 'b'}", "--steps", "10",
                    "--group", "all", "--replicates", "50", "--note", "Paper: +1.0", "--out", str(out)])
    table = out.with_suffix(".md").read_text()
    assert "| 10 | all | 18.8 | 37.5 | 18.8 | 18.8 | [" in table
    assert "- Paper: +1.0\n" in table  # the paper's number beside ours
    assert json.loads(out.with_suffix(".json").read_text())["points"][0]["diff"] == 18.75
    assert out.with_suffix(".png").stat().st_size > 0


def test_source_groups_come_from_the_manifest_and_unknown_groups_are_refused():
    manifest = {"train_sources": {"spa": [["anki_pairs", [0, 5]], ["ntrex128", [5, 9]]],
                                  "ita": [["ntrex128", [9, 12]]]}}
    assert gap_curve.resolve_groups(["ntrex128 alone"], manifest) == {"ntrex128 alone": ["ita"]}
    with pytest.raises(ValueError, match="ntrex128 alone"):
        gap_curve.resolve_groups(["bible alone"], manifest)


def test_a_missing_snapshot_names_the_file(runs):
    with pytest.raises(FileNotFoundError, match="step20"):
        gap_curve.gap_curve(TASK, runs / "a", runs / "b", [20], {"all": None}, replicates=50)
