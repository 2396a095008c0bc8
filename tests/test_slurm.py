"""Through ``--profile profiles/slurm`` on a real single-node Slurm (started by ``scripts/slurm_local.sh``, its
node advertising two GPUs as GRES without devices):

* a small smoke target gives the same results as a local run. The target is the leaderboard restricted to one
  method and one task: corpus, tokenizer, one training run, one evaluation, one table and the manifest (6 jobs),
  so every kind of rule runs as a Slurm job in a few minutes;
* DAP's rehearsal of the paper scale runs with the multi-node job shape on one node: every training
  job asks for ``--gres=gpu:2 --ntasks-per-gpu=1 --ntasks=2`` and starts its two ranks as ``srun`` tasks, which
  find each other from Slurm's variables; the rehearsed time limit ends a job with status 75, and the
  resubmitted job resumes from its checkpoint.

Marked ``slurm`` (not in the default suite; maintainers run it with ``-m "slow or slurm"``). Skipped, with
the reason, when Slurm cannot be started here (no root, no package manager)."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import DATA_ROOT, ROOT

pytestmark = pytest.mark.slurm
SCRIPT = ROOT / "scripts" / "slurm_local.sh"
STATE = Path(os.environ.get("SLURM_LOCAL_STATE", "/tmp/slurm-local"))


@pytest.fixture(scope="module")
def slurm():
    if os.geteuid() != 0:
        pytest.skip("starting a local Slurm needs root (apt-get, slurmctld/slurmd); "
                    "see docs/cluster.md")
    if not shutil.which("apt-get") and not shutil.which("slurmctld"):
        pytest.skip("no apt-get to install slurm-wlm and munge; see docs/cluster.md")
    started = subprocess.run(["bash", str(SCRIPT), "start"], capture_output=True, text=True,
                             env={**os.environ, "SLURM_LOCAL_GPUS": "2"})
    if started.returncode != 0:
        subprocess.run(["bash", str(SCRIPT), "stop"], capture_output=True)
        pytest.skip(f"could not start a local Slurm: {started.stderr.strip()[-500:]}")
    yield
    subprocess.run(["bash", str(SCRIPT), "stop"], check=True, capture_output=True)
    # no state left behind: daemons gone, state folder and generated config removed
    assert not STATE.exists() and not Path("/etc/slurm/slurm.conf").exists()
    assert subprocess.run(["pgrep", "-x", "slurmctld"], capture_output=True).returncode != 0


TARGET = ["leaderboard/all", "--config", f"data_root={DATA_ROOT}", "leaderboard_methods=[dap]",
          "leaderboard_tasks=[tatoeba@cosine]"]
RULES = {"corpus", "tokenizer", "train", "evaluate", "report", "all"}


PROFILE = ["--profile", str(ROOT / "profiles" / "slurm"), "--slurm-init-seconds-before-status-checks", "1",
           "--seconds-between-status-checks", "2"]  # faster polling only because the jobs here take seconds


def snakemake(workdir: Path, *args: str, target: list[str] = TARGET) -> None:
    cmd = [sys.executable, "-m", "snakemake", "-s", str(ROOT / "Snakefile"), "-d", str(workdir), *target, *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"


def scores(workdir: Path) -> dict[str, dict]:
    """Every evaluation result's scores (not the ``ResultRecord.schema.json`` written beside them)."""
    return {str(p.relative_to(workdir)): json.loads(p.read_text())["scores"]
            for p in sorted((workdir / "results").rglob("eval/**/*.json")) if not p.name.endswith(".schema.json")}


def tables(workdir: Path) -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted((workdir / "figures").rglob("*.csv"))}


@pytest.mark.skipif(not (DATA_ROOT / "INDEX.md").exists(), reason="shared data not found")
def test_small_target_through_slurm_equals_local_run(slurm, tmp_path):
    snakemake(tmp_path / "local", "--cores", "2")
    snakemake(tmp_path / "slurm", *PROFILE)  # the profile as a user runs it
    logdir = tmp_path / "slurm" / ".snakemake" / "slurm_logs"  # one folder per rule, one log per Slurm job
    ran = {p.relative_to(logdir).parts[0] for p in logdir.rglob("*.log")}
    assert ran >= {f"rule_leaderboard_{r}" for r in RULES - {"all"}}  # every computing rule ran as a Slurm job
    assert (tmp_path / "slurm" / "leaderboard" / "all").exists()
    local, cluster = scores(tmp_path / "local"), scores(tmp_path / "slurm")
    assert len(local) == 1 and local == cluster  # one run x one task
    assert tables(tmp_path / "local") == tables(tmp_path / "slurm")
    models = sorted((tmp_path / "local" / "results").rglob("model.safetensors"))
    assert models and all(p.read_bytes() == (tmp_path / "slurm" / p.relative_to(tmp_path / "local")).read_bytes()
                          for p in models)


@pytest.mark.skipif(not (DATA_ROOT / "INDEX.md").exists(), reason="shared data not found")
def test_dap_rehearsal_through_slurm_with_srun_ranks(slurm, tmp_path):
    from common.config import load_config
    from common.runs import saves_only

    snakemake(tmp_path, *PROFILE, target=["papers/dap/all", "--config", "scale=rehearsal", f"data_root={DATA_ROOT}",
                                          "launcher=srun"])
    logdir = tmp_path / ".snakemake" / "slurm_logs"
    ran = {p.relative_to(logdir).parts[0] for p in logdir.rglob("*.log")}
    assert {"rule_dap_corpus", "rule_dap_train", "rule_dap_evaluate", "rule_dap_report", "rule_model"} <= ran
    # every training job: the srun launcher, two ranks that found each other, and the GPU GRES Slurm granted
    runs = list((tmp_path / "results" / "rehearsal" / "dap" / "models").glob("*/*/seed1"))
    assert runs and all(json.loads((r / "training_args.json").read_text())["world_size"]
                        == (1 if saves_only(r.parent.name) else 2) for r in runs)  # one task saves the encoder
    train_logs = "\n".join(p.read_text() for p in (tmp_path / "logs" / "rehearsal" / "dap" / "train").rglob("*.log"))
    assert "launcher: srun" in train_logs and "launcher: launch" not in train_logs
    limit = load_config("dap", "rehearsal")["training"]["rehearse_time_limit"]
    log = (tmp_path / "logs" / "rehearsal" / "dap" / "train" / limit["run"] / "seed1.log").read_text()
    assert f"resumed from step {limit['at']}" in log
    assert (tmp_path / "figures" / "dap" / "rehearsal" / "README.md").exists()
    assert (tmp_path / "papers" / "dap" / "all").exists()
