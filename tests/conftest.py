import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DATA_ROOT = Path(os.environ.get("XLING_DATA_ROOT", ROOT.parent / "shared" / "data"))

os.environ.setdefault("DS_ACCELERATOR", "cpu")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


@pytest.fixture(scope="session")
def data_root() -> Path:
    if not (DATA_ROOT / "INDEX.md").exists():
        pytest.skip(f"shared data not found at {DATA_ROOT} (set XLING_DATA_ROOT)")
    return DATA_ROOT
