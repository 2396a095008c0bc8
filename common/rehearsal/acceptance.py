"""GPU acceptance of the paper path in one command: ``scripts/gpu_acceptance.sh``.

On a machine with a GPU it runs, and reports in ``<out>/README.md`` (``figures/gpu/<device>/`` by default) with
``acceptance.json`` beside it:

1. the environment: torch, CUDA, NCCL, DeepSpeed versions, the device and whether it has bf16;
2. the trainer on a small BERT with dropout under each precision of the policy (bf16, and fp16 with dynamic loss
   scaling, the V100 option, at ZeRO 0): finite losses, fp32 weights, step time and peak memory, and exact resume
   (8 steps straight equal 4 steps, a rehearsed time limit, and 4 more: every parameter bit for bit, so the CUDA
   generator of dropout is restored);
3. every paper's rehearsal (``snakemake papers/<p>/all --config scale=rehearsal``) on the device: NCCL and bf16,
   world size 1 (``gpus=1``), and, where the machine has two GPUs, DAP's at world size 2; per paper the jobs, the
   wall time, the median training step time and the peak memory of its training runs. ``--scale ci`` runs the
   ``ci`` rehearsal instead: the same paper paths with each paper's run registry cut to one run per distinct code
   path (``papers/<p>/config/ci.yaml``);
4. the MFU benchmark (``scripts/bench_mfu.py``): the training step's speed ladder at the papers' shapes.

``--device cpu`` runs the same checks on the CPU (gloo, the rehearsal's 2 ranks, a shrunk MFU benchmark) so the
script cannot rot: the default test suite runs it with ``--scale ci`` for every paper, and the slow tests with the
full rehearsal (tests/test_rehearsal.py). A check that fails is reported as failed, with its log, and the command
exits 1.
"""
from __future__ import annotations

import argparse
import logging
import os
import platform
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from common import requirements
from common.config import REHEARSAL_SCALES, papers
from common.data import corpora
from common.io import atomic_write, read_json, write_json
from common.rehearsal import mirror
from common.training.metrics_log import read_metrics

if TYPE_CHECKING:
    from transformers import BertForMaskedLM

log = logging.getLogger(__name__)
ROOT = Path(__file__).resolve().parents[2]
PAPERS = tuple(papers("rehearsal"))  # every paper with a rehearsal config
CHECKS = ("trainer", "mfu", "rehearsal")


@dataclass
class Check:
    name: str
    passed: bool
    seconds: float
    details: dict[str, Any] = field(default_factory=dict)
    log: str = ""


def environment(device: str) -> dict[str, Any]:
    import deepspeed
    import transformers

    env: dict[str, Any] = {"python": platform.python_version(), "torch": torch.__version__,
                           "transformers": transformers.__version__, "deepspeed": deepspeed.__version__,
                           "device": device, "cpu_threads": torch.get_num_threads()}
    if device == "cuda":
        props = torch.cuda.get_device_properties(0)
        env.update(gpu=props.name, gpus=torch.cuda.device_count(), gpu_memory_gib=round(props.total_memory / 2**30, 1),
                   cuda=torch.version.cuda, nccl=".".join(map(str, torch.cuda.nccl.version())),
                   bf16=torch.cuda.is_bf16_supported())
    return env


def device_name(env: dict[str, Any]) -> str:
    """A folder name for the device: ``nvidia-h100-80gb-hbm3`` or ``cpu``."""
    return re.sub(r"[^a-z0-9]+", "-", env.get("gpu", "cpu").lower()).strip("-")


# ----------------------------------------------------------------------------------------------- trainer checks
def _tiny_bert() -> BertForMaskedLM:
    from transformers import BertConfig, BertForMaskedLM

    torch.manual_seed(0)
    return BertForMaskedLM(BertConfig(vocab_size=512, hidden_size=64, num_hidden_layers=2, num_attention_heads=2,
                                      intermediate_size=128, max_position_embeddings=64, hidden_dropout_prob=0.1,
                                      attention_probs_dropout_prob=0.1))


def _examples(n: int = 64, length: int = 24) -> list[torch.Tensor]:
    g = torch.Generator().manual_seed(1)
    return [torch.randint(5, 512, (length,), generator=g) for _ in range(n)]


def _collate(rows: list[torch.Tensor], gen: torch.Generator) -> dict[str, torch.Tensor]:
    ids = torch.stack(rows)  # (B, S)
    labels = torch.where(torch.rand(ids.shape, generator=gen) < 0.15, ids, torch.full_like(ids, -100))
    return {"input_ids": ids, "attention_mask": torch.ones_like(ids), "labels": labels}


def _run(out: Path, precision: str, steps: int, stop_at: int | None = None) -> dict[str, Any]:
    from common.training.trainer import Trainer, TrainingArguments

    args = TrainingArguments(output_dir=str(out), max_steps=steps, global_batch_size=16, learning_rate=1e-3,
                             warmup_steps=2, precision=precision, zero_stage=0, save_every=4, log_every=1,
                             tensorboard=False, rehearse_time_limit_at=stop_at)
    trainer = Trainer(_tiny_bert(), _examples(), _collate, args)
    summary = trainer.train()
    summary["params"] = {k: v.detach().float().cpu().clone() for k, v in trainer.unwrap().state_dict().items()}
    summary["dtypes"] = sorted({str(p.dtype) for p in trainer.unwrap().parameters()})
    return summary


def trainer_check(precision: str, work: Path) -> Check:
    t0 = time.time()
    straight = _run(work / f"{precision}-straight", precision, 8)
    stopped = _run(work / f"{precision}-resumed", precision, 8, stop_at=4)
    resumed = _run(work / f"{precision}-resumed", precision, 8)
    rows = read_metrics(work / f"{precision}-straight")
    losses = [r["loss"] for r in rows]
    equal = straight["params"].keys() == resumed["params"].keys() and all(
        torch.equal(straight["params"][k], resumed["params"][k]) for k in straight["params"])
    step_s = statistics.median(b["elapsed_s"] - a["elapsed_s"] for a, b in zip(rows, rows[1:]))
    details = {"losses": [round(x, 4) for x in losses], "weights": straight["dtypes"],
               "stopped_at": stopped.get("stopped_at"), "resume_equal": equal,
               "step_ms": round(1000 * step_s, 1), "peak_memory_mb": max(r["peak_memory_mb"] for r in rows)}
    passed = (all(map(lambda x: x == x and abs(x) < 1e4, losses)) and straight["dtypes"] == ["torch.float32"]
              and stopped.get("stopped_at") == 4 and equal)
    return Check(f"trainer {precision}", passed, time.time() - t0, details)


def trainer_check_isolated(precision: str, work: Path, device: str) -> Check:
    """The trainer check in a process of its own (a failed DeepSpeed init must not take this one down)."""
    t0 = time.time()
    env = {**os.environ, **({"DS_ACCELERATOR": "cpu"} if device == "cpu" else {})}
    env.pop("WORLD_SIZE", None)
    proc = subprocess.run([sys.executable, "-m", "common.rehearsal.acceptance", "--trainer-check", precision,
                           "--work", str(work)], capture_output=True, text=True, env=env, cwd=ROOT, timeout=900)
    result = work / f"{precision}.json"
    if proc.returncode == 0 and result.exists():
        return Check(**read_json(result))
    return Check(f"trainer {precision}", False, time.time() - t0, {}, (proc.stdout + proc.stderr)[-3000:])


# ------------------------------------------------------------------------------------------------- rehearsals
def _training_figures(results: Path) -> dict[str, Any]:
    """Median step time and peak memory over a paper's training runs (their metrics.jsonl)."""
    steps, peaks = [], []
    logs = list(results.rglob("models/**/metrics.jsonl"))
    for path in logs:
        rows = [r for r in read_metrics(path) if "elapsed_s" in r]
        steps += [(b["elapsed_s"] - a["elapsed_s"]) / (b["step"] - a["step"])
                  for a, b in zip(rows, rows[1:]) if b["step"] > a["step"] and b["elapsed_s"] > a["elapsed_s"]]
        peaks += [r.get("peak_memory_mb", 0.0) for r in rows]
    return {"training_runs": len(logs),
            "median_step_ms": round(1000 * statistics.median(steps), 1) if steps else None,
            "peak_memory_mb": max(peaks) if peaks else None}


def _children_cpu() -> float:
    """CPU seconds (user and system) of this process's ended children and theirs: around a workflow run, its jobs'."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def rehearsal_check(papers: list[str], workdir: Path, data_root: str, cores: int, gpus: int | None,
                    name: str, timeout: float = 3600, scale: str = "rehearsal") -> Check:
    """``snakemake papers/<p>/all --config scale=<scale>`` (``rehearsal`` or ``ci``) for ``papers`` in one workflow
    run; past ``timeout`` seconds the workflow is stopped and the check fails with the jobs it had done."""
    t0 = time.time()
    # a module the jobs import lazily (sacreMoses for NMT BLEU) would otherwise fail minutes into the run
    missing = requirements.missing(["snakemake", *dict.fromkeys(m for p in papers for m in requirements.modules(p))])
    if missing:
        return Check(name, False, time.time() - t0, {"gpus": gpus, "not_started": "modules do not import"},
                     "not started: these modules do not import\n" + "\n".join(missing))
    # so would an evaluation set the corpus prep reads in place (on 2026-12-05, a data root without the STS sets)
    data_root = str(Path(data_root).resolve())  # as snakemake's jobs see it from their workdir
    absent = [str(f) for f in corpora.absent(mirror.data_root_paths(papers, scale, Path(data_root)))]
    if absent:
        return Check(name, False, time.time() - t0, {"gpus": gpus, "not_started": "files missing from the data root"},
                     f"not started: these are missing from the data root {data_root}\n" + "\n".join(absent))
    config = [f"scale={scale}", f"data_root={data_root}"] + ([f"gpus={gpus}"] if gpus is not None else [])
    cmd = [sys.executable, "-m", "snakemake", "-s", str(ROOT / "Snakefile"), "-d", str(workdir),
           *[f"papers/{p}/all" for p in papers], "--cores", str(cores), "--keep-going", "--config", *config]
    before = _children_cpu()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        returncode, output = proc.returncode, proc.stdout + proc.stderr
    except subprocess.TimeoutExpired as stopped:
        returncode = -1
        output = "".join(o.decode(errors="replace") if isinstance(o, bytes) else (o or "")
                         for o in (stopped.stdout, stopped.stderr)) + f"\n[stopped after {timeout:.0f} s]"
    details: dict[str, Any] = {"command": "snakemake " + " ".join(cmd[5:]), "scale": scale, "gpus": gpus,
                               "cpu_s": round(_children_cpu() - before)}
    jobs = re.search(r"^total\s+(\d+)$", output, flags=re.M)
    details["jobs"] = int(jobs.group(1)) if jobs else None
    done = re.findall(r"^(\d+) of \d+ steps", output, flags=re.M)
    details["jobs_done"] = int(done[-1]) if done else 0
    for p in papers:
        details[p] = _training_figures(workdir / "results" / scale / p)
        details[p]["tables"] = len(list((workdir / "figures" / p / scale).glob("*.csv")))
    return Check(name, returncode == 0, time.time() - t0, details, "" if returncode == 0 else output[-4000:])


def rehearsal_name(scale: str, ranks: str, of: str = "") -> str:
    """The rehearsal check's name in the report: 'rehearsal, 2 gloo ranks', 'ci rehearsal of DAP, world size 2'."""
    return f"{'ci ' if scale == 'ci' else ''}rehearsal{f' of {of}' if of else ''}, {ranks}"


def mfu_check(device: str, out: Path) -> Check:
    t0 = time.time()
    # on the CPU the script's code paths (the ladder's rungs, the peer) at tiny widths, in seconds; its figures mean
    # nothing there, and they join no log. On a GPU the whole ladder, within the script's own budget (~10 minutes),
    # its run appended to figures/gpu/mfu-log.jsonl
    shrink = [] if device == "cuda" else ["--tiny", "--log", "-"]
    record = out / f"mfu-{time.strftime('%Y-%m-%d')}.json"  # one per run: the census states the range over runs
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "bench_mfu.py"), "--device", device,
                           "--json", str(record), *shrink], capture_output=True, text=True, cwd=ROOT,
                          timeout=1200)
    details = {"output": proc.stdout.strip().splitlines()[-4:]} if proc.returncode == 0 else {}
    return Check("MFU benchmark (scripts/bench_mfu.py)", proc.returncode == 0, time.time() - t0, details,
                 "" if proc.returncode == 0 else (proc.stdout + proc.stderr)[-3000:])


# ----------------------------------------------------------------------------------------------------- report
def report(env: dict[str, Any], checks: list[Check], out: Path) -> None:
    lines = [f"# GPU acceptance: {env.get('gpu', 'CPU (the fallback that keeps the script from rotting)')}", "",
             "Written by `scripts/gpu_acceptance.sh` (common/rehearsal/acceptance.py). "
             + ("**All checks passed.**" if all(c.passed for c in checks) else "**Some checks FAILED** (below)."), "",
             "Environment: " + ", ".join(f"{k} {v}" for k, v in env.items()), "",
             "| check | result | wall (s) | figures |", "|---|---|---|---|"]
    for c in checks:
        figures = "; ".join(f"{k}: {v}" for k, v in c.details.items() if k not in ("losses", "output", "command"))
        lines.append(f"| {c.name} | {'passed' if c.passed else 'FAILED'} | {c.seconds:.0f} | {figures} |")
    for c in checks:
        if "command" in c.details:
            lines += ["", f"{c.name}: `{c.details['command']}`"]
        if "output" in c.details:
            lines += ["", f"{c.name}:", "", "```", *c.details["output"], "```"]
        if c.log:
            lines += ["", f"### {c.name}: log tail", "", "```", c.log, "```"]
    with atomic_write(out / "README.md") as fh:
        fh.write("\n".join(lines) + "\n")
    write_json(out / "acceptance.json", {"environment": env, "checks": [asdict(c) for c in checks]})


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    p.add_argument("--out", default=None, help="report folder (default: figures/gpu/<device>)")
    p.add_argument("--workdir", default=None, help="where the rehearsals run (default: a temporary folder)")
    p.add_argument("--data-root", default=str(ROOT.parent / "shared" / "data"))
    p.add_argument("--papers", nargs="+", default=list(PAPERS), choices=PAPERS)
    p.add_argument("--cores", type=int, default=os.cpu_count() or 2)
    p.add_argument("--checks", nargs="+", default=list(CHECKS), choices=CHECKS, help="which checks to run")
    p.add_argument("--scale", default="rehearsal", choices=REHEARSAL_SCALES,
                   help="the rehearsal to run: every run of the paper configs (rehearsal) or one per code path (ci)")
    p.add_argument("--rehearsal-timeout", type=float, default=3600, help="seconds before the rehearsal is stopped")
    p.add_argument("--trainer-check", default=None, help=argparse.SUPPRESS)
    p.add_argument("--work", default=None, help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    if a.trainer_check:  # the child process of trainer_check_isolated
        c = trainer_check(a.trainer_check, Path(a.work))
        write_json(Path(a.work) / f"{a.trainer_check}.json", asdict(c))
        return 0
    if a.device == "cuda" and not torch.cuda.is_available():
        log.error("--device cuda, but torch sees no GPU; run with --device cpu for the CPU fallback")
        return 2
    env = environment(a.device)
    out = Path(a.out or ROOT / "figures" / "gpu" / device_name(env))
    out.mkdir(parents=True, exist_ok=True)
    work = Path(a.workdir) if a.workdir else Path(tempfile.mkdtemp(prefix="gpu-acceptance-"))
    gpus = env.get("gpus", 0)
    checks: list[Check] = []

    def done(check: Check) -> None:  # the report is rewritten after every check: a stopped run keeps what it did
        checks.append(check)
        report(env, checks, out)

    if "trainer" in a.checks:
        for prec in ("bf16", "fp16"):
            done(trainer_check_isolated(prec, work / "trainer", a.device))
    if "mfu" in a.checks:
        done(mfu_check(a.device, out))
    if "rehearsal" in a.checks:
        # on a GPU, one rank per GPU: world size 1 for every paper, and 2 for DAP where there are two GPUs; on the CPU
        # the rehearsal's own 2 gloo ranks
        done(rehearsal_check(a.papers, work / a.scale, a.data_root, a.cores, 1 if a.device == "cuda" else None,
                             rehearsal_name(a.scale, "world size 1" if a.device == "cuda" else "2 gloo ranks"),
                             a.rehearsal_timeout, a.scale))
        if gpus >= 2 and "dap" in a.papers:
            done(rehearsal_check(["dap"], work / f"{a.scale}-2gpu", a.data_root, a.cores, 2,
                                 rehearsal_name(a.scale, "world size 2", "DAP"), a.rehearsal_timeout, a.scale))
    for c in checks:
        log.info("%s: %s (%.0f s)", c.name, "passed" if c.passed else "FAILED", c.seconds)
    log.info("report: %s", out / "README.md")
    return 0 if all(c.passed for c in checks) else 1


if __name__ == "__main__":
    sys.exit(main())
