"""Regenerate every HICTL table and figure from the workflow's results, the paper's numbers beside ours.

Outputs in ``figures/hictl/<scale>/``: Table 1 (XTREME overview), Table 2 (comparison rows), Table 3
(ablations), appendix Tables 10-14 (XNLI, PAWS-X, POS, NER, Tatoeba per language), a per-language QA table,
Figure 4 (t-SNE of parallel sentence sets, the initial encoder beside HICTL), a ``claims`` table (Tables 1
and 3, with 95 % intervals over seeds and test items) and ``README.md``. A task without data at a scale keeps the
paper's numbers and says why ours is absent. The machine-translation tables (Tables 4-6) are a report of their own, in
``figures/hictl/<scale>/nmt/`` (:mod:`papers.hictl.report_nmt`): a separate Snakemake rule, so the pre-training
tables do not wait for, or re-run with, the NMT stages.
"""
from __future__ import annotations

from functools import partial
from pathlib import Path

import numpy as np

from common.config import PAPER_SCALES, load_paper_config
from common.report.claim import claims_table
from common.report.cli import main
from common.report.context import ReportContext
from common.report.figures import plt, save
from common.report.results import stat
from common.report.tables import Table, fmt, leakage_note
from papers.hictl.claims import declare
from papers.hictl.names import LABEL
from papers.hictl.runs import FIGURE4, MAIN, registry
from papers.hictl.variants import ABLATIONS, ablations
from papers.hictl.xtreme import COLUMNS, PAPER_BASIS, TTA, columns_for, comparison_basis

HERE = Path(__file__).parent
HEADERS = [c[0] for c in COLUMNS] + ["Avg."]


def basis_note(ctx: ReportContext) -> str:
    """Whether our rows stand on the paper's basis; where not, what differs (like with like)."""
    init, setting = comparison_basis(ctx.cfg)
    pretrained = ctx.cfg["encoders"][init].get("pretrained", "random init")
    differs = [f"setting {setting}"] * (setting != PAPER_BASIS["setting"]) + \
              [f"encoder {pretrained}"] * (pretrained != PAPER_BASIS["pretrained"])
    head = (f"Paper's rows: {PAPER_BASIS['model']}, {PAPER_BASIS['setting']}. Ours: encoder '{init}' ({pretrained}), "
            f"{setting}")
    if not differs:
        return head + ": the paper's basis."
    return (head + f": not the paper's basis ({', '.join(differs)}; this scale runs nothing closer), so read our "
            "rows against each other, not against the paper's numbers.")


def xtreme_average(row: list[float | None]) -> float | None:
    """XTREME's average over its nine tasks as Table 1 computes it: a QA task counts (F1 + EM) / 2 (checked on
    the paper's rows: XLM-R 68.2, HICTL + Hns 74.8). None when a task is missing."""
    present = [v for v in row if v is not None]
    if len(present) < len(row):
        return None
    xnli, paws, pos, ner, xq_f, xq_e, ml_f, ml_e, ty_f, ty_e, bucc, tat = present
    return (xnli + paws + pos + ner + (xq_f + xq_e) / 2 + (ml_f + ml_e) / 2 + (ty_f + ty_e) / 2 + bucc + tat) / 9


def tatoeba_score(scores: dict) -> float:
    """XTREME's 36 languages when all are evaluated (mini and paper scales), else every evaluated language."""
    group = scores["groups"].get("36", {})
    return group["both"] if group.get("both") is not None else scores["main_score"]


def values(ctx: ReportContext, method: str, init: str, task: str, path: str | None,
           seeds: list[int] | None = None) -> list[float] | None:
    if task not in ctx.cfg["hictl"]["tasks"]:
        return None
    scores = ctx.store.scores(method, task, init, seeds)
    return [tatoeba_score(s) if path is None else s[path] for s in scores]


def ours_row(ctx: ReportContext, method: str, init: str, seeds: list[int] | None = None,
             setting: str = "zero-shot") -> list:
    cols = [values(ctx, method, init, task, path, seeds) for _, task, path in columns_for(setting)]
    n = max(len(c) for c in cols if c)
    per_seed = [xtreme_average([c[k] if c else None for c in cols]) for k in range(n)]
    return [None if c is None else stat(c) for c in cols] + [stat(per_seed) if per_seed[0] is not None else None]


QA_CELLS = (4, 5, 6)  # positions of XQuAD, MLQA, TyDiQA in the paper's rows: [F1, EM] (or null)


def paper_row(cells: list) -> list:
    """A row of reported.yaml (QA cells [F1, EM] or null, then the average) as Table 1's columns."""
    out = []
    for k, c in enumerate(cells[:-1]):
        out += c if isinstance(c, list) else ([c, c] if k in QA_CELLS else [c])
    return out + [cells[-1]]



def where(ctx: ReportContext) -> str:
    return (f"Ours: scale '{ctx.scale}' — {ctx.cfg['description'].strip()} Seeds {ctx.cfg['seeds']} (mean ± sd). "
            + leakage_note(ctx.manifest))


def task_note(ctx: ReportContext) -> str:
    ran = set(ctx.cfg["hictl"]["tasks"])
    qa = ctx.manifest.get("qa", {}).get("xquad", {}).get("description")
    not_run = [(h, task) for h, task, _ in COLUMNS if task not in ran]
    # a task whose data the corpus has but the config does not run (the budget), apart from one without data
    skipped = [h for h, task in not_run if task == "qa@xquad" and qa]
    absent = [h for h, _ in not_run if h not in skipped]
    notes = []
    if absent:
        notes.append(f"'–' for ours: no data for {', '.join(dict.fromkeys(h.split()[0] for h in absent))} at this "
                     "scale (PAWS-X, UD POS, WikiANN NER, MLQA, TyDiQA: paper-scale download rules); the Avg. needs "
                     "all nine tasks.")
    if skipped:
        notes.append(f"'–' for ours under XQuAD: the corpus has its data ({qa}), but scale '{ctx.scale}' does not run "
                     f"it: fine-tuning the QA head costs too much CPU for the budget (papers/hictl/config/"
                     f"{ctx.scale}.yaml gives the measurement).")
    elif qa and ctx.scale not in PAPER_SCALES:
        notes.append(f"XQuAD (ours): {qa}; SQuAD v1.1 F1 / EM.")
    notes.append("Zero-shot: fine-tuned on English only; translate-train-all: on English and its machine "
                 "translations (XNLI, PAWS-X, XQuAD, MLQA). POS, NER and TyDiQA-GoldP are fine-tuned as in "
                 "zero-shot in both settings: XTREME has no translated POS or NER data, and its translated "
                 "TyDiQA-GoldP data is not run here, so in translate-train-all those cells set a zero-shot model "
                 "beside the paper's translate-train-all numbers. "
                 "Tatoeba: both directions averaged (LASER's protocol), XTREME's 36 languages when all are present; "
                 "BUCC: ratio margin, k = 4 (XTREME's mining)." + (" BUCC (mini): the BUCC-style benchmark of "
                                                                     "common/data/bucc_mini.py."
                                                                     if ctx.manifest.get("bucc_benchmark") else ""))
    notes.append("Sentence representation for retrieval: r(x) = f(CLS) (section 3.1). The contrastive terms divide "
                 f"cosine similarities by tau = {ctx.cfg['hictl']['temperature']}: the paper writes exp(cos), under "
                 "which the hard negatives of eq. 6 would never change (common/losses/sentence_ctl.py).")
    return " ".join(notes)


def table1(ctx: ReportContext) -> Table:
    rows = []
    for setting, block in ctx.reported["table1"].items():
        if setting == "zero-shot" or any(t in ctx.cfg["hictl"]["tasks"] for t in TTA.values()):
            for init in ctx.cfg["encoders"]:
                for m in MAIN:
                    rows.append([f"{setting}, {init}", f"ours: {LABEL[m]}", "ours",
                                 *ours_row(ctx, m, init, setting=setting)])
        for name, cells in block.items():
            rows.append([setting, name, "paper", *paper_row(cells)])
    return Table("table1_xtreme", "Table 1: XTREME", ["setting", "model", "source",
                 *HEADERS], rows, [where(ctx), task_note(ctx),
                                   "Avg.: the mean of the nine tasks, a QA task as (F1 + EM) / 2 (how the paper's "
                                   "averages are computed)."])


def table2(ctx: ReportContext) -> Table:
    init, setting = comparison_basis(ctx.cfg)
    rows = [[name, "paper", *paper_row(cells + [None])[:-1]] for name, cells in ctx.reported["table2"].items()]
    rows.append([f"ours: {LABEL['hictl_hns']}", "ours", *ours_row(ctx, "hictl_hns", init, setting=setting)[:10]])
    return Table("table2_comparison", "Table 2: comparison with existing methods (pair sentence, structured "
                 "prediction, QA)", ["model", "source", *HEADERS[:10]], rows,
                 [where(ctx), basis_note(ctx), task_note(ctx)])


def table3(ctx: ReportContext) -> Table:
    (init, setting), seed = comparison_basis(ctx.cfg), [ctx.cfg["ablation_seed"]]
    paper = ctx.reported["table3"]
    rows = [["Full Model", "ours", *ours_row(ctx, "hictl_hns", init, seed, setting)],
            ["Full Model", "paper", *paper_row(paper["Full Model"])]]
    ran = ablations(ctx.cfg)
    for name in ABLATIONS:
        if name in ran:
            rows.append([LABEL[name], "ours", *ours_row(ctx, name, init, seed, setting)])
        rows.append([LABEL[name], "paper", *paper_row(paper[LABEL[name]])])
    notes = [where(ctx), basis_note(ctx), f"Ours: seed {seed[0]}.", task_note(ctx)]
    if len(ran) < len(ABLATIONS):
        notes.append(f"Run at this scale: {', '.join(LABEL[n] for n in ran) or 'none'} (config hictl.ablations); "
                     "the others have the paper's row only.")
    return Table("table3_ablations", "Table 3: ablations of the full model (HICTL + Hns)", ["model", "source",
                 *HEADERS], rows, notes)


def per_language(ctx: ReportContext, name: str, title: str, task: str, paper_key: str, langs_key: str,
                 ours_langs, paper_block=None) -> Table:
    reported = ctx.reported[paper_key]
    if paper_block:
        reported = reported[paper_block]
    langs = list(ctx.reported[langs_key])
    rows = [[n, "paper", *v] for n, v in reported.items()]
    header = ["model", "source", *langs]
    notes = [where(ctx)]
    init, setting = comparison_basis(ctx.cfg)  # the paper's rows are translate-train-all: ours too where run
    tta = setting != "zero-shot" and TTA.get(task) in ctx.cfg["hictl"]["tasks"]
    task = TTA[task] if tta else task
    if task in ctx.cfg["hictl"]["tasks"]:
        for m in MAIN:
            per = [ours_langs(s) for s in ctx.store.scores(m, task, init)]
            rows.append([f"ours: {LABEL[m]}", "ours", *[stat([p.get(x) for p in per]) if per[0].get(x) is not None
                                                         else None for x in langs]])
        notes.append("Ours: translate-train-all, as the paper's rows." if tta else
                     "Ours: zero-shot (English fine-tuning); the paper's rows are translate-train-all.")
    else:
        notes.append(f"Ours: no {task.split('@')[0]} data at scale '{ctx.scale}' (paper-scale download rules); the "
                     "paper's numbers only.")
    return Table(name, title, header, rows, notes)


def appendix(ctx: ReportContext) -> list[Table]:
    from common.languages import TO_ISO1

    def tatoeba_langs(s: dict) -> dict:
        return {TO_ISO1.get(k, k): (v["xx2en"] + v["en2xx"]) / 2 for k, v in s["per_language"].items()}

    def avg(d: dict) -> dict:
        return {**d, "avg": float(np.mean(list(d.values())))} if d else d

    return [
        per_language(ctx, "table10_xnli", "Table 10: XNLI accuracy per language", "xnli@zero-shot", "table10",
                     "table10_languages", lambda s: avg(dict(s["accuracy"])), "translate-train-all"),
        per_language(ctx, "table11_pawsx", "Table 11: PAWS-X accuracy per language", "pawsx@zero-shot", "table11",
                     "table11_languages", lambda s: avg(dict(s["accuracy"]))),
        per_language(ctx, "table12_pos", "Table 12: POS accuracy per language", "pos@zero-shot", "table12",
                     "table12_languages", lambda s: avg(dict(s["per_language"]))),
        per_language(ctx, "table13_ner", "Table 13: NER F1 per language", "ner@zero-shot", "table13",
                     "table13_languages", lambda s: dict(s["per_language"])),
        per_language(ctx, "table14_tatoeba", "Table 14: Tatoeba accuracy per language (both directions)",
                     "tatoeba@cosine", "table14", "table14_languages", tatoeba_langs),
    ]


def table_qa(ctx: ReportContext) -> Table:
    """Our QA per language (the paper gives XQuAD / MLQA / TyDiQA averages only)."""
    init = next(iter(ctx.cfg["encoders"]))
    rows, langs = [], None
    for task in ("qa@xquad", "qa@mlqa", "qa@tydiqa"):
        if task not in ctx.cfg["hictl"]["tasks"]:
            continue
        for m in MAIN:
            per = [s["per_language"] for s in ctx.store.scores(m, task, init)]
            langs = langs or sorted(per[0])
            rows.append([task, f"ours: {LABEL[m]}", *[f"{fmt(stat([p[x]['f1'] for p in per]))} / "
                                                      f"{fmt(stat([p[x]['exact_match'] for p in per]))}"
                                                      if x in per[0] else None for x in langs]])
    return Table("table_qa", "Question answering per language (F1 / EM, ours)", ["task", "model", *(langs or [])],
                 rows, [where(ctx), task_note(ctx), "The paper reports no per-language QA table."])


def tsne(ctx: ReportContext) -> tuple[Table, dict]:
    init, seed = next(iter(ctx.cfg["encoders"])), ctx.cfg["seeds"][0]
    res = {m: ctx.store.scores(m, "hictl-tsne", init, [seed])[0] for m in FIGURE4}
    rows = [[LABEL[m], r["nearest_in_own_set_pct"], r["nearest_is_translation_pct"], r["map_nearest_in_own_set_pct"]]
            for m, r in res.items()]
    first = next(iter(res.values()))
    note = (f"{first['sets']} sets of {first['per_set']} parallel sentences in {', '.join(first['languages'])} "
            f"(distinct XNLI hypotheses; the paper: WMT'14-19 sets in en, fr, de, ru, es); encoder '{init}', seed "
            f"{seed}. The paper shows the plots only.")
    table = Table("figure4_tsne", "Figure 4: nearest neighbours of parallel sentence sets",
                  ["model", "NN in own set %", "NN is a translation %", "2-D map: NN in own set %"], rows,
                  [where(ctx), note])
    return table, res


def tsne_figure(res: dict, out: Path) -> list[Path]:
    fig, axes = plt.subplots(1, len(res), figsize=(4.2 * len(res), 4))
    markers = "os^Dv"
    for ax, (m, r) in zip(np.atleast_1d(axes), res.items()):
        for i, lang in enumerate(r["languages"]):  # one collection per language (its marker), coloured by set
            pts = [p for p in r["points"] if p["lang"] == lang]
            ax.scatter([p["x"] for p in pts], [p["y"] for p in pts], s=10, linewidths=0,
                       color=[plt.cm.tab10(p["set"] % 10) for p in pts], marker=markers[i % len(markers)])
        ax.set_title(f"{LABEL[m]}: NN in own set {r['nearest_in_own_set_pct']:.0f} %", fontsize=9)
        ax.set_xticks([])
        ax.set_yticks([])
    handles = [plt.Line2D([], [], marker=markers[i], color="grey", linestyle="", label=x)
               for i, x in enumerate(next(iter(res.values()))["languages"])]
    fig.legend(handles=handles, loc="lower center", ncol=len(handles), fontsize=8)
    fig.suptitle("t-SNE of parallel sentence sets (colour = set, marker = language)", fontsize=9)
    return save(fig, out / "figure4_tsne")


def claims(ctx: ReportContext) -> Table:
    """The paper's claims at this scale (``papers/hictl/claims.py``); the NMT claims are in nmt/claims."""
    return claims_table(declare(ctx.cfg), ctx, f"The paper's claims at scale '{ctx.scale}'",
                        [where(ctx), f"Encoder '{next(iter(ctx.cfg['encoders']))}'; Table 1 claims over seeds "
                         f"{ctx.cfg['seeds']}, "
                         f"Table 3 claims on seed {ctx.cfg['ablation_seed']}.",
                         "Table 3's ordering (the paper's drops in Avg.: sentence CTL 2.4, MT data 1.0, word CTL "
                         "0.6): compare the B − A column of the three ablation rows.",
                         "The NMT claims are in nmt/claims.", task_note(ctx)])

def build(ctx: ReportContext):
    t4, res = tsne(ctx)
    tables = [table1(ctx), table2(ctx), table3(ctx), *appendix(ctx), table_qa(ctx), t4, claims(ctx)]
    return tables, {"figure4_tsne": lambda out: tsne_figure(res, out)}


if __name__ == "__main__":
    main("hictl", "HICTL", partial(load_paper_config, "hictl"), registry, build, HERE / "reported.yaml")
