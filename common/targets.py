"""Workflow targets of one scale: ``papers/<p>/all`` and, where the scale's config splits its work, more.

A scale whose runs would not fit one budget (mini: 4 hours on 2 cores per target) names, under ``targets`` in its
config, outputs that get a target of their own::

    targets: {section5: [figure1_tokens, table5_direction, figure3_rho, figure4_depth]}

``snakemake papers/dap/section5`` then trains and evaluates what those outputs read and writes them;
``papers/dap/all`` does the rest. A run that both read (DAP's main run on the ablation seed) belongs to both, so
each target runs alone from a fresh checkout; run both in one command to share it. The run registry tags each
evaluation with its target (:meth:`common.runs.RunRegistry.add`); the report writes one target's outputs
(``--target``, :func:`common.report.cli.main`).

An experiment's NMT tables, a report of their own, are target ``papers/<p>/nmt`` where the config's
``nmt.own_target`` says so (HICTL at mini), and part of ``papers/<p>/all`` otherwise (:func:`extra_targets`); the
leaderboard's NMT column likewise, ``leaderboard/nmt`` (common/leaderboard/workflow/Snakefile).
"""
from __future__ import annotations

from typing import Any

from common.runs import MAIN_TARGET

NMT_TARGET = "nmt"  # an experiment's NMT tables where its config's ``nmt.own_target`` makes them a target of their own


def nmt_own_target(cfg: dict[str, Any]) -> bool:
    """Whether the config's NMT tables are a target of their own, ``papers/<p>/nmt`` or ``leaderboard/nmt``
    (``nmt.own_target``)."""
    return bool((cfg.get("nmt") or {}).get("own_target"))


def index_target(cfg: dict[str, Any], nmt_report: bool) -> str:
    """The target named in a report folder's index: ``nmt`` for the NMT report where it is a target of its own."""
    return NMT_TARGET if nmt_report and nmt_own_target(cfg) else MAIN_TARGET


def split_targets(cfg: dict[str, Any]) -> dict[str, list[str]]:
    """The config's targets besides the main one: name -> the outputs (tables and figures) it writes."""
    targets: dict[str, list[str]] = cfg.get("targets") or {}
    owner: dict[str, str] = {}
    for name, outputs in targets.items():
        if name == MAIN_TARGET:
            raise ValueError(f"targets: {MAIN_TARGET!r} is the main target, which writes every output not named here")
        for output in outputs:
            if output in owner:
                raise ValueError(f"targets: {output!r} is in both {owner[output]!r} and {name!r}")
            owner[output] = name
    return {name: list(outputs) for name, outputs in targets.items()}


def extra_targets(cfg: dict[str, Any]) -> list[str]:
    """Every target of a scale besides the main one: the config's ``targets`` and, where ``nmt.own_target``, the NMT
    tables' (``papers/<p>/nmt``)."""
    split = split_targets(cfg)
    if not nmt_own_target(cfg):
        return list(split)
    if NMT_TARGET in split:
        raise ValueError(f"targets: {NMT_TARGET!r} is the NMT tables' target where nmt.own_target is set")
    return [*split, NMT_TARGET]


def target_of(cfg: dict[str, Any], output: str) -> str:
    """The workflow target that writes ``output`` (a table or figure name) at this scale."""
    return next((name for name, outputs in split_targets(cfg).items() if output in outputs), MAIN_TARGET)


def outputs_of(cfg: dict[str, Any], target: str, outputs: list[str]) -> list[str]:
    """Those of ``outputs`` (every table or figure of the scale, in order) that ``target`` writes."""
    return [o for o in outputs if target_of(cfg, o) == target]
