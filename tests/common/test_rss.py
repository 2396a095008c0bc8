"""A process's peak resident memory (common/rss.py), with and without /proc."""
import resource
import sys

from common import rss


def test_without_proc_the_peak_is_the_rusage_one_in_bytes(monkeypatch):
    with_proc = rss.peak_rss_bytes()

    def no_proc(path, *args, **kwargs):
        raise FileNotFoundError(path)

    monkeypatch.setattr(rss, "open", no_proc, raising=False)
    unit = 1 if sys.platform == "darwin" else 1024
    assert rss.peak_rss_bytes() == resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * unit >= with_proc // 2
