import pytest

from common.report.results import ResultStore, Stat, metric
from common.report.specs import Col, Ref, Row, TableSpec
from common.report.tables import fmt
from common.runs import Run, RunRegistry
from tests.results import write_scores


@pytest.fixture
def store(tmp_path):
    reg = RunRegistry("x", [Run("m", "i", 1, ("t", "fig")), Run("m", "i", 2, ("t",)), Run("abl", "i", 1, ("t",))])
    for (method, seed), f1 in {("m", 1): 10.0, ("m", 2): 20.0, ("abl", 1): 5.0}.items():
        write_scores(tmp_path / "eval" / "i" / method / f"seed{seed}" / "t.json",
                   {"scores": {"main_score": f1, "per_pair": {"de-en": {"test": {"f1": f1 + 1}}}}})
    return ResultStore(tmp_path, reg)


def test_metric_paths():
    assert metric({"a": {"b-c": {"d": 3}}}, "a.b-c.d") == 3
    with pytest.raises(KeyError, match="missing 'x'"):
        metric({"a": {}}, "a.x")


def test_store_reads_registered_seeds(store):
    assert store.values("m", "t") == [10.0, 20.0] and store.mean("m", "t") == 15.0
    assert store.values("m", "t", "per_pair.de-en.test.f1", seeds=[2]) == [21.0]
    assert store.first("m", "t")["main_score"] == 10.0


def test_a_task_registered_on_one_seed_reads_that_seed_only(store, tmp_path):
    """MoCo-BERT's t-SNE is scored on the main run's first seed: the 3-seed mini report read seed 2's missing file."""
    write_scores(tmp_path / "eval" / "i" / "m" / "seed1" / "fig.json", {"scores": {"main_score": 1.0}})
    assert store.values("m", "fig") == [1.0]
    with pytest.raises(KeyError, match=r"no seed of run \(abl, i\) is scored on 'fig'"):
        store.values("abl", "fig")


def test_spec_renders_means_placeholders_and_reported_values(store):
    spec = TableSpec("n", "caption", ["model", "pair"],
                     [Col("F ours", "t", "per_pair.{pair}.test.f1"), Ref("F paper", 0), Col("main", "t")],
                     [Row(("m", "de-en"), "m", "i", {"pair": "de-en"}, (90.0,)),
                      Row(("abl", "de-en"), "abl", params={"pair": "de-en"}),
                      Row(("m, seed 2 only", "de-en"), "m", params={"pair": "de-en"}, seeds=(2,)),
                      Row(("paper only", "-"), None, reported=(80.0,))])
    t = spec.render(store)
    assert t.columns == ["model", "pair", "F ours", "F paper", "main"]
    sd = 50 ** 0.5  # sample standard deviation of (11, 21) and of (10, 20)
    assert t.rows == [["m", "de-en", Stat(16.0, sd, 2), 90.0, Stat(15.0, sd, 2)], ["abl", "de-en", 6.0, None, 5.0],
                      ["m, seed 2 only", "de-en", 21.0, None, 20.0], ["paper only", "-", None, 80.0, None]]
    assert fmt(t.rows[0][2]) == "16.0 ± 7.1"
