#!/usr/bin/env bash
# Installs everything into ./.venv with the pinned versions of requirements.txt (idempotent).
# Needs Python 3.11; on Debian/Ubuntu as root it installs python3-venv when venv is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-$(command -v python3.11 || command -v python3)}
if ! "$PY" -c 'import sys; assert sys.version_info[:2] == (3, 11)' 2>/dev/null; then
  echo "install.sh: Python 3.11 is required (found $("$PY" --version 2>&1))" >&2
  exit 1
fi
if [ ! -x .venv/bin/python ]; then
  if ! "$PY" -m venv .venv 2>/dev/null; then
    rm -rf .venv
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
      apt-get update -qq && apt-get install -y -qq python3-venv >/dev/null
      "$PY" -m venv .venv
    else
      echo "install.sh: 'python3 -m venv' failed; install python3-venv" >&2
      exit 1
    fi
  fi
fi
.venv/bin/python -m pip install -q --upgrade pip
# torch first and pinned: on a CPU machine this takes the CPU wheel, not the CUDA stack.
.venv/bin/python -m pip install -q torch==2.13.0
# every pin but fairseq-fixed, then fairseq-fixed without its declared dependencies (torchaudio would break the
# transformers imports) and built against the installed torch (no build isolation: no second torch download)
grep -v '^fairseq-fixed==' requirements.txt > .venv/requirements-no-fairseq.txt
.venv/bin/python -m pip install -q -r .venv/requirements-no-fairseq.txt
FAIRSEQ=$(grep '^fairseq-fixed==' requirements.txt)
if ! .venv/bin/python -m pip show fairseq-fixed 2>/dev/null | grep -qx "Version: ${FAIRSEQ#*==}"; then
  .venv/bin/python -m pip install -q --no-deps --no-build-isolation "$FAIRSEQ"
fi
.venv/bin/python -m pip uninstall -q -y torchaudio 2>/dev/null || true
.venv/bin/python -m pip install -q --no-deps -e .
echo "install.sh: environment ready in .venv"
