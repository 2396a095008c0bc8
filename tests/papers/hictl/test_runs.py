"""HICTL's run registry: ``hictl.ablations`` picks Table 3's ablations (the ci scale runs none); Table 3 and the
claims then read only the runs that exist, and say which ran."""
from types import SimpleNamespace

import yaml

from common.config import load_paper_config
from papers.hictl.claims import declare
from papers.hictl.report import HERE, table3
from papers.hictl.runs import registry
from papers.hictl.variants import ABLATIONS


class Store:
    """Every run scores 50 on every task; records the runs read."""

    def __init__(self):
        self.methods = set()

    def scores(self, method, task, init=None, seeds=None):
        self.methods.add(method)
        score = {"main_score": 50.0, "f1": 50.0, "exact_match": 50.0, "groups": {"36": {"both": 50.0}},
                 "accuracy": {"en": 50.0}, "per_language": {}}
        return [score for _ in (seeds or [1])]


def test_hictl_ablations_picks_table_3s_runs_and_table_3_reads_only_them():
    methods = lambda cfg: {r.method for r in registry(cfg)}
    assert set(ABLATIONS) <= methods(load_paper_config("hictl", "rehearsal"))  # default: all three
    assert not methods(load_paper_config("hictl", "ci")) & set(ABLATIONS)  # the ci scale: none
    cfg = load_paper_config("hictl", "ci")
    cfg["hictl"]["ablations"] = ["hictl_hns_no-mt"]
    assert methods(cfg) & set(ABLATIONS) == {"hictl_hns_no-mt"}
    assert {c.id for c in declare(cfg) if c.id.endswith("-hurts")} == {"hictl_hns_no-mt-hurts"}
    ctx = SimpleNamespace(cfg=cfg, scale="ci", store=Store(), manifest={"kind": "ci", "leakage": {"dropped_total": 0}},
                          reported=yaml.safe_load((HERE / "reported.yaml").read_text()))
    table = table3(ctx)
    assert [r[0] for r in table.rows if r[1] == "ours"] == ["Full Model", "w/o MT data"]
    assert len([r for r in table.rows if r[1] == "paper"]) == 1 + len(ABLATIONS)  # the paper's rows stay
    assert ctx.store.methods & set(ABLATIONS) == {"hictl_hns_no-mt"}
    assert any("Run at this scale: w/o MT data (config hictl.ablations)" in n for n in table.notes)
