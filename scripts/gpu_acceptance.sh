#!/usr/bin/env bash
# GPU acceptance of the paper path in one command (docs/cluster.md, "GPU acceptance"):
#   bash scripts/gpu_acceptance.sh                 # on a machine with a GPU, after scripts/install.sh
#   bash scripts/gpu_acceptance.sh --device cpu    # the CPU fallback (the test suite runs it)
# Runs the trainer under bf16 and fp16 with an exact-resume check, every paper's rehearsal on the device (NCCL,
# world size 1, and 2 for DAP where two GPUs exist), and the MFU benchmark; writes figures/gpu/<device>/README.md
# and acceptance.json. Options: --papers dap moco vmsst hictl, --scale rehearsal|ci (ci: one run per distinct code
# path, what the default test suite runs), --checks trainer mfu rehearsal, --data-root DIR, --workdir DIR,
# --out DIR, --cores N.
# Exit status 1 when a check failed (the README says which, with its log).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
exec "$PY" -m common.rehearsal.acceptance "$@"
