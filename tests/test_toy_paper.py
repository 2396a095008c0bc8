"""A fifth paper is a folder of declarations (the proof): the toy paper of ``tests/fixtures/toy_paper`` (plain
translation ranking by DAP's recipe at another temperature, one table, one claim; under 100 lines) is added to a copy
of the repository by copying its folder into ``papers/``, joins ``snakemake all`` and the claims index, and leaves
them again when the folder is removed. The slow test runs its smoke DAG to a table and a claims row."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import DATA_ROOT, ROOT

FIXTURE = ROOT / "tests" / "fixtures" / "toy_paper"


def fixture_lines() -> int:
    return sum(len(p.read_text(encoding="utf-8").splitlines()) for p in FIXTURE.rglob("*") if p.is_file()
               and "__pycache__" not in p.parts)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A copy of the repository's files (git's view: tracked and new, not ignored; no figures) with the toy paper
    added as ``papers/toy``."""
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, capture_output=True,
                            check=True).stdout.decode().split("\0")
    copy = tmp_path / "repo"
    for name in listed:
        if name and not name.startswith(("figures/", "tests/")) and (ROOT / name).is_file():
            (copy / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, copy / name)
    shutil.copytree(FIXTURE, copy / "papers" / "toy", ignore=shutil.ignore_patterns("__pycache__"))
    return copy


def snakemake(repo: Path, workdir: Path, *args: str) -> str:
    """Snakemake on the copy, its packages (papers.toy among them) imported from the copy: PYTHONPATH names it, and
    the working directory is not this checkout (``python -m`` puts it first on sys.path)."""
    env = {**os.environ, "PYTHONPATH": str(repo)}
    proc = subprocess.run([sys.executable, "-m", "snakemake", "-s", str(repo / "Snakefile"), "-d", str(workdir),
                           *args, "--config", f"data_root={DATA_ROOT}"], capture_output=True, text=True, env=env,
                          cwd=repo.parent, timeout=1800)
    assert proc.returncode == 0, f"snakemake failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    return proc.stdout


def test_the_toy_paper_is_a_folder_of_declarations_under_100_lines(repo, tmp_path):
    assert fixture_lines() < 100
    assert not list(FIXTURE.rglob("train.py")) and not list(FIXTURE.rglob("*.smk"))  # shared rules, DAP's recipe
    printed = snakemake(repo, tmp_path / "wd", "all", "-n")
    for rule in ("toy_corpus", "toy_train", "toy_evaluate", "toy_report", "toy_all"):
        assert f"rule {rule}:" in printed, rule
    shutil.rmtree(repo / "papers" / "toy")
    printed = snakemake(repo, tmp_path / "wd", "all", "-n")
    assert "rule toy_" not in printed and "papers/toy/all" not in printed and "rule dap_train:" in printed


@pytest.mark.slow
def test_the_toy_paper_runs_to_a_table_and_a_claims_row(repo, tmp_path):
    """About 2 minutes on 2 cores: corpus, tokenizer, 2 seeds x (initial encoder, TR at temperature 0.1), Tatoeba,
    the report; then the cross-paper claims index lists the toy's verdict."""
    wd = tmp_path / "wd"
    snakemake(repo, wd, "papers/toy/all", "--cores", "2")
    table = (wd / "figures" / "toy" / "smoke" / "table1_tatoeba.csv").read_text().splitlines()
    assert table[0].startswith("model,ours,paper") and [r.split(",")[0] for r in table[1:]] == ["init", "tr"]
    [claim] = json.loads((wd / "figures" / "toy" / "smoke" / "claims.json").read_text())["records"]
    assert claim["id"] == "tr-above-init" and claim["seeds"] == 2 and claim["verdict"] != "not evaluated yet"
    resolved = json.loads(next((wd / "results").rglob("tr/seed1/model/../training_args.json")).read_text())
    assert resolved["experiment"] == "toy" and resolved["config"]["dap"]["temperature"] == 0.1
    proc = subprocess.run([sys.executable, "-m", "common.report.claims_index", "--scale", "smoke", "--figures",
                           str(wd / "figures")], env={**os.environ, "PYTHONPATH": str(repo)}, cwd=repo.parent,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-4000:]
    rows = json.loads((wd / "figures" / "claims" / "smoke.json").read_text())["records"]
    assert [(r["id"], r["verdict"]) for r in rows if r["paper"] == "toy"] == [("tr-above-init", claim["verdict"])]
