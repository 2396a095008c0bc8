"""The code style CI enforces: ruff (pyflakes, pycodestyle with 120-character lines, import order, bugbear,
pyupgrade; configured in pyproject.toml) finds nothing in the repository."""
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT


def test_ruff_is_clean():
    ruff = Path(sys.executable).parent / "ruff"
    proc = subprocess.run([str(ruff), "check", "--no-cache", "."], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
