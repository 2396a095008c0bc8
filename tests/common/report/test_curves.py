"""The learning curve's points (common/report/curves.py)."""
from types import SimpleNamespace

from common.report import curves
from common.runs import Run, RunRegistry


def test_each_seeds_curve_starts_at_its_own_untrained_model(monkeypatch):
    """A from-scratch model differs per seed (VMSST's step-0 runs): seed 2's curve starts at seed 2's init, not seed
    1's; a snapshot's score comes from its results file (here: 10 x step + seed)."""
    reg = RunRegistry("p", [Run(m, "l2", s, ("tatoeba@cosine",)) for m in ("init", "vmsst") for s in (1, 2)])
    values = {("init", 1): 1.0, ("init", 2): 2.0, ("vmsst", 1): 51.0, ("vmsst", 2): 52.0}
    store = SimpleNamespace(registry=reg, values=lambda m, t, p, i, seeds: [values[(m, seeds[0])]])
    cfg = {"encoders": {"l2": {}}, "training": {"max_steps": 4},
           "learning_curve": {"methods": ["vmsst"], "steps": [2], "task": "tatoeba@cosine"}}
    monkeypatch.setattr(curves, "read_result", lambda path: SimpleNamespace(
        scores={"main_score": 10.0 * int(path.split("/step")[1].split("/")[0]) + int(path.split("/seed")[1][0])}))
    points = curves.curve_points(SimpleNamespace(cfg=cfg, store=store, results="r"))
    assert points == {("vmsst", 1): [(0, 1.0), (2, 21.0), (4, 51.0)], ("vmsst", 2): [(0, 2.0), (2, 22.0), (4, 52.0)]}
