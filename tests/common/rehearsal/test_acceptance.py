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


def test_the_rehearsal_does_not_start_when_the_data_root_lacks_a_file(tmp_path, monkeypatch):
    """On 2026-12-05 a data root without the STS sets failed MoCo-BERT's and VMSST's corpus jobs a minute into the
    GPU run; the check now names what is missing before it starts snakemake: MoCo-BERT's English STS, and the
    Tatoeba v1 files the mirror serves for every experiment (the mirror rule builds them all, whichever run)."""
    monkeypatch.setattr(requirements, "missing", lambda names: [])  # whatever this environment lacks
    root = tmp_path / "data"
    (root / "tatoeba_v1").mkdir(parents=True)
    (root / "tatoeba_v1" / "tatoeba.cmn-eng.cmn").write_text("x\n")
    check = acceptance.rehearsal_check(["moco"], tmp_path / "work", str(root), cores=1, gpus=None, name="r")
    assert not check.passed and check.details["not_started"] == "files missing from the data root"
    missing = check.log.splitlines()[1:]
    assert str(root / "sts" / "sts12-16" / "STS12-en-test" / "STS.input.*.txt") in missing  # read in place
    tatoeba = {f for f in missing if "tatoeba_v1" in f}
    assert str(root / "tatoeba_v1" / "tatoeba.cmn-eng.cmn") not in tatoeba
    assert str(root / "tatoeba_v1" / "tatoeba.ara-eng.ara") in tatoeba  # VMSST's, though only MoCo-BERT runs
    assert len(missing) == 7 + len(tatoeba) and len(tatoeba) == 2 * 6 - 1  # ara cmn deu fra spa tur, both sides
    assert not (tmp_path / "work").exists()  # snakemake never ran
