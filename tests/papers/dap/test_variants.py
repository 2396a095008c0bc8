import pytest

from common.config import load_paper_config
from papers.dap.runs import registry
from papers.dap.variants import section5_outputs


def test_section5_outputs_follow_the_ablated_axes_in_the_papers_order():
    assert section5_outputs({}) == []
    assert section5_outputs({"rtl_layers": [1, 2], "direction": [], "rho": [0.5, 1.0]}) == ["figure3_rho",
                                                                                           "figure4_depth"]
    assert section5_outputs({"rtl_layers": [1], "rho": [1.0], "direction": ["xx2en"]}) == [
        "table5_direction", "figure3_rho", "figure4_depth"]


@pytest.mark.parametrize("scale, tables", [("paper", 3), ("rehearsal", 3), ("smoke", 3), ("mini", 3),
                                           ("mini without ablations", 0)])
def test_a_scale_without_ablations_trains_none_of_their_runs(scale, tables):
    """Every scale but ci (its points are the defaults only) trains section 5's runs; a config without the
    ``ablations`` key trains none of them and writes none of their tables."""
    cfg = load_paper_config("dap", scale.split()[0])
    if scale.endswith("without ablations"):
        cfg = {k: v for k, v in cfg.items() if k not in ("ablations", "targets")}
    ablated = [r.method for r in registry(cfg) if r.method.startswith(("dap_dir-", "dap_rho-", "dap_k-"))]
    assert len(section5_outputs(cfg.get("ablations", {}))) == tables
    assert bool(ablated) == bool(tables)


def test_task_seeds_limit_a_task_to_the_first_seeds_and_the_notes_say_so():
    """Mini's budget cut (config note): XNLI on each method's first seed, Tatoeba and BUCC on all three; the
    table notes name the seeds each task's cells average."""
    from papers.dap.report import where

    cfg = {**load_paper_config("dap", "mini"), "task_seeds": {"xnli@zero-shot": 2}}
    reg = registry(cfg)
    xnli = [(r.method, r.seed) for r in reg if "xnli@zero-shot" in r.tasks and not r.method.startswith("dap_")]
    assert xnli == [(m, s) for m in ("tr", "tr_tlm", "dap") for s in (1, 2)] + [("init", 1)]
    assert all("bucc@ratio-k4" in r.tasks for r in reg if r.method in ("tr", "tr_tlm", "dap"))
    from common.report.results import ResultStore

    ctx = type("Ctx", (), {"scale": "mini", "cfg": cfg, "manifest": {"leakage": {"dropped_total": 0}},
                           "store": ResultStore("unused", reg)})()
    assert "Seeds [1, 2] (mean) (task_seeds" in where(ctx, "xnli@zero-shot")
    assert "Seeds [1, 2, 3] (mean). " in where(ctx, "bucc@ratio-k4")
    assert "Seed 1 only. " in where(ctx, seed=1) and "Seeds" not in where(ctx, seed=1)  # section 5, Figure 1


def test_without_sources_trains_the_listed_methods_only():
    cfg = {**load_paper_config("dap", "mini"), "without_sources": {"anki_pairs": ["tr"], "ntrex128": ["tr", "dap"]}}
    assert [(r.method, r.seed, r.tasks) for r in registry(cfg) if "_no-" in r.method] == [
        ("tr_no-anki_pairs", 1, ("tatoeba@cosine",)), ("tr_no-ntrex128", 1, ("tatoeba@cosine",)),
        ("dap_no-ntrex128", 1, ("tatoeba@cosine",))]
