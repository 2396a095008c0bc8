"""Preflight of a paper-scale run: what would fail, checked before anything is submitted.

    snakemake papers/dap/preflight --config scale=paper          # the rule runs this module
    python -m common.workflow.preflight --experiment dap --scale paper

Checks, each printed with what is missing, and written to ``<results>/<scale>/<experiment>/preflight.json``:

* **downloads**: every URL the corpus prep and the ``model`` rule fetch (the experiment's config at this scale,
  enumerated by the rehearsal mirror's builder, :func:`common.rehearsal.mirror.populate`) answers a ``HEAD``
  (through ``download_base_url`` when set); the files placed by hand (CWMT, WIT3, WikiANN) are in
  ``<corpus>/manual/``;
* **data root**: the evaluation sets that a corpus prep reads in place from ``data_root`` (MoCo-BERT's and VMSST's
  English STS, VMSST's STS17), and at rehearsal scale the real files the mirror serves from there (Tatoeba v1 of
  every experiment: the mirror rule builds them all at once):
  :func:`common.rehearsal.mirror.data_root_paths`;
* **imports**: every module the experiment's jobs run, and the tokenizer and launcher dependencies;
* **GPUs**: some node has the GPUs a training job asks for (``sinfo``'s GRES; without Slurm, this machine's
  ``torch.cuda.device_count()``); ``--gpu-kind`` (e.g. ``a100``) must appear in that GRES or device name;
* **disk**: free space under the results and cache roots against downloads x 3 (archive, extraction, converted
  corpus) + every run's checkpoints (the weights file x 3: fp32 weights and two Adam moments, x
  ``keep_checkpoints`` + the final model);
* **memory**: each stage's ``mem_mb`` fits the largest node (``sinfo``'s memory; this machine's without Slurm);
* **census** (paper scale): every training job's memory per GPU, as the census counted it
  (``figures/census/paper.json``, :mod:`common.census`), fits the GPU of ``--gpu-kind`` (80 GB A100 without one).

Exit status 1 when something is missing. At ``scale=rehearsal`` the downloads are checked against the local
mirror (tests/test_rehearsal.py), so the check itself is tested without a network.
"""
from __future__ import annotations

import argparse
import importlib
import logging
import os
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from common import requirements
from common.config import LEADERBOARD, PAPER_SCALES, load_config
from common.data import download as dl
from common.io import write_json
from common.workflow.launch import census_jobs

log = logging.getLogger(__name__)
MANUAL = "manual"  # the revision of a file no host serves (common/data/translation_paper.py)


@dataclass
class Finding:
    check: str
    ok: bool
    summary: str
    missing: list[str] = field(default_factory=list)


def _head(url: str, timeout: float, tries: int = 3) -> tuple[str, int | None, str | None]:
    """(url, size, problem) of a HEAD request (a GET of byte 0 where a host refuses HEAD); a 5xx or a dropped
    connection is asked again, as the downloader would."""
    problem = "no answer"
    for attempt in range(tries):
        for method, headers in (("HEAD", {}), ("GET", {"Range": "bytes=0-0"})):
            try:
                with urllib.request.urlopen(urllib.request.Request(url, method=method, headers=headers),
                                            timeout=timeout) as resp:
                    size = resp.headers.get("Content-Length") if method == "HEAD" else \
                        (resp.headers.get("Content-Range") or "").rpartition("/")[2]
                    return url, int(size) if size and size.isdigit() else None, None
            except urllib.error.HTTPError as exc:
                problem = f"HTTP {exc.code}"
                if method == "HEAD" and exc.code in (403, 405, 501):
                    continue  # this host answers GET only
                if exc.code < 500:
                    return url, None, problem
                break
            except (urllib.error.URLError, OSError) as exc:
                problem = str(getattr(exc, "reason", exc))
                break
        time.sleep(attempt + 1)
    return url, None, problem


def downloads(experiment: str, scale: str, data_root: Path, base_url: str | None, manual_dir: Path,
              timeout: float = 20.0) -> tuple[Finding, Finding, int, int]:
    """(downloads, hand-placed files under ``manual_dir``, total bytes, bytes of the largest pinned weights file)
    of an experiment at ``scale``: one HEAD request per URL."""
    from common.models import hub
    from common.rehearsal.mirror import Listing, populate

    listing = Listing(data_root)
    models = populate(listing, (experiment,), scale)
    urls = {name: r.url for name, r in listing.resources.items() if r.revision != MANUAL}
    manual = [f"{manual_dir}/{Path(name).name}" for name, r in listing.resources.items() if r.revision == MANUAL]
    manual += [f"{manual_dir}/{rel}" for rel in listing.manual_files.get(experiment, [])]
    weights: set[str] = set()
    for name in models:
        m = hub.model(name)
        urls.update({f"{m.folder}/{f}": m.url(f) for f in m.files})
        weights.update(f"{m.folder}/{f}" for f in m.files if f.endswith((".safetensors", ".bin")))
    with ThreadPoolExecutor(16) as pool:
        answers = list(pool.map(lambda u: _head(dl._rebase(u, base_url), timeout), urls.values()))
    bad = [f"{name}: {url} ({problem})" for name, (url, _, problem) in zip(urls, answers) if problem]
    total = sum(size or 0 for _, size, _ in answers)
    largest_weights = max((size or 0 for name, (_, size, _) in zip(urls, answers) if name in weights), default=0)
    absent = [p for p in dict.fromkeys(manual) if not Path(p).exists()]
    return (Finding("downloads", not bad, f"{len(urls) - len(bad)} of {len(urls)} URLs answer "
                    f"({total / 1e9:.1f} GB)" + (f" via {base_url}" if base_url else ""), bad),
            Finding("files placed by hand", not absent, f"{len(manual) - len(absent)} of {len(manual)} present "
                    f"under {manual_dir}", absent),
            total, largest_weights)


def data_root_files(experiment: str, scale: str, root: Path) -> Finding:
    """The folders and files ``experiment``'s jobs at ``scale`` read from ``root`` are there."""
    from common.data.corpora import absent
    from common.rehearsal.mirror import data_root_paths

    paths = data_root_paths((experiment,), scale, root)
    missing = [str(p) for p in absent(paths)]
    return Finding("data root", not missing, f"{len(paths) - len(missing)} of {len(paths)} present under {root}",
                   missing)


def imports(experiment: str) -> Finding:
    modules = requirements.modules(experiment)
    missing = requirements.missing(modules)
    return Finding("imports", not missing, f"{len(modules) - len(missing)} of {len(modules)} modules import", missing)


def cluster_nodes() -> list[dict[str, Any]] | None:
    """Slurm's nodes (GPUs from GRES, memory in MB), or None without ``sinfo``."""
    if not shutil.which("sinfo"):
        return None
    out = subprocess.run(["sinfo", "-N", "-h", "-o", "%N|%G|%m"], capture_output=True, text=True, timeout=60)
    if out.returncode != 0:  # installed, but no controller answers: not a cluster to check against
        return None
    nodes = []
    for line in out.stdout.splitlines():
        name, gres, mem = line.split("|")
        gpus = sum(int(part.split(":")[-1].split("(")[0]) for part in gres.split(",")
                   if part.startswith("gpu") and part.split(":")[-1].split("(")[0].isdigit())
        nodes.append({"name": name, "gres": gres, "gpus": gpus, "mem_mb": int(mem.rstrip("+") or 0)})
    return nodes


def local_node() -> dict[str, Any]:
    import torch

    gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
    name = torch.cuda.get_device_name(0) if gpus else "cpu"
    return {"name": "this machine", "gres": name, "gpus": gpus,
            "mem_mb": os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2**20}


def gpus(cfg: dict[str, Any], nodes: list[dict[str, Any]], kind: str | None, cpu_ranks: bool = False) -> Finding:
    """Some node has the GPUs a job asks for; ``cpu_ranks`` (the rehearsal): without GPUs the ranks run on the CPU."""
    need = max(int(cfg["training"].get("gpus", 0)), int(cfg.get("nmt", {}).get("recipe", {}).get("gpus", 0)))
    if cpu_ranks and not any(n["gpus"] for n in nodes):
        return Finding("GPUs", True, f"no GPU: the rehearsal's {need} ranks per job run on the CPU (gloo)")
    fit = [n for n in nodes if n["gpus"] >= need and (not kind or kind.lower() in n["gres"].lower())]
    best = max((n["gpus"] for n in nodes), default=0)
    summary = f"jobs ask for {need} GPU(s) per node" + (f" of kind {kind}" if kind else "") + \
        f"; {len(fit)} of {len(nodes)} node(s) have them (most on one node: {best})"
    return Finding("GPUs", bool(fit) or need == 0, summary, [] if fit or need == 0 else
                   [f"{n['name']}: {n['gres'] or 'no GRES'}" for n in nodes])


def memory(cfg: dict[str, Any], nodes: list[dict[str, Any]]) -> Finding:
    largest = max((n["mem_mb"] for n in nodes), default=0)
    over = [f"{stage}: mem_mb {r['mem_mb']} > {largest} (largest node)"
            for stage, r in cfg.get("resources", {}).items() if r.get("mem_mb", 0) > largest]
    return Finding("memory", not over, f"every stage's mem_mb fits {largest} MB" if not over else
                   "some stages ask for more memory than any node has", over)


def disk(cfg: dict[str, Any], runs: int, download_bytes: int, weight_bytes: int, roots: list[Path]) -> Finding:
    keep = int(cfg["training"].get("keep_checkpoints", 2))
    need = 3 * download_bytes + runs * weight_bytes * (3 * keep + 1)
    free = {str(r): shutil.disk_usage(_existing(r)).free for r in roots}
    short = [f"{r}: {f / 1e9:.0f} GB free" for r, f in free.items() if f < need]
    return Finding("disk", not short, f"needs about {need / 1e9:.0f} GB ({runs} runs x checkpoints of "
                   f"{weight_bytes / 1e9:.2f} GB weights x (3 x {keep} + 1), downloads x 3); free: "
                   + ", ".join(f"{r} {f / 1e9:.0f} GB" for r, f in free.items()), short)


def _existing(path: Path) -> Path:
    while not path.exists():
        path = path.parent
    return path


def count_runs(experiment: str, cfg: dict[str, Any]) -> int:
    """Training runs of an experiment (its run registry)."""
    module = "common.leaderboard.methods" if experiment == LEADERBOARD else f"papers.{experiment}.runs"
    return len(list(importlib.import_module(module).registry(cfg)))


def run(experiment: str, scale: str, data_root: Path, results_root: Path, cache_root: Path, base_url: str | None,
        gpu_kind: str | None, runs: int | None = None, mirror: Path | None = None) -> list[Finding]:
    if scale not in PAPER_SCALES:
        raise SystemExit(f"preflight checks the paper scale (and its rehearsal), not {scale!r}")
    cfg = load_config(experiment, scale)
    # the hand-placed files: in the corpus folder at paper scale, in the rehearsal mirror (the corpus rule copies them)
    manual_dir = mirror / "manual" / experiment if mirror else results_root / scale / experiment / "corpus" / "manual"
    found_downloads, found_manual, total, weight_bytes = downloads(experiment, scale, data_root, base_url, manual_dir)
    nodes = cluster_nodes() or [local_node()]
    runs = runs if runs is not None else count_runs(experiment, cfg)
    found = [found_downloads, found_manual, data_root_files(experiment, scale, data_root), imports(experiment),
             gpus(cfg, nodes, gpu_kind, scale != "paper"), memory(cfg, nodes),
             disk(cfg, runs, total, weight_bytes, [results_root, cache_root])]
    return found + ([census_fit(census_jobs(experiment), gpu_kind)] if scale == "paper" else [])


def census_fit(jobs: dict[str, dict[str, Any]], kind: str | None) -> Finding:
    """Every training job's memory per GPU (the census: ``figures/census/paper.json``) fits the GPU it runs on
    (``--gpu-kind``; the A100 80 GB without one)."""
    from common.census.estimate import GPUS

    gpu = GPUS.get((kind or "a100").lower(), GPUS["a100"])
    jobs = {job: r for job, r in jobs.items() if r.get("kind") != "corpus"}  # on the host, no GPU
    if not jobs:
        return Finding("census", False, "no census of this experiment's training jobs: run `snakemake census`",
                       ["figures/census/paper.json"])
    need = {job: r.get("memory_per_gpu_gib", r.get("model_states_gib", {}).get("total", 0.0))
            for job, r in jobs.items()}  # a job whose step was not counted: its model states
    over = [f"{job}: {gib:.1f} GiB per GPU > {gpu.memory_gib:g} GiB ({gpu.name})"
            for job, gib in need.items() if gib > gpu.memory_gib]
    largest = max(need.values())
    return Finding("census", not over, f"{len(jobs) - len(over)} of {len(jobs)} training jobs fit {gpu.name} "
                   f"(largest: {largest:.1f} GiB per GPU)", over)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m common.workflow.preflight", description=__doc__.split("\n\n")[0])
    p.add_argument("--experiment", required=True, nargs="+", help="one or more experiments")
    p.add_argument("--scale", default="paper")
    p.add_argument("--data-root", default="../shared/data")
    p.add_argument("--results-root", default="results")
    p.add_argument("--cache-root", default="cache")
    p.add_argument("--base-url", default=None, help="a site mirror of every download host (download_base_url)")
    p.add_argument("--mirror", default=None, help="a rehearsal mirror folder, served for the check")
    p.add_argument("--runs", type=int, default=None, help="training runs (default: the paper's run registry)")
    p.add_argument("--gpu-kind", default=None, help="e.g. a100 or h100: must appear in the nodes' GPU GRES")
    p.add_argument("--out", default=None, help="the JSON report (default: <results>/<scale>/<exp>/preflight.json)")
    a = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    from common.data.mirror_server import serving

    ok = True
    for experiment in a.experiment:
        with serving(a.mirror, a.base_url) as (base_url, _pins):
            findings = run(experiment, a.scale, Path(a.data_root), Path(a.results_root), Path(a.cache_root), base_url,
                           a.gpu_kind, a.runs, Path(a.mirror) if a.mirror else None)
        log.info("preflight of %s at scale %s:", experiment, a.scale)
        for f in findings:
            log.info("  %-22s %s  %s", f.check, "ok     " if f.ok else "MISSING", f.summary)
            for m in f.missing[:50]:
                log.info("%26s- %s", "", m)
            if len(f.missing) > 50:
                log.info("%26s... and %d more", "", len(f.missing) - 50)
        out = Path(a.out or Path(a.results_root) / a.scale / experiment / "preflight.json")
        write_json(out, {"experiment": experiment, "scale": a.scale, "ok": all(f.ok for f in findings),
                         "findings": [asdict(f) for f in findings]})
        ok &= all(f.ok for f in findings)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
