"""Figures as PNG and PDF (matplotlib, Agg backend, no timestamps so reruns are byte-stable)."""
from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

__all__ = ["panels", "plt", "save"]  # plt: pyplot with the Agg backend, for the reports that draw their own figures


def save(fig: Figure, out_base: str | Path) -> list[Path]:
    out_base = Path(out_base)
    out_base.parent.mkdir(parents=True, exist_ok=True)
    paths = []
    for ext, meta in (("png", {"Software": None}), ("pdf", {"CreationDate": None, "Producer": None})):
        path = out_base.with_suffix(f".{ext}")
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=f".{ext}")
        os.close(fd)
        fig.savefig(tmp, format=ext, dpi=150, bbox_inches="tight", metadata=meta)
        os.replace(tmp, path)
        paths.append(path)
    plt.close(fig)
    return paths


def panels(xs: Sequence[Any], series: Mapping[str, Mapping[str, Sequence[Any]]],
           paper_points: Mapping[str, tuple[float, float]] | None, xlabel: str, title: str,
           out_base: str | Path) -> list[Path]:
    """One panel per metric: our values over ``xs`` (one line per series), the paper's
    reported point(s) as red stars."""
    metrics = list(next(iter(series.values())))
    fig, axes = plt.subplots(1, len(metrics), figsize=(4 * len(metrics), 3.2), squeeze=False)
    for ax, metric in zip(axes[0], metrics):
        for label, values in series.items():
            ax.plot(xs, values[metric], marker="o", label=label)
        if paper_points and metric in paper_points:
            px, py = paper_points[metric]
            ax.plot([px], [py], marker="*", color="red", markersize=12, linestyle="none", label="paper (reported)")
        ax.set_title(metric)
        ax.set_xlabel(xlabel)
        ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=7)
    fig.suptitle(title, fontsize=9)
    return save(fig, out_base)
