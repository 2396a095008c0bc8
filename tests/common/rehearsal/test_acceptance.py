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


def test_the_rehearsal_does_not_start_when_the_data_root_lacks_a_file(tmp_path):
    """On 2026-12-05 a data root without the STS sets failed MoCo-BERT's and VMSST's corpus jobs a minute into the
    GPU run; the check now names what is missing before it starts snakemake."""
    root = tmp_path / "data"
    (root / "tatoeba_v1").mkdir(parents=True)
    (root / "tatoeba_v1" / "tatoeba.cmn-eng.cmn").write_text("x\n")
    check = acceptance.rehearsal_check(["moco"], tmp_path / "work", str(root), cores=1, gpus=None, name="r")
    assert not check.passed and check.details["not_started"] == "files missing from the data root"
    missing = check.log.splitlines()[1:]
    assert str(root / "tatoeba_v1" / "tatoeba.cmn-eng.eng") in missing  # Tatoeba v1, which the mirror serves
    assert str(root / "tatoeba_v1" / "tatoeba.cmn-eng.cmn") not in missing
    assert str(root / "sts" / "sts12-16" / "STS12-en-test") in missing  # the English STS, read in place
    assert len(missing) == 1 + 7
    assert not (tmp_path / "work").exists()  # snakemake never ran
