"""Bitext mining: our exact search vs faiss.

BUCC-style mining (k-NN both directions, ratio margin, best match with one-to-one filtering:
:func:`common.eval.bucc.mine`) of N x N random unit vectors, for every N of ``--sizes``, with each
k-NN backend of :mod:`common.eval.knn_index`: ours (``exact``), faiss ``IndexFlatIP`` (``faiss-flat``,
the same result) and an approximate faiss index (``--approx``). Each (backend, N) runs in a fresh
process: wall time of the whole ``mine`` call and its peak memory above the process's memory with the
data loaded (``VmHWM`` after - RSS before). Time against N is plotted log-log with the fitted exponent. The
exact-vs-faiss-flat row is the median of ``--repeats`` runs of each in A/B order, with every run in its note: an
earlier single run had faiss flat 3-7x slower than later ones on the same machine and version (8.7 s against 2.0 s
at N = 10,000), which one run cannot tell from the method.

Random vectors are the hardest case for an approximate index (no cluster structure), so its *quality*
is measured on real embeddings instead: with ``--bucc-dir`` (a BUCC-style set, :mod:`common.data.bucc_mini`),
all-MiniLM-L6-v2 embeds it and the test F1 (threshold tuned on the training split, as every BUCC evaluation
here does) is computed with the exact search and with the approximate index.

    python -m bench.mining --out figures/bench/<machine>/smoke --sizes 5000 10000 --bucc-dir results/bench/bucc
"""
from __future__ import annotations

import argparse
import logging
import math
import multiprocessing as mp
import time
from pathlib import Path

import numpy as np
import psutil
import torch

from bench.results import Record, Row, setup_threads
from common.rss import peak_rss_bytes

log = logging.getLogger(__name__)


def _run(backend: str, n: int, dim: int, k: int, threads: int) -> tuple[float, float, int]:
    """In a fresh process: (seconds, peak MiB above the loaded data, number of candidates)."""
    from common.eval.bucc import mine

    torch.set_num_threads(threads)
    g = torch.Generator().manual_seed(0)
    x, y = torch.randn(n, dim, generator=g), torch.randn(n, dim, generator=g)
    x.div_(x.norm(dim=1, keepdim=True))
    y.div_(y.norm(dim=1, keepdim=True))
    before = psutil.Process().memory_info().rss
    t0 = time.perf_counter()
    cands = mine(x, y, k=k, scoring="ratio", knn_search=backend)
    seconds = time.perf_counter() - t0
    peak = peak_rss_bytes()  # VmHWM: ru_maxrss would start at the parent's peak (common/rss.py)
    return seconds, max(0.0, (peak - before) / 2**20), len(cands)


def in_fresh_process(backend: str, n: int, dim: int, k: int, threads: int) -> tuple[float, float, int]:
    with mp.get_context("spawn").Pool(1) as pool:
        return pool.apply(_run, (backend, n, dim, k, threads))


def faiss_version() -> str:
    import faiss

    return faiss.__version__


def interleaved(series: dict, n: int, a) -> dict[str, list[float]]:
    """Seconds of exact and faiss flat at N = ``n``: the sweep's run of each, then ``repeats - 1`` more pairs in
    A/B order, each in a fresh process, so a slow stretch of the machine falls on both."""
    out = {b: [next(pt["seconds"] for pt in series[b] if pt["n"] == n)] for b in ("exact", "faiss-flat")}
    for _ in range(a.repeats - 1):
        for b in out:
            out[b].append(in_fresh_process(b, n, a.dim, a.k, a.threads)[0])
            log.info("N=%d %s (repeat): %.2f s", n, b, out[b][-1])
    return out


def bucc_f1(bucc_dir: Path, backends: list[str], batch: int = 128) -> dict[str, dict[str, float]]:
    """Test F1 per language pair (and their mean) with each backend, MiniLM embeddings computed once."""
    from bench.workloads import minilm_dir
    from common.data.loaders import read_bucc
    from common.eval.bucc import evaluate_pair
    from common.models.encoder import SentenceEncoder, encode_sentences
    from common.models.tokenizer import load_tokenizer

    encoder, tok = SentenceEncoder.load(minilm_dir()), load_tokenizer(minilm_dir())
    cache: dict[str, torch.Tensor] = {}

    def embed(texts: list[str]) -> torch.Tensor:
        missing = [t for t in dict.fromkeys(texts) if t not in cache]
        if missing:
            for t, v in zip(missing, encode_sentences(encoder, tok, missing, batch_size=batch, max_length=128)):
                cache[t] = v
        return torch.stack([cache[t] for t in texts])

    pairs = sorted(p.name.split(".")[0] for p in bucc_dir.glob("*.test.gold"))
    out: dict[str, dict[str, float]] = {b: {} for b in backends}
    for pair in pairs:
        tune, test = read_bucc(bucc_dir, pair, "training"), read_bucc(bucc_dir, pair, "test")
        for b in backends:
            out[b][pair] = evaluate_pair(tune, test, embed, k=4, scoring="ratio", knn_search=b)["test"]["f1"]
    for b in backends:
        out[b]["mean"] = float(np.mean([out[b][p] for p in pairs]))
    return out


def size_at_ratio(t_approx: float, t_exact: float, e_approx: float, e_exact: float, n: int, ratio: float) -> float:
    """The N per side at which the approximate index takes ``ratio`` x the exact search's time, extrapolating
    each time from N = ``n`` with its fitted exponent: t_a (N/n)^e_a = ratio t_e (N/n)^e_e."""
    if e_exact <= e_approx:
        return math.inf
    return n * (t_approx / (ratio * t_exact)) ** (1 / (e_exact - e_approx))


def limit_note(t_approx: float, t_exact: float, e_approx: float, e_exact: float, n: int) -> str:
    """What limits the approximate index's goal: the exact search is one BLAS pass (time ~ N^e_exact), the
    index's build and search grow more slowly (N^e_approx) but start higher; where the two lines cross."""
    even = size_at_ratio(t_approx, t_exact, e_approx, e_exact, n, 1.0)
    tenth = size_at_ratio(t_approx, t_exact, e_approx, e_exact, n, 0.1)
    return (f"limit: exact search is one matrix product per block (time ~ N^{e_exact:.2f}), the index's build and "
            f"search grow as N^{e_approx:.2f} but cost more at this size; extrapolated, it breaks even at "
            f"N = {even:,.0f} and is 10x faster at N = {tenth:,.0f} per side (random unit vectors, no cluster "
            "structure: the hard case for approximate search)")


def plot(series: dict, path: Path) -> dict[str, float | None]:
    """Time against N, log-log, one line per backend; returns each backend's fitted exponent (None for a backend
    measured at one N only: no slope, and the results JSON holds no NaN)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 3.6))
    slopes = {}
    for backend, pts in series.items():
        ns = np.array([p["n"] for p in pts], dtype=float)
        ts = np.array([p["seconds"] for p in pts])
        slope = float(np.polyfit(np.log(ns), np.log(ts), 1)[0]) if len(ns) > 1 else None
        slopes[backend] = slope
        ax.loglog(ns, ts, "o-", label=backend + (f" (N^{slope:.2f})" if slope is not None else ""))
    ax.set_xlabel("sentences per side N")
    ax.set_ylabel("mining time (s)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    for ext in ("png", "pdf"):
        fig.savefig(path.with_suffix(f".{ext}"), dpi=150)
    plt.close(fig)
    return slopes


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True)
    p.add_argument("--sizes", type=int, nargs="+", default=[5000, 10000, 20000])
    p.add_argument("--dim", type=int, default=768)
    p.add_argument("--k", type=int, default=4)
    p.add_argument("--approx", default="faiss-hnsw", choices=["faiss-hnsw", "faiss-ivf"])
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--flat-max", type=int, default=0, help="run faiss flat only up to this N (0: every N)")
    p.add_argument("--bucc-dir", default=None, help="a BUCC-style set for the approximate index's F1 change")
    p.add_argument("--repeats", type=int, default=3,
                   help="exact vs faiss flat at the largest flat N: this many runs of each, interleaved A/B")
    a = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    backends = ["exact", "faiss-flat", a.approx]
    setup = setup_threads(a.threads) | {"dim": a.dim, "k": a.k, "scoring": "ratio margin, best match, one-to-one",
                                         "data": "random unit vectors", "approximate": a.approx,
                                         "faiss": faiss_version()}
    series: dict[str, list[dict]] = {b: [] for b in backends}
    for n in a.sizes:
        for b in backends:
            if b == "faiss-flat" and a.flat_max and n > a.flat_max:
                continue
            seconds, mib, n_cands = in_fresh_process(b, n, a.dim, a.k, a.threads)
            series[b].append({"n": n, "seconds": seconds, "peak_mib": mib, "candidates": n_cands})
            log.info("N=%d %s: %.2f s, peak +%.0f MiB, %d candidates", n, b, seconds, mib, n_cands)
    flat_top = series["faiss-flat"][-1]["n"]
    ab = interleaved(series, flat_top, a)
    rec = Record("mining", "Bitext mining: exact k-NN vs faiss flat and an approximate faiss index", setup,
                 series={"time": series, "interleaved": ab})
    rec.series["exponent"] = plot(series, out / "mining_time")
    top = a.sizes[-1]
    at = {b: {pt["n"]: pt for pt in series[b]} for b in backends}
    spread = "; ".join(f"{b}: " + " / ".join(f"{t:.1f}" for t in ab[b]) + " s" for b in ab)
    rec.add(Row(f"mining time, N = {flat_top:,} per side", float(np.median(ab["exact"])),
                float(np.median(ab["faiss-flat"])), "s", "exact (torch, one pass for both directions)",
                "faiss IndexFlatIP", 1.1, f"median of {len(ab['exact'])} runs each, interleaved exact / faiss, each in "
                f"a fresh process ({spread}); same candidates (tests/common/eval/test_knn_index.py)"))
    rec.add(Row(f"mining peak memory above the data, N = {flat_top:,}", at["exact"][flat_top]["peak_mib"],
                at["faiss-flat"][flat_top]["peak_mib"], "MiB", "exact", "faiss IndexFlatIP"))
    big = {b: at[b][top] for b in (a.approx, "exact")}
    note = "approximate vs exact: goal >= 10x faster" + (" at N = 200,000" if top < 200_000 else "")
    exps = rec.series["exponent"]
    if big[a.approx]["seconds"] > 0.1 * big["exact"]["seconds"]:
        note += "; " + limit_note(big[a.approx]["seconds"], big["exact"]["seconds"], exps[a.approx], exps["exact"], top)
    rec.add(Row(f"mining time, N = {top:,} per side", big[a.approx]["seconds"], big["exact"]["seconds"], "s",
                a.approx, "exact", 0.1, note))
    rec.add(Row(f"mining peak memory above the data, N = {top:,}", big[a.approx]["peak_mib"],
                big["exact"]["peak_mib"], "MiB", a.approx, "exact"))
    if a.bucc_dir:
        f1 = bucc_f1(Path(a.bucc_dir), ["exact", a.approx])
        rec.series["bucc_f1"] = f1
        change = f1[a.approx]["mean"] - f1["exact"]["mean"]
        rec.add(Row("BUCC-style test F1 (mean over pairs), all-MiniLM-L6-v2 embeddings", f1[a.approx]["mean"],
                    f1["exact"]["mean"], "F1 %", a.approx, "exact", 0.5, goal_on="difference",
                    note=f"F1 change {change:+.2f} points; per pair: "
                         + ", ".join(f"{q} {f1[a.approx][q]:.1f} vs {f1['exact'][q]:.1f}"
                                     for q in f1["exact"] if q != "mean")))
        rec.series["bucc_f1_change"] = change
    rec.write(out)


if __name__ == "__main__":
    main()
