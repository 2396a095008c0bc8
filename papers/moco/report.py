"""Regenerate every MoCo-BERT table and figure from the workflow's results, the paper's beside ours.

Outputs in ``figures/moco/<scale>/``: Table 1 (Tatoeba), Table 2 (BUCC), Table 3 (STS
wmean, with and without NLI), Table 8 (STS all), Figure 2 (STS against queue size, plus the
small-batch point), Table 4 (temperature), Table 5 (momentum), Table 6 (pooling), Figure 3
(t-SNE), Table 10 (nearest neighbours), a ``claims`` table and ``README.md``.
"""
from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

from common.config import PAPER_SCALES, load_paper_config
from common.report.claim import claims_table
from common.report.cli import main
from common.report.context import ReportContext
from common.report.figures import plt, save
from common.report.results import ResultStore, mean, stat
from common.report.specs import Col, Ref, Row, TableSpec
from common.report.tables import Table, leakage_note
from papers.moco.claims import declare
from papers.moco.runs import INIT, SHOWCASE, TASKS, registry
from papers.moco.variants import analysis_runs

HERE = Path(__file__).parent
TATOEBA, BUCC, STS = TASKS
TSNE, NEIGHBORS = SHOWCASE
LABEL = {"init": "initial encoders (no training)", "inbatch": "in-batch negatives", "moco": "MoCo-BERT",
         "moco_nli": "MoCo-BERT+NLI"}
KEYS_FROM = {"momentum": "momentum encoder", "shared": "w/o momentum (shared)"}  # Table 5's row labels


def p2(value: float | None) -> str | None:
    """Paper numbers as the paper prints them (two decimals)."""
    return None if value is None else f"{value:.2f}"


class Results:
    """MoCo-BERT's view of the result store: per-seed and mean STS, BUCC and Tatoeba of a run."""

    def __init__(self, store: ResultStore):
        self.store = store

    def get(self, run: str, task: str) -> list[dict]:
        return self.store.scores(run, task, INIT)

    def sts_seeds(self, run: str, agg: str = "wmean") -> list[float]:
        return self.store.values(run, STS, f"average_spearman.{agg}", INIT)

    def bucc_seeds(self, run: str) -> list[float]:
        return self.store.values(run, BUCC, "main_score", INIT)

    def tatoeba_seeds(self, run: str, direction: str) -> list[float]:
        return self.store.values(run, TATOEBA, f"groups.all.{direction}", INIT)

    def sts(self, run: str, agg: str = "wmean") -> float | None:
        return mean(self.sts_seeds(run, agg))

    def bucc(self, run: str) -> float | None:
        return mean(self.bucc_seeds(run))

    def tatoeba(self, run: str, direction: str) -> float | None:
        return mean(self.tatoeba_seeds(run, direction))


def where(cfg: dict, scale: str, manifest: dict) -> str:
    lang = manifest["train_languages"][0]
    return (f"Ours: scale '{scale}' — {cfg['description'].strip()} Language pair {lang}-en. Seeds {cfg['seeds']} "
            f"(mean) for the runs a claim compares, seed {cfg['seeds'][0]} for the rest (MoCo-BERT+NLI and the "
            "ablations). " + leakage_note(manifest))


def build_tables(res: Results, rep: dict, manifest: dict, cfg: dict,
                 scale: str) -> tuple[list[Table | TableSpec], dict[str, Any]]:
    w = where(cfg, scale, manifest)
    lang = manifest["train_languages"][0]
    enc = cfg["encoders"][INIT]
    def origin(spec: dict) -> str:
        return f"pretrained {spec['pretrained']}" if spec.get("pretrained") else "from scratch"

    init_note = (f"Encoders: English {origin(enc['en'])}, {lang} {origin(enc['xx'])} "
                 "(paper: bert-base-uncased and RoBERTa-wwm-ext, both pretrained).")
    tables: list[Table | TableSpec] = []
    figures: dict[str, Any] = {}
    ours_main = ["init", "inbatch", "moco", "moco_nli"]

    # ---------------------------------------------------------------- Table 1
    rows = [[f"ours: {LABEL[r]}", d, stat(res.tatoeba_seeds(r, k)),
             rep["table1_tatoeba"]["moco"][k] if r == "moco" else None]
            for r in ours_main for d, k in ((f"{lang}→en", "xx2en"), (f"en→{lang}", "en2xx"))]
    rows += [[f"paper: {x['model']}", "–", None, x["accuracy"]] for x in rep["table1_tatoeba"]["rows"]]
    tables.append(Table("table1_tatoeba", f"Table 1: Tatoeba {lang}-en retrieval accuracy (%)",
                        ["model", "direction", "ours", "paper (MoCo-BERT / baseline)"], rows,
                        [w, init_note,
                         "Cosine nearest neighbour over the 1000 test pairs, both directions (section 3.2)."]))

    # ---------------------------------------------------------------- Table 2
    b = res.get("moco", BUCC)[0]  # the protocol as the results record it
    rows = []
    for r in ours_main:
        runs = res.get(r, BUCC)
        rows.append([f"ours: {LABEL[r]}", *[stat([x["test"][m] for x in runs]) for m in ("precision", "recall", "f1")],
                     p2(rep["table2_bucc"]["moco"]["f1"]) if r == "moco" else None])
    rows += [[f"paper: {x['model']}", None, None, None, p2(x["f1"])] for x in rep["table2_bucc"]["rows"]]
    kind = ("synthetic (common.data.synthetic)" if manifest["kind"] == "synthetic" else
            "BUCC 2018." if not manifest.get("bucc_benchmark") else
            "BUCC-style en-zh benchmark built from held-out real translations (common/data/bucc_mini.py: "
            f"{bucc_note(manifest)}), real BUCC file format; not the BUCC 2018 corpus, so values are not comparable "
            "in level.")
    tables.append(Table("table2_bucc", f"Table 2: bitext mining {lang}-en, {b['test_split']} split (%)",
                        ["model", "P ours", "R ours", "F1 ours", "F1 paper"], rows,
                        [w, f"Eq. 4: {b['scoring']} margin, k={b['k']}, best match with one-to-one filtering; "
                            f"threshold searched on '{b['tune_split']}', applied to '{b['test_split']}'.",
                         "BUCC data: " + kind]))

    # ---------------------------------------------------------------- Tables 3 and 8
    datasets = list(res.get("moco", STS)[0]["datasets"])
    for key, agg, title in (("table3_sts_wmean", "wmean", "Table 3: STS Spearman ×100, SentEval 'wmean'"),
                            ("table8_sts_all", "all", "Table 8: STS Spearman ×100, 'all' setting (SimCSE)")):
        paper = {**rep[key]["w/o NLI"], **{f"{k} (NLI)": v for k, v in rep[key]["w/ NLI"].items()}}
        moco_p, nli_p = paper["MoCo-BERT-base"], paper["MoCo-BERT-base+NLI (NLI)"]
        names = rep["sts_datasets"]
        rows = []
        for d in datasets + ["Avg"]:
            ours = [stat([r["average_spearman"][agg] if d == "Avg" else r["datasets"][d][agg]["spearman"]
                          for r in res.get(run, STS)]) for run in ours_main]
            pi = len(names) if d == "Avg" else (names.index(d) if d in names else None)
            rows.append([d, *ours, *(None if pi is None else p2(p[pi]) for p in (moco_p, nli_p))])
        best_base = "BERT-base-whitening"
        tables.append(Table(key, title, ["dataset", *[f"ours {LABEL[r]}" for r in ours_main], "paper MoCo-BERT",
                                         "paper MoCo-BERT+NLI"], rows,
                            [w, init_note, f"Paper's strongest baselines ({best_base}): w/o NLI avg "
                                           f"{paper[best_base][-1]}, w/ NLI avg {paper[best_base + ' (NLI)'][-1]}. The "
                                           "other baseline rows are in papers/moco/reported.yaml.",
                             "NLI data here: " + ("the synthetic generator's English NLI items"
                                                  if manifest["kind"] == "synthetic" else
                                                  "the 2490 English XNLI dev items (SNLI/MNLI are not in data_root); "
                                                  "paper: SNLI + MNLI train, ~1M pairs."),
                             "STS datasets: " + ("the synthetic English STS set" if manifest["kind"] == "synthetic"
                                                 else "STS12-16 (SentEval files), STS-B test, SICK-R test.")]))

    # ---------------------------------------------------------------- Figure 2 and Tables 4-6
    tables += analysis_tables(res.store, rep, cfg, scale, w)
    figures["figure2_queue"] = (analysis_runs(cfg), rep["figure2_queue"])

    # ---------------------------------------------------------------- Figure 3 and Table 10
    tsne = res.get("moco", TSNE)[0]
    rows = [[p["lang"], p["pair"], p["tatoeba_line"], p["x"], p["y"], p["text"]] for p in tsne["points"]]
    tables.append(Table("figure3_tsne", "Figure 3: t-SNE of random Tatoeba parallel pairs (values behind the plot)",
                        ["language", "pair", "Tatoeba line", "x", "y", "sentence"], rows,
                        [w, f"{tsne['pairs_nearest_in_map_pct']:.1f}% of the points have their translation as nearest "
                            "neighbour in the map. The paper shows the plot only."]))
    figures["figure3_tsne"] = tsne
    nb = res.get("moco", NEIGHBORS)[0]
    paper_nb = {q["query"]: q["neighbors"] for q in rep["table10_neighbors"]}
    rows = []
    for q in nb["queries"]:
        pn = paper_nb.get(q["query"], [])
        for i, n in enumerate(q["neighbors"]):
            rows.append([q["query"] if i == 0 else "", i + 1, f"{n['cosine']:.3f}", n["sentence"],
                         f"{pn[i][0]:.3f}" if i < len(pn) else None, pn[i][1] if i < len(pn) else None])
    tables.append(Table("table10_neighbors",
                        "Table 10: nearest English training sentences (cosine, exact match excluded)",
                        ["query", "rank", "cosine ours", "sentence ours", "cosine paper", "sentence paper"], rows,
                        [w, f"Ours: {nb['corpus_size']} English training sentences; paper: 1M random English training "
                            "sentences. " + ("The paper's own queries."
                                             if paper_nb.keys() & {q['query'] for q in nb['queries']} else
                                             "Queries: English Tatoeba sentences (the paper's queries need real "
                                             "English).")]))
    return tables, figures


STS_AVG = Col("STS avg ours", STS, "average_spearman.wmean")
BUCC_F1 = Col("BUCC F1 ours", BUCC)


def analysis_tables(store: ResultStore, rep: dict, cfg: dict, scale: str, w: str) -> list[TableSpec]:
    """Figure 2 (queue size) and Tables 4-6 (temperature, momentum, pooling): runs of section 3.4 x (STS, BUCC)."""
    runs = analysis_runs(cfg)
    base_q = cfg["analysis"]["queue_size"]
    f2 = rep["figure2_queue"]
    paper_scale = scale in PAPER_SCALES
    rows = [Row((k,), name, INIT, reported=(p2(f2["points"].get(k)) if paper_scale else None,))
            for k, name in runs["figure2_queue"]]
    (sb, sb_name), = runs["figure2_small_batch"]
    rows.append(Row((f"{base_q} (batch {sb})",), sb_name, INIT,
                    reported=(p2(f2["small_batch"]["sts_avg"]) if paper_scale else None,)))
    rows.append(Row((f"in-batch only (batch {cfg['training']['global_batch_size']})",), "inbatch", INIT))
    if not paper_scale:  # the paper's sizes are not ours: its points as rows of their own
        rows += [Row((f"paper: {k}",), None, reported=(p2(v),)) for k, v in sorted(f2["points"].items())]
        rows.append(Row((f"paper: 204800 (batch {f2['small_batch']['batch_size']})",), None,
                        reported=(p2(f2["small_batch"]["sts_avg"]),)))
    specs = [TableSpec("figure2_queue", "Figure 2: average STS (wmean) against memory queue size", ["queue size"],
                       [STS_AVG, BUCC_F1, Ref("STS avg paper")], rows,
                       [w, f"Paper points (queue 204800: {f2['points'][204800]}, 409600: {f2['points'][409600]}, "
                           f"batch 256: {f2['small_batch']['sts_avg']}) are at its own queue sizes; ours keep its "
                           f"ratio of key age to run length (main {cfg['moco']['queue_size']}, analysis default "
                           f"{base_q}; the claims notes give the ratios). Paper claim: {f2['claim']}."])]
    for key, title, label in (("table4_temperature", "Table 4: temperature τ", "τ"),
                              ("table5_momentum", "Table 5: momentum update against shared parameters", "keys from"),
                              ("table6_pooling", "Table 6: pooling", "pooling")):
        rows = []
        for value, name in runs[key]:
            p = rep[key].get(value, {})
            # tau is a float key: printed as given (0.01), not with the table's one-decimal score format
            shown = f"{value:g}" if isinstance(value, float) else KEYS_FROM.get(value, value)
            rows.append(Row((shown,), name, INIT, reported=(p2(p.get("sts")), p2(p.get("bucc")))))
        specs.append(TableSpec(key, title, [label],
                               [STS_AVG, BUCC_F1, Ref("STS avg paper", 0), Ref("BUCC F1 paper", 1)], rows,
                               [w, f"Queue size {base_q} (the analysis default; paper: 204800)."]))
    return specs


def claims(ctx: ReportContext) -> Table:
    """The paper's claims at this scale (``papers/moco/claims.py``)."""
    cfg = ctx.cfg
    return claims_table(declare(cfg), ctx, "MoCo-BERT's claims at this scale",
                        [where(cfg, ctx.scale, ctx.manifest),
                         "'Larger queues help' compares consecutive Figure 2 sizes.",
                         queue_age_note(cfg, load_paper_config("moco", "paper")),
                         momentum_note(cfg, load_paper_config("moco", "paper"))])


def bucc_note(manifest: dict) -> str:
    s = manifest["bucc_benchmark"]["zh-en"]["test"]
    return (f"test split {s['gold']} gold pairs, {s['source_sentences']} zh and {s['english_sentences']} English "
            f"sentences; gold {100 * s['gold_share_source']:.1f} % / {100 * s['gold_share_english']:.1f} %")


def momentum_note(cfg: dict, paper_cfg: dict) -> str:
    """The momentum encoder averages over ~1 / (1 - m) steps; as a share of the run, ours and the paper's."""
    def horizon(c: dict) -> str:
        h = 1 / (1 - c["moco"]["momentum"])
        return f"m = {c['moco']['momentum']:g}: {h:.1f} of {c['training']['max_steps']} steps " \
               f"({100 * h / c['training']['max_steps']:.2f} %)"
    return f"Momentum horizon 1 / (1 - m) as a share of the run: ours {horizon(cfg)}; paper {horizon(paper_cfg)}."


def queue_age_note(cfg: dict, paper_cfg: dict) -> str:
    """How many optimizer steps old the oldest queued key is (K / B), as a share of the run, ours and the paper's.

    A key is computed once and then kept for K / B steps while the encoders keep moving, so this
    share, not K alone, says how consistent the negatives are (the argument of section 3.4).
    """
    def age(k: int, c: dict) -> str:
        steps = k / c["training"]["global_batch_size"]
        total = c["training"]["max_steps"]
        return f"{k}: {steps:g} of {total} steps ({100 * steps / total:.1f} %)"
    ours = "; ".join(age(k, cfg) for k, _ in analysis_runs(cfg)["figure2_queue"])
    return (f"Age of the oldest queued key, K / batch steps (share of the run): ours {ours}; paper "
            f"{age(paper_cfg['moco']['queue_size'], paper_cfg)}.")


def _queue_axis(ax, sizes: list[int]) -> None:
    """Log-scale x axis labelled with exactly the queue sizes run (log minor tick labels overlap)."""
    ax.set_xscale("log")
    ax.set_xticks(sizes, [str(k) for k in sizes])
    ax.xaxis.set_minor_formatter(plt.NullFormatter())
    ax.set_xlabel("memory queue size")


def plot_queue(runs: dict, f2: dict, res: Results, scale: str, out: Path, base_q: int) -> list[Path]:
    pts = runs["figure2_queue"]
    (sb, sb_name), = runs["figure2_small_batch"]
    fig, axes = plt.subplots(1, 2, figsize=(8, 3.2))
    ax = axes[0]
    ax.plot([k for k, _ in pts], [res.sts(n) for _, n in pts], marker="o", label=f"ours ({scale})")
    ax.plot([base_q], [res.sts(sb_name)], marker="s", linestyle="none",
            label=f"ours, batch {sb}")
    ax.axhline(res.sts("inbatch"), color="grey", linestyle="--", label="ours, in-batch negatives")
    _queue_axis(ax, [k for k, _ in pts])
    ax.set_ylabel("STS avg Spearman (wmean)")
    ax.set_title(f"ours ({scale})")
    ax.legend(fontsize=7)
    ax = axes[1]
    ks = sorted(f2["points"])
    ax.plot(ks, [f2["points"][k] for k in ks], marker="*", color="red", markersize=10, label="paper (values in text)")
    ax.plot([204800], [f2["small_batch"]["sts_avg"]], marker="s", color="red", linestyle="none",
            label=f"paper, batch {f2['small_batch']['batch_size']}")
    _queue_axis(ax, ks)
    ax.set_title("paper (Figure 2: values given in the text)")
    ax.legend(fontsize=7)
    for a in axes:
        a.grid(alpha=0.3)
    fig.suptitle(f"Figure 2: {f2['claim']}", fontsize=9, y=1.03)
    return save(fig, out / "figure2_queue")


def plot_tsne(tsne: dict, out: Path) -> list[Path]:
    pts = tsne["points"]
    n = len(pts) // 2
    fig, ax = plt.subplots(figsize=(6, 5))
    for i in range(n):
        a, b = pts[i], pts[i + n]
        ax.plot([a["x"], b["x"]], [a["y"], b["y"]], color="lightgrey", zorder=1)
        ax.annotate(str(i), (b["x"], b["y"]), fontsize=7, xytext=(3, 3), textcoords="offset points")
    for lang, marker, color in ((pts[0]["lang"], "o", "tab:red"), ("en", "^", "tab:blue")):
        sel = [p for p in pts if p["lang"] == lang]
        ax.scatter([p["x"] for p in sel], [p["y"] for p in sel], marker=marker, color=color, label=lang, zorder=2)
    ax.legend(framealpha=0.6)
    ax.set_title(f"Figure 3: t-SNE of {n} Tatoeba pairs (lines join translations; "
                 f"{tsne['pairs_nearest_in_map_pct']:.0f}% nearest = translation)", fontsize=8)
    return save(fig, out / "figure3_tsne")


def build(ctx: ReportContext):
    res = Results(ctx.store)
    tables, figures = build_tables(res, ctx.reported, ctx.manifest, ctx.cfg, ctx.scale)
    tables.append(claims(ctx))
    runs, f2 = figures["figure2_queue"]
    base_q = ctx.cfg["analysis"]["queue_size"]
    draw = {"figure2_queue": lambda out: plot_queue(runs, f2, res, ctx.scale, out, base_q),
            "figure3_tsne": lambda out: plot_tsne(figures["figure3_tsne"], out)}
    return tables, draw


if __name__ == "__main__":
    main("moco", "MoCo-BERT", partial(load_paper_config, "moco"), registry, build, HERE / "reported.yaml")
