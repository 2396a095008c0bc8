"""The data_root check when the workflow is planned (common/workflow/data_root.py): a data_root missing a folder
stops a dry run before any job, with one message naming the folder and the command that rebuilds it."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from common.config import load_config
from common.data import corpora, loaders
from common.workflow import data_root as dr
from tests.conftest import DATA_ROOT, ROOT

needs_data = pytest.mark.skipif(not (DATA_ROOT / "INDEX.md").exists(), reason="shared data not found")
TOP = sorted(p.name for p in DATA_ROOT.iterdir() if p.is_dir()) if DATA_ROOT.is_dir() else []


def without(tmp_path: Path, *missing: str) -> Path:
    """A data_root of links to every shared folder but ``missing``."""
    root = tmp_path / "data"
    root.mkdir(parents=True)
    for name in TOP:
        if name not in missing:
            (root / name).symlink_to(DATA_ROOT / name)
    return root


@needs_data
def test_a_dry_run_with_a_folder_missing_stops_before_any_job(tmp_path):
    root = without(tmp_path, "anki_pairs")
    proc = subprocess.run([sys.executable, "-m", "snakemake", "-s", str(ROOT / "Snakefile"), "-d", str(tmp_path / "wd"),
                           "papers/dap/all", "-n", "--config", "scale=mini", f"data_root={root}"],
                          capture_output=True, text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT)})
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "Job stats" not in out and out.count("DataRootError") == 1, out[-3000:]
    assert f"{root}/anki_pairs/  (the whole folder)" in out
    assert f"snakemake data --cores 2 --config data_root={root}" in out
    assert not (tmp_path / "wd" / "results").exists()


@needs_data
@pytest.mark.parametrize("experiment", ["dap", "moco", "hictl", "vmsst", "leaderboard"])
def test_the_mini_configs_read_what_the_shared_data_root_has(experiment):
    assert corpora.absent(dr.corpus_reads(load_config(experiment, "mini"), DATA_ROOT)) == []


@needs_data
def test_every_folder_dap_reads_is_named_when_missing(tmp_path):
    cfg = load_config("dap", "mini")
    for name in TOP:
        root = without(tmp_path / name, name)
        message = dr.missing_message(dr.corpus_reads(cfg, root), root, "dap")
        assert message and f"{root}/{name}/  (the whole folder)" in message, name


def test_the_message_names_each_missing_thing_once(tmp_path):
    root = tmp_path / "data"
    (root / "sts" / "sick").mkdir(parents=True)
    (root / "tatoeba_v1").mkdir()
    paths = [root / "anki_pairs" / "deu-eng.tsv.gz", root / "anki_pairs" / "MANIFEST.md",
             root / "sts" / "sick" / "SICK_test_annotated.txt", root / "tatoeba_v1" / "tatoeba.*-eng.eng",
             tmp_path / "mine" / "de-en.tsv"]
    message = dr.missing_message(paths, root, "dap's corpus job at scale mini")
    assert message.splitlines() == [
        f"data_root '{root}' lacks what dap's corpus job at scale mini reads (5 missing, checked before any job runs):",
        f"  {root}/anki_pairs/  (the whole folder)", f"  {root}/sts/sick/SICK_test_annotated.txt",
        f"  {root}/tatoeba_v1/tatoeba.*-eng.eng  (no file matches)", f"  {tmp_path}/mine/de-en.tsv",
        "Rebuild data_root from its public sources with one command (docs/data.md):",
        f"  snakemake data --cores 2 --config data_root={root}",
        "or point data_root at the folder that holds them: --config data_root=DIR"]
    with pytest.raises(dr.DataRootError, match="data_root itself does not exist"):
        dr.check(paths, tmp_path / "nowhere", "x")
    assert dr.check([root / "sts"], root, "x") == []


def test_no_glob_matches_nothing_silently(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"tatoeba_v1: no file matches 'tatoeba\.\*-eng\.eng' \(the folder"):
        loaders.tatoeba_languages(tmp_path / "tatoeba_v1")
    (tmp_path / "tatoeba_v1").mkdir()
    with pytest.raises(FileNotFoundError, match=r"tatoeba_v1: no file matches 'tatoeba\.\*-eng\.eng'$"):
        loaders.tatoeba_languages(tmp_path / "tatoeba_v1")
    (tmp_path / "tatoeba_v1" / "tatoeba.deu-eng.eng").write_text("x\n")
    assert loaders.tatoeba_languages(tmp_path / "tatoeba_v1") == ["deu"]
