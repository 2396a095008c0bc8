"""Freed memory kept by a CPU job: no fresh pages from the kernel for every large tensor of every step (glibc).

glibc's malloc serves a request above its mmap threshold (128 kB, raised as blocks are freed, at most 32 MB) with a
mapping of its own and unmaps it when the block is freed; it also hands the free top of its heap back to the kernel
past a trim threshold. A training or decoding step on the CPU allocates tensors of tens to hundreds of MB (a
vocabulary's logits: tokens x V x 4 bytes, and their gradients) and frees them before the next step. So each step
maps fresh pages, and the kernel zero-fills every 4 kB page at its first touch: system time that grows with the
step's largest tensors. :func:`keep_freed_memory` raises both thresholds to their largest value (``mallopt``), so
freed blocks stay in the heap and the next step reuses them.

Measured on a 2-core AVX2 AMD EPYC, one thread a job, each pair of runs side by side (docs/training.md):

* fairseq stage 1 of HICTL's mini NMT (20 updates and a validation): 393.5 s, 88.5 s of it system time, 21.7 M
  minor page faults; with the thresholds raised 312.4 s (1.26x), 11.2 s, 1.3 M; peak RSS 3.40 -> 4.82 GB. The whole
  job (100 updates, two validations): 1,571.9 -> 1,289.4 s (1.22x), system time 327.0 -> 14.2 s, 81.2 M -> 1.6 M
  faults, peak RSS 3.78 -> 5.97 GB, the same validation losses;
* DAP's mini TR training, steps 25-50: 5.73 -> 5.43 s a step (1.055x); system time 27.9 -> 4.3 s over the run; the
  same losses; peak RSS 1.95 -> 1.97 GB;
* VMSST's mini training (2 layers), steps 20-60: 4.15 -> 3.98 s a step (1.04x); system time 13.1 -> 2.8 s; the same
  losses; peak RSS 1.32 -> 1.33 GB.

Not changed: a process whose environment sets either variable or malloc's ``GLIBC_TUNABLES`` (glibc has read them;
the user's choice wins) or preloads a library (perhaps another malloc), a C library other than glibc, and a job that
computes on a GPU (its large tensors live in CUDA's caching allocator).
The cost is memory: the heap keeps its largest extent, so a job's resident memory stays at its peak, and the peak
grows where freed blocks of changing sizes fragment. fairseq's trainer, a child process, got raised thresholds through
its environment (MALLOC_MMAP_THRESHOLD_ at 2 GB, the trim threshold out of reach) until 2026-12-06 and now keeps
glibc's defaults: on the 2-core Intel Xeon with AMX its heap grew without bound under bf16 (presumably as each
batch's logits take another size; not traced). HICTL's mini NMT stage 1 peaked at 15.5-16.5 GB (5.97 GB on the EPYC
above); beside one, the random-init baseline was killed by the kernel on a 24 GB machine. That baseline, run side
by side to 60 updates: 15.4 GB at about 600 words/s with the thresholds raised, 8.2 GB and still growing at about 580
with a 256 MB mmap threshold, 3.5-4.1 GB at about 390 with glibc's defaults. A job that fails costs more than a
slower one, so the trainer runs with the defaults: about 1.5x slower on that Xeon, 1.22x on the EPYC. The NMT
recipe's own process (its translations decode there) still keeps freed memory: 6.0 GB at its peak on the Xeon.
"""
from __future__ import annotations

import ctypes
import logging
import os
import platform
from collections.abc import Mapping

log = logging.getLogger(__name__)

M_TRIM_THRESHOLD = -1  # glibc's malloc.h
M_MMAP_THRESHOLD = -3
THRESHOLD = 2**31 - 1  # mallopt takes an int: the largest it takes (glibc 2.35 and later; older ones stop at 32 MB)
VARIABLES = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_")  # glibc reads them at start-up: the user's choice


def _why_not(on_cpu: bool, environ: Mapping[str, str]) -> str | None:
    if not on_cpu:
        return "the job computes on a GPU"
    if set_here := [v for v in VARIABLES if v in environ]:
        return f"the environment sets {', '.join(set_here)}"
    if "glibc.malloc." in environ.get("GLIBC_TUNABLES", ""):
        return "GLIBC_TUNABLES sets malloc's tunables"
    if environ.get("LD_PRELOAD"):
        return "LD_PRELOAD may replace malloc"
    if platform.libc_ver()[0] != "glibc":
        return "the C library is not glibc"
    return None


def keep_freed_memory(on_cpu: bool) -> bool:
    """Raise this process's mmap and trim thresholds (before its first large allocation); whether both took."""
    why_not = _why_not(on_cpu, os.environ)
    if why_not is not None:
        log.info("malloc thresholds unchanged: %s", why_not)
        return False
    mallopt = ctypes.CDLL(None).mallopt  # the C library this process runs on
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    took = {name: mallopt(param, THRESHOLD) == 1 for name, param in (("mmap", M_MMAP_THRESHOLD),
                                                                     ("trim", M_TRIM_THRESHOLD))}
    log.info("malloc thresholds at %d bytes: %s", THRESHOLD,
             ", ".join(f"{name} {'set' if ok else 'refused'}" for name, ok in took.items()))
    return all(took.values())
