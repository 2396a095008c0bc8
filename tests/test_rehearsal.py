"""The rehearsals of the paper scale, through the GPU acceptance script's CPU fallback
(``scripts/gpu_acceptance.sh --device cpu``), which runs

    snakemake papers/dap/all papers/moco/all papers/vmsst/all papers/hictl/all --config scale=<ci|rehearsal>

in the background for the session: every paper's paper config with tiny widths and corpora, downloads from the
local mirror (one 503 and cut connections on the way), the pinned checkpoints' code paths (tiny random ones in the
Hub's formats), 2 gloo ranks through our launcher with ZeRO as configured and bf16, a time limit rehearsed in the
middle of one run per paper (checkpoint, exit 75, Snakemake's retry resumes), HICTL's fairseq NMT with the paper's
flags, and every table and figure rule. Then the tests read what it left.

Two scales of it:

* ``ci`` (``papers/<p>/config/ci.yaml``: the rehearsal config with its run registry cut to one training run per
  distinct recipe and objective, one NMT setting, every table and figure rule once) for the four papers, with the
  acceptance's trainer and MFU checks: the default suite (fixture ``ci``). Its cost is set by its jobs' count, most
  of a job being the interpreter's start and torch's import (docs/tests.md, "the test budget").
* ``rehearsal``, every run of the paper configs (every ablation point, both encoders, every NMT setting), about
  five times the jobs: the slow tests (``-m slow``, fixture ``rehearsal``), for the papers whose tests were selected
  (``rehearsed``)."""
import csv
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from common.config import load_config
from common.models import hub
from common.runs import saves_only
from common.training.metrics_log import read_metrics
from tests import background
from tests.conftest import DATA_ROOT, ROOT

PAPERS = ("dap", "moco", "vmsst", "hictl")
WHOLE_RUN = "dap"  # what the checks of the whole run read (the mirror's two faults are on DAP's downloads)
CI_CHECK = "ci rehearsal, 2 gloo ranks"
CI_JOBS = 85  # at most, the ci rehearsal's jobs: its cost is mostly their count (its budget: docs/tests.md)
FULL_CHECK = "rehearsal, 2 gloo ranks"
pytestmark = pytest.mark.skipif(not (DATA_ROOT / "INDEX.md").exists(), reason="shared data not found")


def params(tests: list[pytest.Item], fixture: str) -> list[dict]:
    return [getattr(getattr(t, "callspec", None), "params", {}) for t in tests if fixture in t.fixturenames]


def rehearsed(tests: list[pytest.Item]) -> list[str]:
    """The papers the selected tests read from the full rehearsal: their ``paper`` parameters, and ``WHOLE_RUN`` for
    a test without one."""
    named = {p.get("paper", WHOLE_RUN) for p in params(tests, "rehearsal")}
    return [p for p in PAPERS if p in named]


def ci_rehearsed(tests: list[pytest.Item]) -> list[str]:
    """The papers of the ci rehearsal: every paper (the default suite) unless each selected test that reads it names
    its paper (``-k`` on one paper's tests rehearses that paper alone)."""
    found = params(tests, "acceptance")
    if not found or any("paper" not in p for p in found):
        return list(PAPERS)
    return [p for p in PAPERS if p in {q["paper"] for q in found}]


def acceptance_args(root: Path) -> list[str]:
    return ["bash", str(ROOT / "scripts" / "gpu_acceptance.sh"), "--device", "cpu", "--cores", "3",
            "--data-root", str(DATA_ROOT), "--workdir", str(root / "work"), "--out", str(root / "out")]


@background.declare("acceptance", timeout=2400, requires=DATA_ROOT / "INDEX.md", env={"PYTHONPATH": str(ROOT),
                    "PYTHON": sys.executable})
def acceptance_command(root: Path, tests: list[pytest.Item]) -> list[str]:
    """The CPU fallback with the ci rehearsal of every paper, once per session, started in the background with the
    smoke run when the session starts (tests/background.py): the two runs fill each other's idle gaps between jobs."""
    return [*acceptance_args(root), "--scale", "ci", "--papers", *ci_rehearsed(tests)]


@background.declare("full_acceptance", timeout=4200, requires=DATA_ROOT / "INDEX.md",
                    env={"PYTHONPATH": str(ROOT), "PYTHON": sys.executable})
def full_acceptance_command(root: Path, tests: list[pytest.Item]) -> list[str]:
    """The full rehearsal of the papers the selected slow tests read (its trainer and MFU checks are the ci run's)."""
    return [*acceptance_args(root), "--scale", "rehearsal", "--checks", "rehearsal",
            "--papers", *(rehearsed(tests) or [WHOLE_RUN])]


def finished(fixture: str) -> Path:
    run = background.wait(fixture)
    if not (run.workdir / "out" / "acceptance.json").exists():
        raise AssertionError(f"gpu_acceptance.sh wrote no report:\n{run.tail()}")
    return run.workdir


@pytest.fixture(scope="session")
def acceptance() -> Path:
    return finished("acceptance")


@pytest.fixture(scope="session")
def ci(acceptance) -> Path:
    return acceptance / "work" / "ci"


@pytest.fixture(scope="session")
def full_acceptance() -> Path:
    return finished("full_acceptance")


@pytest.fixture(scope="session")
def rehearsal(full_acceptance) -> Path:
    return full_acceptance / "work" / "rehearsal"


def checks(acceptance: Path) -> dict[str, dict]:
    return {c["name"]: c for c in json.loads((acceptance / "out" / "acceptance.json").read_text())["checks"]}


def papers_in(acceptance: Path, check: str) -> list[str]:
    """The papers a run rehearsed (its rehearsal check reports figures for each)."""
    found = checks(acceptance).get(check, {"details": {}})
    return [p for p in PAPERS if p in found["details"]]


def failed(found: dict[str, dict]) -> dict[str, str]:
    return {name: c["log"][-2000:] for name, c in found.items() if not c["passed"]}


def test_each_run_rehearses_the_papers_the_selected_tests_read():
    def test(paper=None, reads=True):
        fixtures = ["full_acceptance", "rehearsal"] if reads else ["acceptance", "ci"]
        return SimpleNamespace(fixturenames=fixtures, **({"callspec": SimpleNamespace(params={"paper": paper})}
                                                         if paper else {}))
    assert rehearsed([test(reads=False)]) == []  # the default suite: the ci rehearsal only
    assert rehearsed([test("hictl"), test("moco"), test(reads=False)]) == ["moco", "hictl"]
    assert rehearsed([test("moco"), test()]) == ["dap", "moco"]  # a whole-run check reads DAP's downloads
    assert ci_rehearsed([test(reads=False)]) == list(PAPERS)  # a check of the whole ci run: every paper
    assert ci_rehearsed([test("hictl", reads=False), test("dap", reads=False)]) == ["dap", "hictl"]
    assert ci_rehearsed([test("hictl", reads=False), test(reads=False)]) == list(PAPERS)


def test_the_ci_scale_cuts_runs_and_keeps_every_rule(tmp_path):
    """The ci configs are the rehearsal's with fewer runs: the same report rules (every table and figure), ranks,
    ZeRO, precision, steps and time limit; a dry run of both scales counts the jobs."""
    def dry(scale: str) -> dict[str, int]:
        proc = subprocess.run([sys.executable, "-m", "snakemake", "-s", str(ROOT / "Snakefile"), "-n", "-d",
                               str(tmp_path / scale), *[f"papers/{p}/all" for p in PAPERS], "--config",
                               f"scale={scale}", f"data_root={DATA_ROOT}"], capture_output=True, text=True,
                              timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT)})
        assert proc.returncode == 0, proc.stderr[-3000:]
        stats = proc.stdout.split("Job stats:")[1]
        return {m[1]: int(m[2]) for m in re.finditer(r"^(\w+)\s+(\d+)$", stats, flags=re.M)}
    ci, full = dry("ci"), dry("rehearsal")
    assert ci["total"] <= CI_JOBS < full["total"], (ci["total"], full["total"])
    for paper in PAPERS:
        # MoCo-BERT's rehearsal is at the floor already (papers/moco/config/ci.yaml)
        assert 1 <= ci[f"{paper}_train"] <= full[f"{paper}_train"], paper
        assert 1 <= ci[f"{paper}_evaluate"] <= full[f"{paper}_evaluate"], paper
        assert ci[f"{paper}_report"] == full[f"{paper}_report"] == ci[f"{paper}_all"] == 1, paper
        cut, rehearsal = load_config(paper, "ci"), load_config(paper, "rehearsal")
        for key in ("precision", "zero_stage", "gpus", "max_steps", "save_every"):
            assert cut["training"].get(key) == rehearsal["training"].get(key), (paper, key)
        limit = cut["training"]["rehearse_time_limit"]  # its run is one the ci scale keeps
        assert limit["at"] == rehearsal["training"]["rehearse_time_limit"]["at"]
        assert ci[f"{paper}_train"] and limit["run"].split("/")[0] in cut["encoders"]
    for rule in ("mirror", "hictl_report_nmt", "hictl_nmt_data", "hictl_nmt_stage1", "hictl_nmt_stage2",
                 "hictl_nmt_random", "hictl_nmt_translate"):
        assert 1 <= ci[rule] <= full[rule], rule


def test_cpu_fallback_of_the_gpu_acceptance_passes(acceptance):
    found = checks(acceptance)
    assert not failed(found), failed(found)
    assert set(found) == {"trainer bf16", "trainer fp16", "MFU benchmark (scripts/bench_mfu.py)", CI_CHECK}
    for precision in ("bf16", "fp16"):
        d = found[f"trainer {precision}"]["details"]
        assert d["resume_equal"] and d["stopped_at"] == 4 and d["weights"] == ["torch.float32"]
    readme = (acceptance / "out" / "README.md").read_text()
    assert "**All checks passed.**" in readme and f"| {CI_CHECK} | passed |" in readme
    details = found[CI_CHECK]["details"]
    assert details["scale"] == "ci" and details["jobs_done"] == details["jobs"]
    assert details["cpu_s"] > 0  # its jobs' CPU time, in the report beside the wall time (docs/tests.md's budget)
    assert papers_in(acceptance, CI_CHECK) == list(PAPERS)  # this test reads the whole run: every paper ran
    for paper in PAPERS:
        assert details[paper]["training_runs"] > 0 and details[paper]["tables"] > 0


@pytest.mark.slow
def test_the_full_rehearsal_passes(full_acceptance):
    found = checks(full_acceptance)
    assert not failed(found), failed(found)
    assert set(found) == {FULL_CHECK} and found[FULL_CHECK]["details"]["scale"] == "rehearsal"
    for paper in papers_in(full_acceptance, FULL_CHECK):
        details = found[FULL_CHECK]["details"][paper]
        assert details["training_runs"] > 0 and details["tables"] > 0


# ------------------------------------------------------------------ what a rehearsal left, at either scale
def every_table_and_figure(run: Path, scale: str, paper: str) -> None:
    """The report rules wrote the same tables and figures as at mini scale (committed), none of them empty; the
    learning curve only where the paper config asks for one (mini's convergence check)."""
    out = run / "figures" / paper / scale
    mini = ROOT / "figures" / paper / "mini"
    names = lambda d: {p.relative_to(d).as_posix() for p in d.rglob("*") if p.suffix in (".csv", ".png", ".md")}
    curve = "learning_curve" in load_config(paper, "paper")
    exempt = {"README.md"} | (set() if curve else {"figure_learning_curve.png"})
    assert names(out) >= names(mini) - exempt, names(mini) - names(out)
    for table in out.rglob("*.csv"):
        assert len(list(csv.reader(table.read_text().splitlines()))) > 1, table
    for figure in out.rglob("*.png"):
        assert figure.stat().st_size > 0, figure
    manifest = (run / "papers" / paper / "all").read_text()
    assert f"{paper} artifacts, scale {scale}" in manifest


def ranks_zero_and_bf16(run: Path, scale: str, paper: str) -> None:
    """Every training run at the paper config's world size (2 gloo ranks; 1 for a run that only saves its encoder),
    ZeRO stage and bf16, and the train logs say which bf16 ran: natively, or emulated on a CPU without it."""
    cfg = load_config(paper, "paper")["training"]
    runs = list((run / "results" / scale / paper / "models").glob("*/*/seed*/training_args.json"))
    assert runs
    for path in runs:
        saved = json.loads(path.read_text())
        args = saved["training_arguments"]
        # the encoder saved as it starts runs on one rank (common.runs.placement)
        assert saved["world_size"] == (1 if saves_only(path.parent.parent.name) else 2), path
        assert args["precision"] == cfg["precision"] == "bf16"
        assert args["zero_stage"] == cfg.get("zero_stage", 0), path
    logs = [p.read_text() for p in (run / "logs" / scale / paper / "train").rglob("*.log")]
    said = [re.search(r"precision: bf16 on this CPU, (natively|emulated)", text) for text in logs]
    assert said and all(said), "a train log does not say which bf16 ran"


def time_limit_checkpoints_exits_and_resumes(run: Path, scale: str, paper: str) -> None:
    """One run per paper stops after step 4 as at a job's time limit (checkpoint, exit status 75); Snakemake's retry
    starts it again and it resumes from that checkpoint to the end."""
    cfg = load_config(paper, scale)["training"]
    limit = cfg["rehearse_time_limit"]
    init, method = limit["run"].split("/")
    log = (run / "logs" / scale / paper / "train" / init / method / "seed1.log").read_text()
    assert f"resumed from step {limit['at']}" in log
    out = run / "results" / scale / paper / "models" / init / method / "seed1"
    steps = [r["step"] for r in read_metrics(out)]
    assert steps == sorted(set(steps)) and steps[-1] == cfg["max_steps"]
    assert list((out / "tensorboard").glob("events.out.tfevents.*"))  # TensorBoard beside metrics.jsonl


def downloads_recovered_from_the_mirrors_faults(run: Path, scale: str, papers: list[str]) -> None:
    text = "\n".join(p.read_text() for p in (run / "logs").rglob("*.log"))  # every paper's corpus.log
    assert re.search(r"HTTP 503, retrying \(1/3\)", text)
    assert re.search(r"resumed at byte \d+", text)
    fired = re.findall(r"mirror faults that fired \(and were recovered from\): (.*)", text)
    assert any("'503'" in f for f in fired) and any("'cut'" in f for f in fired)
    # the rehearsed papers' pinned checkpoints were fetched once each into the shared cache, each folder complete
    names = {name for p in papers for name in hub.models_of(load_config(p, scale))}
    done = [d.parent.name for d in (run / "cache" / "models").glob("*/done.json")]
    assert sorted(done) == sorted(hub.model(name).folder for name in names)


def hictl_nmt_ran_with_the_papers_flags(run: Path, scale: str, stages: int) -> None:
    """The NMT stages reach the paper's tokens per update with ``--update-freq`` on fewer processes (1g), and each
    run's done.json records the batch it ran with (the NMT tables say it)."""
    nmt = run / "results" / scale / "hictl" / "nmt"
    done = [json.loads(p.read_text()) for p in nmt.rglob("done.json")]
    batches = [d["batch"] for d in done if "batch" in d]
    planned = load_config("hictl", scale)["nmt"]["recipe"]["tokens_per_update"]
    assert len(batches) >= stages
    for b in batches:
        assert b["update_freq"] > 1 and b["planned_tokens_per_update"] == planned
        assert b["tokens_per_update"] == b["max_tokens"] * b["update_freq"] * b["processes"] == planned
    logs = "\n".join(p.read_text() for p in run.rglob("*.log") if "nmt" in p.as_posix())
    assert "--update-freq 4" in logs
    assert list((run / "figures" / "hictl" / scale / "nmt").glob("table5_low_resource.csv"))


def second_run_has_nothing_to_do(run: Path, scale: str, papers: list[str]) -> None:
    proc = subprocess.run([sys.executable, "-m", "snakemake", "-s", str(ROOT / "Snakefile"), "-d", str(run),
                           *[f"papers/{p}/all" for p in papers], "-n", "--config", f"scale={scale}",
                           f"data_root={DATA_ROOT}"], capture_output=True, text=True, timeout=600)
    assert "Nothing to be done" in proc.stdout + proc.stderr, proc.stdout[-3000:]


# ------------------------------------------------------------- the ci rehearsal: the default suite reads it
@pytest.mark.parametrize("paper", PAPERS)
def test_every_table_and_figure_of_the_paper(ci, paper):
    every_table_and_figure(ci, "ci", paper)


@pytest.mark.parametrize("paper", PAPERS)
def test_ranks_zero_and_bf16_as_the_paper_config_says(ci, paper):
    ranks_zero_and_bf16(ci, "ci", paper)


@pytest.mark.parametrize("paper", PAPERS)
def test_the_rehearsed_time_limit_checkpoints_exits_and_resumes(ci, paper):
    time_limit_checkpoints_exits_and_resumes(ci, "ci", paper)


def test_downloads_recovered_from_the_mirrors_faults(acceptance, ci):
    downloads_recovered_from_the_mirrors_faults(ci, "ci", papers_in(acceptance, CI_CHECK))


@pytest.mark.parametrize("paper", ["hictl"])
def test_hictl_nmt_ran_with_the_papers_flags(ci, paper):
    hictl_nmt_ran_with_the_papers_flags(ci, "ci", stages=3)


def test_a_second_run_has_nothing_to_do(acceptance, ci):
    second_run_has_nothing_to_do(ci, "ci", papers_in(acceptance, CI_CHECK))


# ---------------------------------------------------- the full rehearsal: every run of the paper configs (slow)
@pytest.mark.slow
@pytest.mark.parametrize("paper", PAPERS)
def test_every_table_and_figure_of_the_paper_at_full_rehearsal(rehearsal, paper):
    every_table_and_figure(rehearsal, "rehearsal", paper)


@pytest.mark.slow
@pytest.mark.parametrize("paper", PAPERS)
def test_ranks_zero_and_bf16_as_the_paper_config_says_at_full_rehearsal(rehearsal, paper):
    ranks_zero_and_bf16(rehearsal, "rehearsal", paper)


@pytest.mark.slow
@pytest.mark.parametrize("paper", PAPERS)
def test_the_rehearsed_time_limit_checkpoints_exits_and_resumes_at_full_rehearsal(rehearsal, paper):
    time_limit_checkpoints_exits_and_resumes(rehearsal, "rehearsal", paper)


@pytest.mark.slow
def test_downloads_recovered_from_the_mirrors_faults_at_full_rehearsal(full_acceptance, rehearsal):
    downloads_recovered_from_the_mirrors_faults(rehearsal, "rehearsal", papers_in(full_acceptance, FULL_CHECK))


@pytest.mark.slow
@pytest.mark.parametrize("paper", ["hictl"])
def test_hictl_nmt_ran_with_the_papers_flags_at_full_rehearsal(rehearsal, paper):
    hictl_nmt_ran_with_the_papers_flags(rehearsal, "rehearsal", stages=3)


@pytest.mark.slow
def test_a_second_run_has_nothing_to_do_at_full_rehearsal(full_acceptance, rehearsal):
    second_run_has_nothing_to_do(rehearsal, "rehearsal", papers_in(full_acceptance, FULL_CHECK))
