"""common/rehearsal/acceptance.py without a rehearsal: its checks that take seconds (the whole CPU fallback runs in
tests/test_rehearsal.py)."""
from common import requirements
from common.rehearsal import acceptance


def test_the_rehearsal_does_not_start_when_a_module_is_missing(tmp_path, monkeypatch):
    """The first GPU acceptance run without sacremoses failed HICTL's BLEU after five minutes of training; the check
    now says so before it starts snakemake."""
    monkeypatch.setitem(requirements.BY_EXPERIMENT, "dap", ("no_such_module_xling",))
    check = acceptance.rehearsal_check(["dap"], tmp_path / "work", str(tmp_path), cores=1, gpus=None, name="r")
    assert not check.passed and check.details["not_started"] == "modules do not import"
    assert "no_such_module_xling: ModuleNotFoundError" in check.log
    assert not (tmp_path / "work").exists()  # snakemake never ran
