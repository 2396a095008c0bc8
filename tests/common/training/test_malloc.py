"""common/training/malloc.py: glibc keeps large freed blocks in the heap once the thresholds are raised."""
from __future__ import annotations

import ctypes
import platform
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
GLIBC = platform.libc_ver()[0] == "glibc" and hasattr(ctypes.CDLL(None), "mallinfo2")  # glibc 2.33 and later
pytestmark = pytest.mark.skipif(not GLIBC, reason="glibc's malloc with mallinfo2")

# a 600 MB block, then freed: printed as "MB in its own mapping, MB of heap" after each
PROBE = """
import ctypes, sys
from common.training.malloc import keep_freed_memory
class Info(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in
                "arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks keepcost".split()]
libc = ctypes.CDLL(None)
libc.mallinfo2.restype, libc.malloc.restype, libc.free.argtypes = Info, ctypes.c_void_p, [ctypes.c_void_p]
print(keep_freed_memory(on_cpu=sys.argv[1] == "cpu"))
block = libc.malloc(ctypes.c_size_t(600 << 20))
info = libc.mallinfo2()
print(info.hblkhd >> 20, info.arena >> 20)
libc.free(block)
info = libc.mallinfo2()
print(info.hblkhd >> 20, info.arena >> 20)
"""


def probe(where: str, env: dict[str, str]) -> tuple[str, list[int], list[int]]:
    out = subprocess.run([sys.executable, "-c", PROBE, where], capture_output=True, text=True, check=True, timeout=60,
                         cwd=ROOT, env={"PYTHONPATH": str(ROOT), **env}).stdout.split("\n")
    return out[0], [int(x) for x in out[1].split()], [int(x) for x in out[2].split()]


@pytest.mark.parametrize("where", ["cpu", "gpu"])
def test_a_large_freed_block_stays_in_the_heap_once_freed_memory_is_kept(where):
    kept, allocated, freed = probe(where, {})  # no MALLOC_* variables
    if where == "cpu":  # from the heap, and still there once freed (the trim threshold)
        assert kept == "True" and allocated[0] == 0 and allocated[1] >= 600 and freed[1] >= 600
    else:  # glibc's default: its own mapping, unmapped when freed
        assert kept == "False" and allocated[0] >= 600 and freed[0] == 0
