"""The Python modules an experiment's jobs import, and which of them do not import here.

One list for the two places that check an environment before spending compute on it: the preflight
(``common/workflow/preflight.py``, before a cluster submission) and the GPU acceptance
(``common/rehearsal/acceptance.py``, before its rehearsal). Some of these modules are imported lazily, deep in a
job (sacreMoses only when an NMT test set is scored on Moses tokens), so a missing one would otherwise surface
after the trainings it depends on: on the first GPU acceptance run without sacremoses, HICTL's en-de BLEU failed
after five minutes of training.
"""
from __future__ import annotations

import importlib

from common.config import LEADERBOARD

#: every experiment's jobs: training, evaluation, reports
COMMON = ("torch", "transformers", "deepspeed", "sentencepiece", "google.protobuf", "sacrebleu", "scipy",
          "matplotlib", "tensorboard", "common.eval", "common.data.corpus", "common.models.hub")
#: the fairseq NMT recipe (common/nmt): its user-dir plugin, sacreMoses for BLEU on Moses tokens (nmt/bleu.py)
NMT = ("fairseq", "common.nmt.fairseq_plugin", "sacremoses")
#: the experiments that run the NMT recipe
BY_EXPERIMENT: dict[str, tuple[str, ...]] = {"hictl": NMT, LEADERBOARD: NMT}


def modules(experiment: str) -> list[str]:
    """The modules ``experiment``'s jobs import: a paper's also its ``papers.<name>.train`` and ``.report``."""
    paper = [] if experiment == LEADERBOARD else [f"papers.{experiment}.train", f"papers.{experiment}.report"]
    return [*COMMON, *BY_EXPERIMENT.get(experiment, ()), *paper]


def missing(names: list[str]) -> list[str]:
    """``"<module>: <error>"`` for each of ``names`` that fails to import (any exception: a broken install counts)."""
    out = []
    for name in names:
        try:
            importlib.import_module(name)
        except Exception as exc:  # noqa: BLE001 -- any failure to import is what this reports
            out.append(f"{name}: {type(exc).__name__}: {exc}")
    return out
