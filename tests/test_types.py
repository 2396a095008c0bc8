"""The type checker CI runs: mypy (configured in pyproject.toml: strict on common/, mypy's defaults on papers/ and
bench/; torch, transformers and the other heavy packages not followed) finds nothing."""
import subprocess
import sys

from tests.conftest import ROOT


def test_mypy_is_clean(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / "cache")], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-2000:]
    assert "Success: no issues found" in proc.stdout
