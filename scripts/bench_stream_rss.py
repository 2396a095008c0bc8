"""Peak resident memory of the training data pipeline against corpus size: read by position vs read into a list.

For each corpus size, a synthetic parallel corpus (one ``a<TAB>b`` pair per line) is read the way a paper-scale
job reads it -- :mod:`common.data.stream` (memory-mapped, its line index built on first use and kept on disk) in the
order of :class:`common.training.sampler.StepSampler` with ``shuffle: feistel``, rank 0 of 8 fetching its slice of
``--steps`` global batches -- and, for comparison, the way the lists did (``read_tsv_pairs`` + ``randperm``). Each in
a fresh process; the figure is the peak RSS above the process after its imports (``VmHWM``, reset first).

    python scripts/bench_stream_rss.py --sizes 10000 100000 1000000 10000000 --out figures/bench/<machine>/stream_rss
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from bench.peak_memory import measure_in_children, write_figures


def corpus(folder: Path, lines: int) -> Path:
    path = folder / f"pairs-{lines}.tsv"
    if not path.exists():
        tmp = path.with_suffix(".tmp")
        with open(tmp, "w", encoding="utf-8") as fh:
            for start in range(0, lines, 100_000):
                fh.write("".join(f"sentence {i} with words {i % 977} and {i % 7919}\ttranslation {i} of words "
                                 f"{i % 101} and {i % 4099}\n" for i in range(start, min(start + 100_000, lines))))
        tmp.rename(path)
    return path


def child(path: Path, mode: str, steps: int, batch: int, ranks: int) -> dict:
    from common.rss import peak_rss_bytes, reset_peak_rss
    from common.training.sampler import StepSampler

    if mode == "stream":
        from common.data.stream import Concat, TsvPairs, tagged
    else:
        from common.data.loaders import read_tsv_pairs
    base = reset_peak_rss() // 2**20
    t0 = time.perf_counter()
    if mode == "stream":
        examples = Concat([tagged(TsvPairs(path), 1)])
    else:
        examples = [(a, b, 1) for a, b in read_tsv_pairs(path)]
    opened = time.perf_counter() - t0
    sampler = StepSampler(len(examples), batch, seed=1, rank=0, world_size=ranks,
                          shuffle="feistel" if mode == "stream" else "randperm")
    t0 = time.perf_counter()
    chars = 0
    for step in range(steps):
        chars += sum(len(a) + len(b) for a, b, _ in (examples[i] for i in sampler.local_indices(step)))
    return {"mode": mode, "lines": len(examples), "peak_above_imports_mb": peak_rss_bytes() // 2**20 - base,
            "open_s": round(opened, 2), "steps_s": round(time.perf_counter() - t0, 2), "chars": chars}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000, 10_000_000])
    p.add_argument("--list-up-to", type=int, default=10_000_000, help="largest corpus read into a list")
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--batch", type=int, default=1024)
    p.add_argument("--ranks", type=int, default=8)
    p.add_argument("--data", default="/tmp/bench_stream", help="where the synthetic corpora are written")
    p.add_argument("--out", default=None, help="write the figures here (.json, .md, .png)")
    p.add_argument("--child", default=None, help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.child:
        mode, path = a.child.split(":", 1)
        print(json.dumps(child(Path(path), mode, a.steps, a.batch, a.ranks)))
        return
    folder = Path(a.data)
    folder.mkdir(parents=True, exist_ok=True)
    variants = []
    for n in a.sizes:
        path = corpus(folder, n)
        path.with_name(path.name + ".lines.v2.i64").unlink(missing_ok=True)  # the index is built in the measured run
        variants += [f"stream:{path}"] + ([f"list:{path}"] if n <= a.list_up_to else [])
    rows = measure_in_children(__file__, ["--steps", str(a.steps), "--batch", str(a.batch), "--ranks", str(a.ranks)],
                               variants)
    lines = [f"# Peak RSS of the data pipeline against corpus size ({a.steps} steps, global batch {a.batch}, rank 0 "
             f"of {a.ranks})", "", "Written by `scripts/bench_stream_rss.py`; each row a fresh process. stream: "
             "common/data/stream.py + the Feistel order (the paper scale); list: the pairs read into a Python list + "
             "torch.randperm (before).", "",
             "| lines | stream: peak RSS (MB) | open (s) | list: peak RSS (MB) | open (s) |", "|---|---|---|---|---|"]
    for n in a.sizes:
        s = next(r for r in rows if r["lines"] == n and r["mode"] == "stream")
        lst = next((r for r in rows if r["lines"] == n and r["mode"] == "list"), None)
        lines.append(f"| {n:,} | {s['peak_above_imports_mb']} | {s['open_s']} | "
                     + (f"{lst['peak_above_imports_mb']} | {lst['open_s']} |" if lst else "not run | |"))
    write_figures(a.out, lines, {"args": vars(a), "rows": rows})
    if a.out:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(5, 3.5))
        for mode, label in (("stream", "read by position (stream.py)"), ("list", "read into a list")):
            pts = sorted((r["lines"], r["peak_above_imports_mb"]) for r in rows if r["mode"] == mode)
            ax.plot(*zip(*pts), marker="o", label=label)
        ax.set(xscale="log", yscale="log", xlabel="corpus size (lines)", ylabel="peak RSS above imports (MB)",
               title="Training data pipeline memory")
        ax.legend()
        fig.tight_layout()
        fig.savefig(Path(a.out).with_suffix(".png"), dpi=120)


if __name__ == "__main__":
    main()
