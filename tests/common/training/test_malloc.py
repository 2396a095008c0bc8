"""common/training/malloc.py: glibc keeps large freed blocks in the heap once the thresholds are raised."""
from __future__ import annotations

import platform
import subprocess
import sys
from pathlib import Path

import pytest

from common.training.malloc import THRESHOLD, VARIABLES, child_environment

ROOT = Path(__file__).resolve().parents[3]
GLIBC = platform.libc_ver()[0] == "glibc"

# a 600 MB block: served by its own mapping (mallinfo2's hblkhd) or from the heap (arena); printed as "mapped heap"
PROBE = """
import ctypes, sys
from common.training.malloc import keep_freed_memory
class Info(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in
                "arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks keepcost".split()]
libc = ctypes.CDLL(None)
libc.mallinfo2.restype, libc.malloc.restype = Info, ctypes.c_void_p
print(keep_freed_memory(on_cpu=sys.argv[1] == "cpu"))
block = libc.malloc(ctypes.c_size_t(600 << 20))
info = libc.mallinfo2()
print(info.hblkhd >> 20, info.arena >> 20)
"""


@pytest.mark.skipif(not GLIBC, reason="glibc's malloc")
@pytest.mark.parametrize("where, kept", [("cpu", True), ("gpu", False)])
def test_a_large_block_comes_from_the_heap_once_freed_memory_is_kept(where, kept):
    out = subprocess.run([sys.executable, "-c", PROBE, where], capture_output=True, text=True, check=True, timeout=60,
                         cwd=ROOT, env={"PYTHONPATH": str(ROOT)}).stdout.split("\n")  # no MALLOC_* variables
    assert out[0] == str(kept)
    mapped, heap = map(int, out[1].split())
    assert (mapped, heap >= 600) == ((0, True) if kept else (600, False))


@pytest.mark.skipif(not GLIBC, reason="glibc's malloc")
def test_a_child_gets_both_variables_on_the_cpu_only_and_never_over_the_users():
    assert child_environment({"A": "1"}, on_cpu=True) == {"A": "1", **dict.fromkeys(VARIABLES, str(THRESHOLD))}
    assert child_environment({"A": "1"}, on_cpu=False) == {"A": "1"}
    mine = {"MALLOC_TRIM_THRESHOLD_": "0"}
    assert child_environment(mine, on_cpu=True) == mine
