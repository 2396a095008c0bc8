"""The leaderboard table and figure: methods x tasks, each cell the task's main score.

Every method was trained on the same corpus, from the same initial encoder, with the same steps,
batch and seeds (``config/<scale>.yaml``), and scored by the same registered tasks, so a column
compares methods on equal terms. A cell is the mean over seeds of the task's main score, its 95 % interval
over seeds and test items (:func:`common.report.claims.interval`, the claims tables' procedure) and the per-seed
values; "n/a" marks a task that does not apply to a method's model (XNLI fine-tunes one shared encoder, which
MoCo-BERT's language-specific pair is not). Where the config has an NMT column (:mod:`common.leaderboard.nmt`), a
last column gives each method's BLEU after HICTL's two-stage NMT fine-tuning, and a last row the random-init
Transformer's.

Outside models (the workflow's ``models``, :mod:`common.leaderboard.outside`) are untrained rows: each task's main
score with its interval over the test items (one model, no seeds), the NMT column not run; a note says where each
one's weights came from, and each one's results are also exported in MTEB's results layout (``mteb/`` beside the
table: :mod:`common.eval.mteb_export`). With ``--trained-from <folder>`` the trained rows are not read from the run
folder but from that folder's table as it stands (``leaderboard.csv``, its notes from ``leaderboard.md``): the
outside rows join the committed table without its 2 h 53 min of training (``snakemake leaderboard/models``). With
``--rows`` too, the rows it names are read from the run folder and every other row, outside ones included, from the
committed table: a method's rows regenerated alone (``snakemake leaderboard/rows``).

The methods the config's ``readout`` lists get the readout check (:mod:`common.eval.readout`) on every seed's model;
a note gives its numbers, beside the config's ``departures`` (a method's settings where the leaderboard's start
differs from its paper's).
"""
from __future__ import annotations

import argparse
import importlib
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from common.config import PAPER_SCALES, ROOT, load_leaderboard_config, load_yaml
from common.eval import mteb_export
from common.eval.results import read_result
from common.eval.tasks import get_task
from common.io import read_json
from common.leaderboard import nmt as lbnmt
from common.leaderboard import outside as lbout
from common.leaderboard.committed import (
    DEPARTURES,
    NOT_RUN,
    OUTSIDE_NOTE,
    READOUT_NOTE,
    ROW_ALONE,
    TABLE,
    TRAINED_ROWS,
    Cell,
    Scores,
    committed_table,
    kept_notes,
    label,
)
from common.leaderboard.methods import METHODS, method, registry
from common.nmt import describe
from common.nmt import plan as nmtplan
from common.report.claims import Difference, interval, item_metric
from common.report.cli import Figure, main
from common.report.context import ReportContext
from common.report.figures import plt, save
from common.report.specs import TableSpec
from common.report.tables import Table, leakage_note
from common.targets import NMT_TARGET, nmt_own_target


def cell(task: str, seeds: list[dict[str, Any]]) -> Difference:
    """The main score of ``task`` over the seeds' results (``scores`` of each JSON) with its interval. The
    item-level metric must reproduce every seed's main score, or the interval would describe another number;
    the tolerance admits the evaluators' float32 sums, not another quantity (an STS aggregation other than
    wmean, another split)."""
    metrics = [item_metric(get_task(task).type, s) for s in seeds]
    for i, (m, s) in enumerate(zip(metrics, seeds)):
        if abs(m.value() - s["main_score"]) > 1e-3:
            raise ValueError(f"{task}: the item-level metric of seed index {i} gives {m.value()}, its main score "
                             f"is {s['main_score']}")
    return interval(metrics)


# the seeds a claim on runs under 10 minutes needs (common/report/claims.py; MoCo-BERT's mini claims have them);
# the leaderboard has fewer for its budget, so it states no verdict and its notes say why
CLAIM_MIN_SEEDS = 5


def nmt_column(nmt: dict[str, Any]) -> str:
    t = lbnmt.column(nmt)
    return f"nmt@{t.pair}.{t.test}"


def columns(ctx: ReportContext, nmt: dict[str, Any] | None) -> list[str]:
    return [*ctx.cfg["tasks"], *([nmt_column(nmt)] if nmt else [])]


def nmt_results(ctx: ReportContext, nmt: dict[str, Any] | None,
                rows: list[str] | None = None) -> dict[str, dict[str, Any]]:
    """The NMT column's result file of each row that has a run (the config's systems; of those, ``rows`` where
    given), read once for the table's cells and its scoring note."""
    if not nmt:
        return {}
    return {row: describe.read_result(nmt, lbnmt.translation(nmt, row).path(str(ctx.results)))
            for row in nmt["settings"][lbnmt.SETTING]["systems"] if rows is None or row in rows}


def scores(ctx: ReportContext, nmt: dict[str, Any] | None, runs: dict[str, dict[str, Any]]) -> Scores:
    """row (method, or the NMT column's random-init model) -> column -> cell; ``NOT_RUN`` where a row has no run.
    ``runs``: the NMT result files (:func:`nmt_results`)."""
    out: Scores = {}
    inits = ctx.store.registry.inits()  # none where no row is regenerated (--nmt-column)
    for m in ctx.cfg["methods"]:
        out[m] = {}
        for t in ctx.cfg["tasks"]:
            if not get_task(t).applies_to(method(m).embedder):
                out[m][t] = None
                continue
            seeds = ctx.store.scores(m, t, inits[0])
            out[m][t] = cell(t, seeds), [s["main_score"] for s in seeds]
    if nmt:
        col = nmt_column(nmt)
        if nmtplan.RANDOM in runs:
            out[nmtplan.RANDOM] = {t: NOT_RUN for t in ctx.cfg["tasks"]}
        for row in out:
            result = runs.get(row)
            out[row][col] = NOT_RUN if result is None else (bleu_cell(result), [result["main_score"]])
    return out


def bleu_cell(result: dict[str, Any]) -> Difference:
    """One NMT run's BLEU with its interval over the test sentences (one seed: see common/leaderboard/nmt.py)."""
    metric = item_metric("translation", result)
    if abs(metric.value() - result["main_score"]) > 1e-3:
        raise ValueError(f"{result['checkpoint']}: BLEU from the stored sentence statistics is {metric.value()}, the "
                         f"main score {result['main_score']}")
    return interval([metric])


def scoring(runs: dict[str, dict[str, Any]]) -> str:
    """How the NMT column was scored: each sacreBLEU signature (its tokenizer follows the target language, its case
    the benchmark: common/nmt/bleu.py) and the case's reason, as the runs' result files (``runs``) record them."""
    sigs: dict[str, list[str]] = {}
    cases: set[str] = set()
    for row, result in runs.items():
        sigs.setdefault(result["sacrebleu"]["signature"], []).append(label(row))
        cases.add(result.get("case", "cased"))
    text = "sacreBLEU signature" + ("s: " if len(sigs) > 1 else ": ")
    text += "; ".join(sig + (f" ({', '.join(rows)})" if len(sigs) > 1 else "") for sig, rows in sigs.items())
    return text + "; case: " + "; ".join(sorted(cases)) + "."


PaperRow = tuple[str, str, str, dict[str, float]]  # (the paper's source, its row, its basis, task -> its number)


def paper_rows(ctx: ReportContext, rows: list[str]) -> dict[str, PaperRow]:
    """The paper's own numbers for each method row whose paper reports that method on this leaderboard's basis (its
    encoder, and per task the paper's test data). A paper opts in with ``leaderboard_reported(reported, init,
    variant, manifest)`` in ``papers/<p>/report.py``, as papers/dap/report.py does for its methods from mBERT or
    XLM-R; the other papers report their methods on encoders, corpora or task sets this leaderboard does not use.
    Only at scale 'paper': the rehearsal runs the same path on tiny stand-ins of the paper's encoder."""
    out: dict[str, PaperRow] = {}
    if ctx.scale != "paper":
        return out
    init = next(iter(ctx.cfg["encoders"]))
    reported: dict[str, dict[str, Any]] = {}  # paper -> its reported.yaml, read once
    for row in rows:
        m = METHODS.get(row)
        if m is None:  # the NMT column's random-init row
            continue
        hook = getattr(importlib.import_module(f"papers.{m.paper}.report"), "leaderboard_reported", None)
        if hook is None:
            continue
        if m.paper not in reported:
            reported[m.paper] = load_yaml(ROOT / "papers" / m.paper / "reported.yaml")
        found = hook(reported[m.paper], init, m.variant, ctx.manifest)
        if found:
            out[row] = (reported[m.paper]["source"], *found)
    return out


# common.eval.readout.READOUTS, in the note's order (that module imports torch, which loading the workflow must not;
# its results files list them sorted)
READOUTS = ("saved", "pooled", "centred")


def readout_notes(ctx: ReportContext, methods: list[str]) -> list[str]:
    """One note per method of ``methods`` that the config's ``readout`` lists: the readout check's numbers
    (``<results>/readout/<method>.json``), seed by seed."""
    notes = []
    for m in [m for m in ctx.cfg.get("readout", []) if m in methods and m in ctx.cfg["methods"]]:
        models = read_json(ctx.results / "readout" / f"{m}.json")
        seeds = []
        for seed, r in zip(seeds_of(ctx, m), models, strict=True):
            s = r["summary"]
            ratios = ", ".join(f"{x:.1f}" for x in r["head_singular_ratio"])
            seeds.append(f"seed {seed}: " + " / ".join(f"{k} {s[k]['both']:.1f} ({s[k]['mean_cosine']:.2f})"
                                                      for k in READOUTS)
                         + (f", head {ratios}" if ratios else ", no head"))
        notes.append(f"{READOUT_NOTE}, {label(m)} (python -m common.eval.readout, fp32; Tatoeba accuracy, mean over "
                     "the languages, and in brackets the mean cosine of 1,000 random non-parallel pairs, of the "
                     "vectors as saved / the pooled backbone without the head / the saved vectors mean-centred per "
                     "set; the head's top over median singular value; a `centred` above `saved` shows a shared "
                     "direction hiding the match, a `pooled` above it the head, neither the backbone losing it): "
                     + "; ".join(seeds) + ".")
    return notes


def seeds_of(ctx: ReportContext, m: str) -> list[int]:
    return [r.seed for r in ctx.store.registry.runs() if r.method == m]


def outside_records(ctx: ReportContext) -> dict[str, dict[str, dict[str, Any]]]:
    """Outside row -> task -> its results JSON (``<results>/outside/eval/<name>/<task>.json``)."""
    out = {}
    for m in ctx.cfg.get("outside", []):
        if m.name in METHODS or m.name == nmtplan.RANDOM:
            raise ValueError(f"outside model {m.name!r} has the name of a leaderboard row")
        out[m.name] = {t: asdict(read_result(ctx.results / "outside" / "eval" / m.name / f"{t}.json"))
                       for t in ctx.cfg["tasks"]}
    return out


def outside_scores(ctx: ReportContext, nmt: dict[str, Any] | None,
                   records: dict[str, dict[str, dict[str, Any]]]) -> Scores:
    """Each outside row's cells: a task's main score with its interval over the test items; no NMT run."""
    out: Scores = {}
    for name, by_task in records.items():
        out[name] = {t: (cell(t, [r["scores"]]), [r["scores"]["main_score"]]) for t, r in by_task.items()}
        if nmt:
            out[name][nmt_column(nmt)] = NOT_RUN
    return out


def outside_note(ctx: ReportContext, records: dict[str, dict[str, dict[str, Any]]]) -> str:
    origins = "; ".join(f"{m.name}: {lbout.origin(m, next(iter(records[m.name].values()))['model'])}"
                        for m in ctx.cfg.get("outside", []))
    return ("Outside models: untrained rows (common/leaderboard/outside.py), scored by the same tasks on the "
            "evaluation-only corpus (the same evaluation files), each sentence truncated at "
            f"{ctx.cfg['eval']['max_length']} tokens as for every method; their interval is over the test items only "
            "(one model, no seeds); their results in MTEB's layout: mteb/. Weights: " + origins + ".")


def export_outside(ctx: ReportContext, records: dict[str, dict[str, dict[str, Any]]], out: Path) -> list[Path]:
    """Each outside row's results in MTEB's results layout under ``<out>/mteb``."""
    written: list[Path] = []
    for m in ctx.cfg.get("outside", []):
        recs = list(records[m.name].values())
        model = {k: v for k, v in recs[0]["model"].items() if k != "path"}  # no machine's paths in the export
        written += mteb_export.export(out / "mteb", m.name, lbout.revision(m), recs,
                                      {"model": model, "origin": lbout.origin(m, recs[0]["model"]),
                                       "scale": ctx.scale, "experiment": "leaderboard"})
    return written


def rendered(value: Cell | str) -> list[str | float | None]:
    """A cell's three CSV fields: the mean, "[lo, hi]" and the per-seed values; "n/a" or NOT_RUN in all three."""
    if value is None or isinstance(value, str):  # not applicable, or NOT_RUN
        return ["n/a" if value is None else NOT_RUN] * 3
    d, per_seed = value
    return [d.mean, f"[{d.lo:.1f}, {d.hi:.1f}]", " / ".join(f"{x:.1f}" for x in per_seed)]


# two of the NMT column's notes (nmt_notes), by which a committed table's are told from its others (is_nmt_note)
SHARED_RUN = "no NMT run of its own; its backbone is the initial encoder unchanged, whose run is the first row's."
DECODING_CAP = "Decoding: outputs capped at"


def nmt_notes(nmt: dict[str, Any], rows: list[str], runs: dict[str, dict[str, Any]]) -> list[str]:
    """How the NMT column was made: the recipe, its updates and target side, the scoring of ``runs`` (the rows'
    result files), which of ``rows`` share another's run, and the decoding cap."""
    t = lbnmt.column(nmt)
    flavour = "tokenized, multi-bleu" if nmtplan.tokenized(nmt, t) else "sacreBLEU"
    notes = [f"{nmt_column(nmt)}: BLEU ({flavour}) on "
             f"{t.test} {t.pair} after HICTL's two-stage fine-tuning (section 3.2 / 4.2: stage 1 encoder "
             f"frozen, stage 2 all parameters) of each method's seed-{nmt['encoder_seed']} encoder; one NMT "
             "run per method, its interval over the test sentences only. "
             + describe.updates(nmt, lbnmt.SETTING) + " " + describe.target_dictionary(nmt)
             + f" {NOT_RUN}: no NMT run for the method at this scale (the config's systems). " + scoring(runs)]
    shared = [label(m) for m in rows if m in METHODS and not METHODS[m].nmt]
    if shared:
        notes.append(f"{', '.join(shared)}: {SHARED_RUN}")
    if (cap := nmtplan.max_len(nmt)) != nmtplan.FAIRSEQ_MAX_LEN:
        notes.append(f"{DECODING_CAP} {cap[0]:g} x source length + {cap[1]:g} tokens (nmt.max_len; fairseq's "
                     "default is 200 tokens).")
    return notes


def nmt_report(ctx: ReportContext) -> Path:
    """The NMT report's folder where the NMT column is a target of its own (``nmt/`` beside the table)."""
    return Path(ctx.cfg["out"]) / lbnmt.REPORT_DIR


def nmt_reported(ctx: ReportContext) -> bool:
    """Whether the NMT report's table exists (leaderboard/nmt has run)."""
    return (nmt_report(ctx) / f"{lbnmt.REPORT_TABLE}.csv").exists()


def with_reported_nmt(ctx: ReportContext, nmt: dict[str, Any], values: Scores) -> Scores:
    """Where the NMT column is a target of its own (``nmt.own_target``): every row's NMT cell, the random-init row's
    included, from the NMT report's table (:mod:`common.leaderboard.report_nmt`); NOT_RUN for a row it lacks, and
    for every row before that target has run."""
    col, folder = nmt_column(nmt), nmt_report(ctx)
    kept: Scores = {}
    if nmt_reported(ctx):
        kept, _ = committed_table(folder, [col], name=lbnmt.REPORT_TABLE)
    out = {row: {**cells, col: kept.get(row, {}).get(col, NOT_RUN)} for row, cells in values.items()
           if row != nmtplan.RANDOM}
    if nmtplan.RANDOM in kept:
        out[nmtplan.RANDOM] = {**{t: NOT_RUN for t in ctx.cfg["tasks"]}, col: kept[nmtplan.RANDOM][col]}
    return in_config_order(out, ctx.cfg.get("all_methods", ctx.cfg["methods"]))


def reported_nmt_note(ctx: ReportContext, nmt: dict[str, Any]) -> str:
    """The NMT column's note where it is a target of its own: where its cells come from and how to make them."""
    command = f"`snakemake leaderboard/{NMT_TARGET} --cores 2 --config scale={ctx.scale}`"
    if not nmt_reported(ctx):
        return f"{nmt_column(nmt)}: not run yet; at this scale it is a workflow target of its own ({command})."
    return (f"{nmt_column(nmt)}: BLEU after HICTL's two-stage NMT fine-tuning of each method's "
            f"seed-{nmt['encoder_seed']} encoder, from the table beside this one ({lbnmt.REPORT_DIR}/"
            f"{lbnmt.REPORT_TABLE}.md), whose notes say how each model was trained and scored; at this scale it is a "
            f"workflow target of its own ({command}).")


def is_nmt_note(note: str, nmt: dict[str, Any]) -> bool:
    """Whether a note of a committed table is one of the NMT column's (:func:`nmt_notes`, :func:`reported_nmt_note`)."""
    return note.startswith((f"{nmt_column(nmt)}: ", DECODING_CAP)) or note.endswith(SHARED_RUN)


def committed_nmt_notes(notes: list[str], column_notes: list[str], nmt: dict[str, Any]) -> list[str]:
    """``notes`` with the NMT column's notes in them replaced by those of ``column_notes`` (where the first of them
    stood, or at the end)."""
    at = next((i for i, n in enumerate(notes) if is_nmt_note(n, nmt)), len(notes))
    rest = [n for n in notes if not is_nmt_note(n, nmt)]
    return [*rest[:at], *(n for n in column_notes if is_nmt_note(n, nmt)), *rest[at:]]


def table(ctx: ReportContext, values: Scores, nmt: dict[str, Any] | None, runs: dict[str, dict[str, Any]]) -> Table:
    cols = columns(ctx, nmt)
    papers = paper_rows(ctx, list(values))
    rows: list[list[str | float | None]] = []
    for m, per_col in values.items():
        rows.append([label(m), *(x for c in cols for x in rendered(per_col[c]))])
        if m in papers:
            source, name, _, numbers = papers[m]
            rows.append([f"paper: {name} ({source})", *[x for c in cols for x in (numbers.get(c), None, None)]])
    tasks = ctx.cfg["tasks"]
    notes = [f"Scale '{ctx.scale}': {ctx.cfg['description'].strip()}",
             f"Every method: encoder '{next(iter(ctx.cfg['encoders']))}', {ctx.cfg['training']['max_steps']} steps x "
             f"{ctx.cfg['training']['global_batch_size']} pairs, seeds {ctx.cfg['seeds']}, the same corpus. "
             + leakage_note(ctx.manifest),
             "Main scores: " + "; ".join(f"{t} = {get_task(t).main_score}" for t in tasks) + ".",
             "95% CI: Student t over the seeds plus a cluster bootstrap over the test items (1000 replicates), "
             "as in the papers' claims tables (common/report/claims.py); two methods whose intervals overlap may "
             "still differ (a paired comparison is tighter).",
             "No verdicts: the leaderboard describes, it does not rank; each paper's claims table makes its paired "
             "comparisons." + ("" if ctx.scale in PAPER_SCALES else
                               f" At this scale its runs take minutes, and a claim on runs that short needs at least "
                               f"{CLAIM_MIN_SEEDS} seeds (here {len(ctx.cfg['seeds'])}).")]
    if papers:
        bases = "; ".join(dict.fromkeys(basis for _, _, basis, _ in papers.values()))
        notes.append("'paper:' rows: the paper's own number where it reports the method on this leaderboard's basis "
                     f"(its encoder and, per task, its test data; papers/<p>/reported.yaml): {bases}; '–' where the "
                     "paper's basis differs. A method without one: its paper reports it on another encoder, corpus or "
                     "task set, and its numbers stand beside ours in that paper's own tables.")
    if any(c is None for per_col in values.values() for c in per_col.values()):
        notes.append("n/a: the task needs one shared encoder to fine-tune; the method's model has language-specific "
                     "encoders.")
    if nmt:
        notes += [reported_nmt_note(ctx, nmt)] if nmt_own_target(ctx.cfg) else nmt_notes(nmt, list(values), runs)
    header = ["method"] + [c for t in cols for c in (t, f"{t} 95% CI", f"{t} per seed")]
    return Table(TABLE, f"Cross-paper leaderboard, scale '{ctx.scale}' (main score, mean over seeds)", header,
                 rows, notes)


def figure(ctx: ReportContext, values: Scores, nmt: dict[str, Any] | None, out: Path) -> list[Path]:
    cols, rows = columns(ctx, nmt), list(values)
    fig, ax = plt.subplots(figsize=(max(6, 1.3 * len(cols) * len(rows) / 2), 3.4))
    width = 0.8 / len(rows)
    for i, m in enumerate(rows):
        xs = np.arange(len(cols)) + (i - (len(rows) - 1) / 2) * width
        first = True
        for x, c in zip(xs, cols):
            value = values[m][c]
            if value is None or isinstance(value, str):  # not applicable, or NOT_RUN
                continue
            d, per_seed = value
            ax.bar(x, d.mean, width, color=f"C{i}", label=label(m) if first else None)
            first = False
            ax.errorbar(x, d.mean, yerr=[[d.mean - d.lo], [d.hi - d.mean]], fmt="none", ecolor="k", capsize=2, lw=0.8)
            ax.plot([x] * len(per_seed), per_seed, "k.", markersize=3)
    ax.set_xticks(np.arange(len(cols)), cols, fontsize=8)
    ax.set_ylabel("main score" + (" (BLEU for nmt@)" if nmt else ""))
    ax.set_title(f"Leaderboard, scale '{ctx.scale}': bars = mean over seeds, whiskers = 95 % CI, "
                 "dots = seeds", fontsize=9)
    ax.legend(fontsize=7)
    ax.grid(axis="y", alpha=0.3)
    return save(fig, out / "leaderboard")


def in_config_order(values: Scores, order: list[str]) -> Scores:
    """The rows in the config's method order, then the NMT column's random-init row, then the outside rows."""
    first = [m for m in order if m in values] + ([nmtplan.RANDOM] if nmtplan.RANDOM in values else [])
    return {m: values[m] for m in [*first, *(m for m in values if m not in first)]}


def build(ctx: ReportContext) -> tuple[list[Table | TableSpec], dict[str, Figure]]:
    """Three modes: the whole table from the run folder; ``trained_from`` (``leaderboard/models``): the committed
    table's trained rows and notes, the outside rows fresh; with ``rows`` too (``leaderboard/rows``): those methods'
    rows and notes fresh, every other row and its notes kept (no rows: ``leaderboard/nmt``, every row kept). Where
    the NMT column is a target of its own, the whole table takes it from the NMT report (:func:`with_reported_nmt`),
    and so do the other modes once that report exists; before, they keep the column as the committed table has it."""
    trained_from, rows = ctx.cfg.get("trained_from"), ctx.cfg.get("rows")
    order = ctx.cfg.get("all_methods", ctx.cfg["methods"])
    # --rows: the whole table's NMT column (the rows' systems have runs, the others' cells are kept)
    nmt = lbnmt.nmt_config({**ctx.cfg, "methods": order} if rows is not None else ctx.cfg)
    own = bool(nmt) and nmt_own_target(ctx.cfg)  # the NMT runs are another target's: no result file is read here
    reported = own and nmt_reported(ctx)
    records = outside_records(ctx)
    items = ctx.cfg.get("departures", [])
    departures = [f"{DEPARTURES} " + " ".join(f"({i}) {' '.join(d.split())}" for i, d in enumerate(items, 1))
                  ] if items else []
    if rows is not None and trained_from:
        runs = {} if own else nmt_results(ctx, nmt, rows)
        kept, committed = committed_table(Path(trained_from), columns(ctx, nmt), outside=True)
        values = in_config_order({**kept, **scores(ctx, nmt, runs)}, order)
        values = with_reported_nmt(ctx, nmt, values) if reported and nmt else values
        t = table(ctx, values, nmt, runs)
        if nmt and not runs and not reported:  # no NMT run read here: the column's notes as the table had them
            t.notes = committed_nmt_notes(t.notes, committed, nmt)
        keep = kept_notes(committed, rows)
        command = ctx.cfg.get("report_command")
        t.notes += [*departures, *(n for n in keep if n.startswith(f"{READOUT_NOTE}, ")),
                    *readout_notes(ctx, rows), *(n for n in keep if n.startswith(ROW_ALONE)),
                    *(f"{ROW_ALONE} {label(m)} (`{command}`); every other row as the table had it." for m in rows),
                    *(n for n in keep if n.startswith((TRAINED_ROWS, OUTSIDE_NOTE)))]
    elif trained_from:  # the trained rows as the committed table has them (no training run here)
        runs = {}
        values, committed = committed_table(Path(trained_from), columns(ctx, nmt))
        values = {**in_config_order(values, order), **outside_scores(ctx, nmt, records)}
        values = with_reported_nmt(ctx, nmt, values) if reported and nmt else values
        t = table(ctx, values, nmt, runs)
        if reported and nmt:  # the column's notes are the NMT report's now
            committed = committed_nmt_notes(committed, [reported_nmt_note(ctx, nmt)], nmt)
        t.notes = [*(n for n in committed if not n.startswith((TRAINED_ROWS, OUTSIDE_NOTE, DEPARTURES))),
                   *departures,
                   f"{TRAINED_ROWS} as this folder's table had them (`snakemake leaderboard/all`, and `snakemake "
                   "leaderboard/rows` for the rows the notes name) before the outside rows were added (`snakemake "
                   "leaderboard/models`).", *([outside_note(ctx, records)] if records else [])]
    else:
        runs = {} if own else nmt_results(ctx, nmt)
        values = {**scores(ctx, nmt, runs), **outside_scores(ctx, nmt, records)}
        values = with_reported_nmt(ctx, nmt, values) if own and nmt else values
        t = table(ctx, values, nmt, runs)
        t.notes += [*departures, *readout_notes(ctx, ctx.cfg["methods"])]
        if records:
            t.notes.append(outside_note(ctx, records))

    def draw(out: Path) -> list[Path]:
        return [*figure(ctx, values, nmt, out), *export_outside(ctx, records, out)]

    return [t], {"leaderboard": draw}


def options(p: argparse.ArgumentParser) -> None:
    for key in ("methods", "tasks", "seeds"):
        p.add_argument(f"--{key}", default=None, help=f"comma-separated {key} (the workflow's, when it restricts them)")
    p.add_argument("--models", default=None, help="comma-separated outside models (the workflow's models)")
    p.add_argument("--trained-from", default=None,
                   help="a folder whose leaderboard table gives the trained rows (its leaderboard.csv and .md)")
    p.add_argument("--rows", action="store_true",
                   help="with --trained-from: the methods' rows from this run, every other row from that table")
    p.add_argument("--nmt-column", action="store_true",
                   help="with --trained-from: every row from that table, the NMT column from the NMT report beside "
                        "it (leaderboard/nmt, where the config's nmt.own_target makes the column a target of its own)")


def adjust(cfg: dict[str, Any], a: argparse.Namespace) -> None:
    cfg["all_methods"] = list(cfg["methods"])  # the table's row order, whatever --methods restricts
    shared = {"tasks": list(cfg["tasks"]), "seeds": list(cfg["seeds"])}
    for key in ("methods", "tasks"):
        if getattr(a, key):
            cfg[key] = getattr(a, key).split(",")
    if a.tasks and not a.rows:  # --rows: the table's NMT column stays, whether or not the rows have NMT runs
        lbnmt.restrict_nmt(cfg)
    elif a.tasks:
        cfg["tasks"] = [t for t in cfg["tasks"] if t != lbnmt.NMT_TASK]
    if a.seeds:
        cfg["seeds"] = [int(s) for s in a.seeds.split(",")]
    cfg["outside"] = lbout.outside_models(cfg, a.models.split(",") if a.models else [])
    cfg["trained_from"] = a.trained_from
    cfg["out"] = a.out  # where the NMT report is, beside the table (with_reported_nmt)
    if a.nmt_column:
        if not a.trained_from or a.rows or a.models or not (cfg.get("nmt") and nmt_own_target(cfg)):
            raise SystemExit("--nmt-column needs --trained-from (the table to keep), no --rows or --models, and a "
                             "config whose NMT column is a target of its own (nmt.own_target)")
        if cfg["methods"] != cfg["all_methods"] or {"tasks": cfg["tasks"], "seeds": cfg["seeds"]} != shared:
            raise SystemExit("--nmt-column rewrites one column of the whole table: the table's methods, tasks and "
                             f"seeds ({cfg['all_methods']}, {shared}), not a restriction")
        cfg["rows"], cfg["methods"] = [], []  # no row is regenerated: each keeps its cells, the NMT column is replaced
        cfg["report_command"] = f"snakemake leaderboard/{NMT_TARGET} --cores 2 --config scale={cfg['scale']}"
    if a.rows:
        if not a.trained_from or not a.methods or a.models:
            raise SystemExit("--rows needs --trained-from (the table to keep) and --methods (the rows to regenerate), "
                             "and no --models (leaderboard/models rescores the outside rows)")
        now = {"tasks": cfg["tasks"], "seeds": cfg["seeds"]}
        if now != shared:
            raise SystemExit(f"--rows: the regenerated rows must have the table's columns and seeds {shared}, not "
                             f"{now}: restrict the methods only")
        cfg["rows"] = list(cfg["methods"])
        methods = ", ".join(cfg["rows"])
        cfg["report_command"] = (f"snakemake leaderboard/rows --cores 2 --config scale={cfg['scale']} "
                                 f"leaderboard_methods='[{methods}]'")
    if a.models:
        models = ", ".join(f'"{m}"' for m in a.models.split(","))
        cfg["report_command"] = (f"snakemake {'leaderboard/models' if a.trained_from else 'leaderboard/all'} "
                                 f"--cores 2 --config scale={cfg['scale']} models='[{models}]'")


if __name__ == "__main__":
    main("leaderboard", "Leaderboard", load_leaderboard_config, registry, build, None, options=options, adjust=adjust)
