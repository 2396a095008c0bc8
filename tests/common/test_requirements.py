"""common/requirements.py: the modules each experiment's jobs import, and the failures to import them."""
import pytest

from common import requirements
from common.config import LEADERBOARD, papers


def test_the_nmt_experiments_need_fairseq_and_sacremoses():
    for experiment in ("hictl", LEADERBOARD):
        assert {"fairseq", "common.nmt.fairseq_plugin", "sacremoses"} <= set(requirements.modules(experiment))
    assert not any(m.startswith("papers.") for m in requirements.modules(LEADERBOARD))
    assert "sacremoses" not in requirements.modules("dap")
    assert requirements.modules("dap")[-2:] == ["papers.dap.train", "papers.dap.report"]


def test_missing_names_each_module_that_fails_and_why():
    found = requirements.missing(["json", "no_such_module_xling", "common.io"])
    assert found == ["no_such_module_xling: ModuleNotFoundError: No module named 'no_such_module_xling'"]


@pytest.mark.parametrize("experiment", [*papers("smoke"), LEADERBOARD])
def test_every_listed_module_imports_in_the_test_environment(experiment):
    """The list names real modules: it once named ``common.nmt.plugin`` (the plugin is ``fairseq_plugin``), so the
    preflight failed HICTL in every environment."""
    assert requirements.missing(requirements.modules(experiment)) == []
