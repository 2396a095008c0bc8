"""Full against selective activation checkpointing for one paper-scale training job: the census's probe
(common/census/probe.py) counts the job's step under each mode, and the fits per row give what a GPU keeps and
computes per example.

Prints, per mode (no checkpointing, full, selective): the activations and TFLOP per row, and the job as the census
would shape and price it (its GPUs from memory, memory per GPU, H100-hours: common/census/__main__.py's ``shaped``);
appends one row to figures/logs/investigations.jsonl.

    python scripts/probe_checkpointing_modes.py vmsst l24/vmsst
"""
from __future__ import annotations

import argparse
import importlib
import logging
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from common import measurements  # noqa: E402
from common.census import measured  # noqa: E402
from common.census.__main__ import PROBE_ROWS, _counted, _job_mfu, shaped  # noqa: E402
from common.census.estimate import DEFAULT_MFU  # noqa: E402
from common.census.probe import count_steps, probe_corpus  # noqa: E402
from common.config import load_config  # noqa: E402

log = logging.getLogger("probe_checkpointing_modes")
MODES = (False, "full", "selective")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("paper")
    p.add_argument("job", help="init/method, as the census names it (e.g. l24/vmsst)")
    p.add_argument("--data-root", default=str(ROOT.parent / "shared" / "data"))
    p.add_argument("--log", default=str(measurements.LOGS / "investigations.jsonl"), help="'-': none")
    a = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    cfg = load_config(a.paper, "paper")
    registry = importlib.import_module(f"papers.{a.paper}.runs").registry(cfg)
    run = next(r for r in registry if f"{r.init}/{r.method}" == a.job)
    t = {"gpus": 1, **cfg["training"]}
    figures: dict[str, dict[str, float | int | None]] = {}
    with tempfile.TemporaryDirectory(prefix="ckpt-modes-") as tmp:
        manifest = probe_corpus(a.paper, Path(tmp), a.data_root, cfg.get("census", {}).get("languages"))
        for mode in MODES:
            started = time.time()
            training = {**t, "gradient_checkpointing": mode}
            counts = count_steps(a.paper, {**cfg, "training": training}, run, PROBE_ROWS[0], manifest,
                                 Path(tmp) / str(mode))
            counted = _counted(counts[-1], counts, PROBE_ROWS[0])
            row = shaped(counted, training, run.method,
                         lambda rows, length: _job_mfu(a.paper, a.job, DEFAULT_MFU, measured.FIGURES, rows, length))
            one, two = counts
            figures[str(mode).lower()] = {
                "activation_gib_per_row": round((two.activation_bytes - one.activation_bytes) / 2**30, 4),
                "tflop_per_row": round((two.flops - one.flops) / 1e12, 4), "gpus": row["gpus"],
                "gpus_from": row["gpus_from"], "memory_per_gpu_gib": round(row.get("memory_per_gpu_gib", 0.0), 1),
                "h100_hours": round(row.get("gpu_hours", {}).get("h100", 0.0), 1)}
            log.info("%s %s, checkpointing %s: %s (%.0f s)", a.paper, a.job, mode, figures[str(mode).lower()],
                     time.time() - started)
    if a.log != "-":
        full, selective = figures["full"], figures["selective"]
        measurements.append(a.log, "python scripts/probe_checkpointing_modes.py " + " ".join(sys.argv[1:]), figures,
                            finding=f"selective checkpointing at paper scale, {a.paper} {a.job}: "
                                    f"{selective['tflop_per_row'] / full['tflop_per_row']:.3f}x full's FLOPs, "
                                    f"{selective['activation_gib_per_row'] / full['activation_gib_per_row']:.1f}x its "
                                    f"activations; {selective['gpus']} GPUs ({selective['gpus_from']}) and "
                                    f"{selective['h100_hours']} H100-hours against full's {full['gpus']} "
                                    f"({full['gpus_from']}) and {full['h100_hours']}")


if __name__ == "__main__":
    main()
