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


@pytest.mark.parametrize("scale, tables", [("paper", 3), ("rehearsal", 3), ("smoke", 3), ("mini", 0)])
def test_a_scale_without_ablations_trains_none_of_their_runs(scale, tables):
    """Issue 35's budget: mini leaves the section 5 ablations out (config note); the other scales keep all three."""
    cfg = load_paper_config("dap", scale)
    ablated = [r.method for r in registry(cfg) if r.method.startswith(("dap_dir-", "dap_rho-", "dap_k-"))]
    assert len(section5_outputs(cfg.get("ablations", {}))) == tables
    assert bool(ablated) == bool(tables)
