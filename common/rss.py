"""A process's peak resident memory on Linux (``VmHWM``), without importing anything heavy, so that a fresh
interpreter can report its own peak: ``ru_maxrss`` cannot, as Linux starts a forked child's at its parent's peak."""
from __future__ import annotations

import resource
import sys


def peak_rss_bytes() -> int:
    """This process's peak resident memory since start or :func:`reset_peak_rss` (``VmHWM``), in bytes. Without
    ``/proc`` (macOS), the rusage peak, which a child may inherit from its parent (bytes there, KiB on Linux)."""
    try:
        with open("/proc/self/status") as fh:
            return next(int(line.split()[1]) * 1024 for line in fh if line.startswith("VmHWM:"))
    except FileNotFoundError:
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak if sys.platform == "darwin" else peak * 1024


def reset_peak_rss() -> int:
    """Reset the peak to the current resident memory and return it, in bytes (``ru_maxrss`` survives ``exec`` from
    a large parent, so a benchmark's child cannot use it; ``clear_refs`` 5 resets ``VmHWM``, Linux 4.0+)."""
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")
    return peak_rss_bytes()
