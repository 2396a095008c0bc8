"""tests/background.py: a declared run starts only when a selected test needs its fixture, its command is built from
those tests, it reports its exit status and output, and it is stopped with its children at its deadline."""
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests import background


@pytest.fixture
def runs(monkeypatch):
    declared: dict = {}  # this test's runs only: the session's own runs go on in the background
    monkeypatch.setattr(background, "RUNS", declared)
    yield declared
    for run in declared.values():
        run.stop()


def test_only_the_runs_a_selected_test_needs_start(runs, tmp_path_factory):
    background.declare("needed", timeout=60)(
        lambda d, tests: [sys.executable, "-c", f"print('in', {str(d)!r}, {[t.name for t in tests]}); exit(3)"])
    background.declare("unused", timeout=60)(lambda d, tests: [sys.executable, "-c", "pass"])
    items = [SimpleNamespace(name="a", fixturenames=["tmp_path", "needed"]), SimpleNamespace(name="b", fixturenames=[])]
    started = background.start_needed(items, tmp_path_factory)
    assert [r.fixture for r in started] == ["needed"] and runs["unused"].proc is None
    run = background.wait("needed")  # its command was built from the tests that need it
    assert run.returncode == 3 and run.tail().strip() == f"in {run.workdir} ['a']"
    assert 0 <= run.seconds() < 60 and runs["unused"].seconds() is None  # CI's log prints the durations
    with pytest.raises(ValueError, match="declared twice"):
        background.declare("needed", timeout=1)(lambda d, tests: [])


def test_a_run_past_its_deadline_is_stopped_with_its_children(runs, tmp_path_factory):
    child = "import subprocess, sys, time; " \
            "c = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); " \
            "print('started', flush=True); open(sys.argv[1], 'w').write(str(c.pid)); time.sleep(60)"
    background.declare("slow", timeout=2)(lambda d, tests: [sys.executable, "-c", child, str(d / "child.pid")])
    background.start_needed([SimpleNamespace(fixturenames=["slow"])], tmp_path_factory)
    t0 = time.time()
    with pytest.raises(AssertionError, match="ran past 2 s and was stopped:\nstarted"):
        background.wait("slow")
    assert time.time() - t0 < 30 and runs["slow"].proc.poll() is not None
    grandchild = int((runs["slow"].workdir / "child.pid").read_text())
    status = Path(f"/proc/{grandchild}/status")
    time.sleep(0.5)
    # gone, or a zombie of the killed run that no reaper has collected yet: not running either way
    assert not status.exists() or "State:\tZ" in status.read_text()


def test_a_run_whose_data_is_missing_skips_its_tests(runs, tmp_path_factory, tmp_path):
    background.declare("no_data", timeout=60, requires=tmp_path / "INDEX.md")(
        lambda d, tests: [sys.executable, "-c", "pass"])
    background.start_needed([SimpleNamespace(fixturenames=["no_data"])], tmp_path_factory)
    with pytest.raises(pytest.skip.Exception, match="not found"):
        background.wait("no_data")
