import os
from pathlib import Path

import pytest

from tests import background

ROOT = Path(__file__).resolve().parent.parent
DATA_ROOT = Path(os.environ.get("XLING_DATA_ROOT", ROOT.parent / "shared" / "data"))

os.environ.setdefault("DS_ACCELERATOR", "cpu")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


@pytest.fixture(scope="session")
def data_root() -> Path:
    if not (DATA_ROOT / "INDEX.md").exists():
        pytest.skip(f"shared data not found at {DATA_ROOT} (set XLING_DATA_ROOT)")
    return DATA_ROOT


@pytest.fixture(scope="session", autouse=True)
def _background_runs(request, tmp_path_factory):
    """The long end-to-end runs the selected tests need, started before the first test (tests/background.py)."""
    runs = background.start_needed(request.session.items, tmp_path_factory)
    yield
    for run in runs:  # a run no test waited for to the end (a failed or interrupted session)
        run.stop()


def pytest_terminal_summary(terminalreporter):
    """Each background run's duration, for CI's log (.ci/run prints these lines again with its own times)."""
    for run in background.RUNS.values():
        if (seconds := run.seconds()) is not None:
            terminalreporter.write_line(f"background run {run.fixture}: {seconds:.0f} s, exit status {run.returncode}")
