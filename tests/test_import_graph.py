"""The import graph of ``common/`` and ``papers/`` (every ``import`` statement, those inside functions included):
no module imports itself through others, and no module imports from a higher layer than its own.

The layers, lowest first (a module belongs to the longest prefix listed):

0. ``common.io``, ``common.finite``, ``common.languages``, ``common.registry``, ``common.records``, ``common.rss`` --
   files, errors naming file and line; non-finite numbers found and named; language codes and sets; name
   registries; typed JSON records and their schemas; a process's peak resident memory;
1. ``common.config``, ``common.precision``, ``common.distributed``, ``common.requirements`` -- configs and their
   rules, process groups, the modules an experiment's jobs import;
2. ``common.data`` -- reading, downloading and preparing corpora and evaluation sets;
3. ``common.models``, ``common.losses`` -- encoders, tokenizers, embedders; objectives;
4. ``common.training``, ``common.eval``, ``common.nmt``, ``common.runs``, ``common.targets`` -- what runs a model:
   training, evaluation protocols, NMT fine-tuning, the run registry and the workflow targets it is split into;
5. ``common.report``, ``common.census``, ``common.rehearsal`` -- what reads runs: tables and claims, the census,
   the rehearsal's mirror and acceptance;
6. ``common.workflow`` -- the Snakemake rules' helpers and the preflight;
7. ``common.leaderboard``, ``papers`` -- the experiments, each a declaration on all of the above.

Task and corpus modules register themselves; the registries find them by package (importlib), so those lookups
are not arrows here.
"""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LAYERS = [("common.io", "common.finite", "common.languages", "common.registry", "common.records", "common.rss"),
          ("common.config", "common.precision", "common.distributed", "common.requirements", "common.measurements"),
          ("common.data",),
          ("common.models", "common.losses"),
          ("common.training", "common.eval", "common.nmt", "common.runs", "common.targets"),
          ("common.report", "common.census", "common.rehearsal"),
          ("common.workflow",),
          ("common.leaderboard", "papers")]


def modules() -> dict[str, Path]:
    out = {}
    for path in [*ROOT.glob("common/**/*.py"), *ROOT.glob("papers/**/*.py")]:
        name = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        out[name] = path
    return out


def graph() -> dict[str, set[str]]:
    """Module -> the modules of this repository it imports (a name resolved to its longest known module)."""
    mods = modules()

    def resolve(name: str) -> str | None:
        while name and name not in mods:
            name = name.rpartition(".")[0]
        return name or None

    edges: dict[str, set[str]] = {m: set() for m in mods}
    for m, path in mods.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets = [resolve(f"{node.module}.{a.name}") or resolve(node.module) for a in node.names]
            elif isinstance(node, ast.Import):
                targets = [resolve(a.name) for a in node.names]
            else:
                continue
            edges[m] |= {t for t in targets if t and t != m}
    return edges


def layer(module: str) -> int:
    best = max(((len(p), i) for i, names in enumerate(LAYERS) for p in names
                if module == p or module.startswith(p + ".")), default=None)
    if best is None:
        raise AssertionError(f"{module} is in no layer: add its package to LAYERS")
    return best[1]


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def test_no_import_cycles():
    assert cycles(graph()) == []


def test_no_import_from_a_higher_layer():
    upward = sorted(f"{m} ({layer(m)}) -> {t} ({layer(t)})" for m, ts in graph().items() for t in ts
                    if layer(t) > layer(m))
    assert upward == []


def test_the_checks_catch_a_cycle_and_an_upward_arrow():
    edges = {"common.data.a": {"common.data.b"}, "common.data.b": {"common.data.a", "common.eval.x"},
             "common.eval.x": set()}
    assert cycles(edges) == [["common.data.a", "common.data.b"]]
    assert layer("common.data.b") < layer("common.eval.x") and layer("papers.dap.model") == len(LAYERS) - 1
