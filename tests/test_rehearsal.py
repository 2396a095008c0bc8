"""The rehearsal of the paper scale (issue 31, part 2), through the GPU acceptance script's CPU fallback
(``scripts/gpu_acceptance.sh --device cpu``, part 3), which runs

    snakemake papers/dap/all papers/moco/all papers/vmsst/all papers/hictl/all --config scale=rehearsal --cores 3

once for the session: every paper's paper config with tiny widths and corpora, downloads from the local mirror
(one 503 and cut connections on the way), the pinned checkpoints' code paths (tiny random ones in the Hub's
formats), 2 gloo ranks through our launcher with ZeRO as configured and bf16, a time limit rehearsed in the
middle of one run per paper (checkpoint, exit 75, Snakemake's retry resumes), HICTL's fairseq NMT with the paper's
flags, and every table and figure rule. Then the tests read what it left.

The default suite runs the acceptance's trainer and MFU checks; the tests that read the rehearsal are slow tests
(``-m slow``). On the 2-core AMD EPYC with AVX2 only, a fresh-clone CI with the four papers' rehearsal took 64-68
minutes, and with DAP's alone 39 min 33 s, at the edge of CI's 40 (docs/tests.md). The run rehearses exactly the
papers whose tests were selected (``rehearsed``)."""
import csv
import json
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
pytestmark = pytest.mark.skipif(not (DATA_ROOT / "INDEX.md").exists(), reason="shared data not found")


def rehearsed(tests: list[pytest.Item]) -> list[str]:
    """The papers the selected tests read from the rehearsal: their ``paper`` parameters, and ``WHOLE_RUN`` for a
    test without one."""
    params = [getattr(getattr(t, "callspec", None), "params", {}) for t in tests if "rehearsal" in t.fixturenames]
    named = {p.get("paper", WHOLE_RUN) for p in params}
    return [p for p in PAPERS if p in named]


@background.declare("acceptance", timeout=4200, requires=DATA_ROOT / "INDEX.md", env={"PYTHON": sys.executable})
def acceptance_command(root: Path, tests: list[pytest.Item]) -> list[str]:
    """The CPU fallback once per session, started in the background with the smoke run when the session starts
    (tests/background.py): the two runs fill each other's idle gaps between jobs."""
    papers = rehearsed(tests)
    return ["bash", str(ROOT / "scripts" / "gpu_acceptance.sh"), "--device", "cpu", "--cores", "3",
            *(["--papers", *papers] if papers else ["--checks", "trainer", "mfu"]),
            "--data-root", str(DATA_ROOT), "--workdir", str(root / "work"), "--out", str(root / "out")]


@pytest.fixture(scope="session")
def acceptance() -> Path:
    run = background.wait("acceptance")
    if not (run.workdir / "out" / "acceptance.json").exists():
        raise AssertionError(f"gpu_acceptance.sh wrote no report:\n{run.tail()}")
    return run.workdir


@pytest.fixture(scope="session")
def rehearsal(acceptance) -> Path:
    return acceptance / "work" / "rehearsal"


def checks(acceptance: Path) -> dict[str, dict]:
    return {c["name"]: c for c in json.loads((acceptance / "out" / "acceptance.json").read_text())["checks"]}


def papers_in(acceptance: Path) -> list[str]:
    """The papers this session's run rehearsed (the rehearsal check reports figures for each)."""
    rehearsal = checks(acceptance).get("rehearsal, 2 gloo ranks", {"details": {}})
    return [p for p in PAPERS if p in rehearsal["details"]]


def test_the_run_rehearses_the_papers_the_selected_tests_read():
    def test(paper=None, reads=True):
        fixtures = ["acceptance", "rehearsal"] if reads else ["acceptance"]
        return SimpleNamespace(fixturenames=fixtures, **({"callspec": SimpleNamespace(params={"paper": paper})}
                                                         if paper else {}))
    assert rehearsed([test(reads=False)]) == []  # the default suite: the trainer and MFU checks only
    assert rehearsed([test("hictl"), test("moco"), test(reads=False)]) == ["moco", "hictl"]
    assert rehearsed([test("moco"), test()]) == ["dap", "moco"]  # a whole-run check reads DAP's downloads


def test_cpu_fallback_of_the_gpu_acceptance_passes(acceptance):
    found = checks(acceptance)
    failed = {name: c["log"][-2000:] for name, c in found.items() if not c["passed"]}
    assert not failed, failed
    papers = papers_in(acceptance)
    rehearsed_here = ["rehearsal, 2 gloo ranks"] if papers else []
    assert set(found) == {"trainer bf16", "trainer fp16", "MFU benchmark (scripts/bench_mfu.py)", *rehearsed_here}
    for precision in ("bf16", "fp16"):
        d = found[f"trainer {precision}"]["details"]
        assert d["resume_equal"] and d["stopped_at"] == 4 and d["weights"] == ["torch.float32"]
    readme = (acceptance / "out" / "README.md").read_text()
    assert "**All checks passed.**" in readme
    assert ("| rehearsal, 2 gloo ranks | passed |" in readme) == bool(papers)
    for paper in papers:
        details = found["rehearsal, 2 gloo ranks"]["details"][paper]
        assert details["training_runs"] > 0 and details["tables"] > 0


@pytest.mark.slow
@pytest.mark.parametrize("paper", PAPERS)
def test_every_table_and_figure_of_the_paper(rehearsal, paper):
    """The report rules wrote the same tables and figures as at mini scale (committed), none of them empty; the
    learning curve only where the paper config asks for one (mini's convergence check, issue 35)."""
    out = rehearsal / "figures" / paper / "rehearsal"
    mini = ROOT / "figures" / paper / "mini"
    names = lambda d: {p.relative_to(d).as_posix() for p in d.rglob("*") if p.suffix in (".csv", ".png", ".md")}
    curve = "learning_curve" in load_config(paper, "paper")
    exempt = {"README.md"} | (set() if curve else {"figure_learning_curve.png"})
    assert names(out) >= names(mini) - exempt, names(mini) - names(out)
    for table in out.rglob("*.csv"):
        assert len(list(csv.reader(table.read_text().splitlines()))) > 1, table
    manifest = (rehearsal / "papers" / paper / "all").read_text()
    assert f"{paper} artifacts, scale rehearsal" in manifest


@pytest.mark.slow
@pytest.mark.parametrize("paper", PAPERS)
def test_ranks_zero_and_bf16_as_the_paper_config_says(rehearsal, paper):
    cfg = load_config(paper, "paper")["training"]
    runs = list((rehearsal / "results" / "rehearsal" / paper / "models").glob("*/*/seed*/training_args.json"))
    assert runs
    for path in runs:
        saved = json.loads(path.read_text())
        args = saved["training_arguments"]
        # the encoder saved as it starts runs on one rank (common.runs.placement)
        assert saved["world_size"] == (1 if saves_only(path.parent.parent.name) else 2), path
        assert args["precision"] == cfg["precision"] == "bf16"
        assert args["zero_stage"] == cfg.get("zero_stage", 0), path


@pytest.mark.slow
@pytest.mark.parametrize("paper", PAPERS)
def test_the_rehearsed_time_limit_checkpoints_exits_and_resumes(rehearsal, paper):
    """One run per paper stops after step 4 as at a job's time limit (checkpoint, exit status 75); Snakemake's retry
    starts it again and it resumes from that checkpoint to the end."""
    limit = load_config(paper, "rehearsal")["training"]["rehearse_time_limit"]
    init, method = limit["run"].split("/")
    log = (rehearsal / "logs" / "rehearsal" / paper / "train" / init / method / "seed1.log").read_text()
    assert f"resumed from step {limit['at']}" in log
    run = rehearsal / "results" / "rehearsal" / paper / "models" / init / method / "seed1"
    steps = [r["step"] for r in read_metrics(run)]
    assert steps == sorted(set(steps)) and steps[-1] == load_config(paper, "rehearsal")["training"]["max_steps"]
    assert list((run / "tensorboard").glob("events.out.tfevents.*"))  # TensorBoard beside metrics.jsonl


@pytest.mark.slow
def test_downloads_recovered_from_the_mirrors_faults(acceptance, rehearsal):
    logs = {p.name: p.read_text() for p in (rehearsal / "logs").rglob("*.log")}
    text = "\n".join(logs.values())
    assert re.search(r"HTTP 503, retrying \(1/3\)", text)
    assert re.search(r"resumed at byte \d+", text)
    fired = re.findall(r"mirror faults that fired \(and were recovered from\): (.*)", text)
    assert any("'503'" in f for f in fired) and any("'cut'" in f for f in fired)
    # the rehearsed papers' pinned checkpoints were fetched once each into the shared cache, each folder complete
    names = {name for p in papers_in(acceptance) for name in hub.models_of(load_config(p, "rehearsal"))}
    done = [d.parent.name for d in (rehearsal / "cache" / "models").glob("*/done.json")]
    assert sorted(done) == sorted(hub.model(name).folder for name in names)


@pytest.mark.slow
@pytest.mark.parametrize("paper", ["hictl"])
def test_hictl_nmt_ran_with_the_papers_flags(rehearsal, paper):
    """The NMT stages reach the paper's tokens per update with ``--update-freq`` on fewer processes (1g), and each
    run's done.json records the batch it ran with (the NMT tables say it)."""
    nmt = rehearsal / "results" / "rehearsal" / "hictl" / "nmt"
    done = [json.loads(p.read_text()) for p in nmt.rglob("done.json")]
    batches = [d["batch"] for d in done if "batch" in d]
    planned = load_config("hictl", "rehearsal")["nmt"]["recipe"]["tokens_per_update"]
    assert len(batches) >= 3
    for b in batches:
        assert b["update_freq"] > 1 and b["planned_tokens_per_update"] == planned
        assert b["tokens_per_update"] == b["max_tokens"] * b["update_freq"] * b["processes"] == planned
    logs = "\n".join(p.read_text() for p in rehearsal.rglob("*.log") if "nmt" in p.as_posix())
    assert "--update-freq 4" in logs


@pytest.mark.slow
def test_a_second_run_has_nothing_to_do(acceptance, rehearsal):
    proc = subprocess.run([sys.executable, "-m", "snakemake", "-s", str(ROOT / "Snakefile"), "-d", str(rehearsal),
                           *[f"papers/{p}/all" for p in papers_in(acceptance)], "-n", "--config", "scale=rehearsal",
                           f"data_root={DATA_ROOT}"], capture_output=True, text=True, timeout=600)
    assert "Nothing to be done" in proc.stdout + proc.stderr, proc.stdout[-3000:]
