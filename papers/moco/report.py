"""Regenerate every MoCo-BERT table and figure from the workflow's results, the paper's beside ours.

Outputs in ``figures/moco/<scale>/``: Table 1 (Tatoeba), Table 2 (BUCC), Table 3 (STS
wmean, with and without NLI), Table 8 (STS all), Figure 2 (STS against queue size, plus the
small-batch point), Table 4 (temperature), Table 5 (momentum), Table 6 (pooling), Figure 3
(t-SNE), Table 10 (nearest neighbours), a ``claims`` table and ``README.md``.
"""
from __future__ import annotations

import argparse
import logging
import statistics
from pathlib import Path

import yaml

from common.config import load_paper_config
from common.io import read_json
from common.report.figures import plt, save
from common.report.index import write_index
from common.report.tables import Table, write_table
from papers.moco.variants import MAIN, analysis_runs

log = logging.getLogger("papers.moco.report")
HERE = Path(__file__).parent
LABEL = {"init": "initial encoders (no training)", "inbatch": "in-batch negatives", "moco": "MoCo-BERT",
         "moco_nli": "MoCo-BERT+NLI"}
KEYS_FROM = {"momentum": "momentum encoder", "shared": "w/o momentum (shared)"}  # Table 5's row labels


def p2(value: float | None) -> str | None:
    """Paper numbers as the paper prints them (two decimals)."""
    return None if value is None else f"{value:.2f}"


def mean(values: list) -> float | None:
    values = [v for v in values if v is not None]
    return statistics.fmean(values) if values else None


class Results:
    def __init__(self, root: Path, cfg: dict):
        self.root, self.cfg = root, cfg

    def get(self, run: str, task: str) -> list[dict]:
        """Scores of every seed of a main run, or of the first seed for other runs."""
        seeds = self.cfg["seeds"] if run in MAIN else self.cfg["seeds"][:1]
        return [read_json(self.root / "eval" / "pair" / run / f"seed{s}" / f"{task}.json")["scores"] for s in seeds]

    def sts_seeds(self, run: str, agg: str = "wmean") -> list[float]:
        return [r["average_spearman"][agg] for r in self.get(run, "sts")]

    def bucc_seeds(self, run: str) -> list[float]:
        return [r["main_score"] for r in self.get(run, "bucc")]

    def tatoeba_seeds(self, run: str, direction: str) -> list[float]:
        return [mean([p[direction] for p in r["per_language"].values()]) for r in self.get(run, "tatoeba")]

    def sts(self, run: str, agg: str = "wmean") -> float:
        return mean(self.sts_seeds(run, agg))

    def bucc(self, run: str) -> float:
        return mean(self.bucc_seeds(run))

    def tatoeba(self, run: str, direction: str) -> float:
        return mean(self.tatoeba_seeds(run, direction))


def where(cfg: dict, scale: str, manifest: dict) -> str:
    lang = manifest["train_languages"][0]
    return (f"Ours: scale '{scale}' — {cfg['description'].strip()} Language pair {lang}-en. Seeds {cfg['seeds']} "
            f"(mean) for the main runs, seed {cfg['seeds'][0]} for the rest. Leakage rule dropped "
            f"{manifest['leakage']['dropped_total']} training pairs.")


def build_tables(res: Results, rep: dict, manifest: dict, cfg: dict, scale: str) -> tuple[list[Table], dict]:
    w = where(cfg, scale, manifest)
    lang = manifest["train_languages"][0]
    enc = cfg["encoders"]
    init_note = (f"Encoders: English {'pretrained ' + enc['en']['pretrained'] if enc['en'].get('pretrained') else 'from scratch'}, "
                 f"{lang} {'pretrained ' + enc['xx']['pretrained'] if enc['xx'].get('pretrained') else 'from scratch'} "
                 f"(paper: bert-base-uncased and RoBERTa-wwm-ext, both pretrained).")
    tables, figures = [], {}
    ours_main = ["init", "inbatch", "moco", "moco_nli"]

    # ---------------------------------------------------------------- Table 1
    rows = [[f"ours: {LABEL[r]}", d, res.tatoeba(r, k), rep["table1_tatoeba"]["moco"][k] if r == "moco" else None]
            for r in ours_main for d, k in ((f"{lang}→en", "xx2en"), (f"en→{lang}", "en2xx"))]
    rows += [[f"paper: {x['model']}", "–", None, x["accuracy"]] for x in rep["table1_tatoeba"]["rows"]]
    tables.append(Table("table1_tatoeba", f"Table 1: Tatoeba {lang}-en retrieval accuracy (%)",
                        ["model", "direction", "ours", "paper (MoCo-BERT / baseline)"], rows,
                        [w, init_note, "Cosine nearest neighbour over the 1000 test pairs, both directions (section 3.2)."]))

    # ---------------------------------------------------------------- Table 2
    b = cfg["eval"]["bucc"]
    rows = []
    for r in ours_main:
        runs = res.get(r, "bucc")
        rows.append([f"ours: {LABEL[r]}", *[mean([x["test"][m] for x in runs]) for m in ("precision", "recall", "f1")],
                     p2(rep["table2_bucc"]["moco"]["f1"]) if r == "moco" else None])
    rows += [[f"paper: {x['model']}", None, None, None, p2(x["f1"])] for x in rep["table2_bucc"]["rows"]]
    kind = ("synthetic (common.data.synthetic)" if manifest["kind"] == "synthetic" else
            "BUCC-style en-zh benchmark built from held-out real translations (stsb-multi-mt zh dev and test), "
            "about 3.5% gold, real BUCC file format; not the BUCC 2018 corpus, so values are not comparable in level.")
    tables.append(Table("table2_bucc", f"Table 2: bitext mining {lang}-en, test split (%)",
                        ["model", "P ours", "R ours", "F1 ours", "F1 paper"], rows,
                        [w, f"Eq. 4: {b['scoring']} margin, k={b['k']}, best match with one-to-one filtering; threshold "
                            f"searched on '{b['tune_split']}', applied to '{b['test_split']}'.", "BUCC data: " + kind]))

    # ---------------------------------------------------------------- Tables 3 and 8
    datasets = list(res.get("moco", "sts")[0]["datasets"])
    for key, agg, title in (("table3_sts_wmean", "wmean", "Table 3: STS Spearman ×100, SentEval 'wmean'"),
                            ("table8_sts_all", "all", "Table 8: STS Spearman ×100, 'all' setting (SimCSE)")):
        paper = {**rep[key]["w/o NLI"], **{f"{k} (NLI)": v for k, v in rep[key]["w/ NLI"].items()}}
        moco_p, nli_p = paper["MoCo-BERT-base"], paper["MoCo-BERT-base+NLI (NLI)"]
        names = rep["sts_datasets"]
        rows = []
        for d in datasets + ["Avg"]:
            ours = [mean([r["average_spearman"][agg] if d == "Avg" else r["datasets"][d][agg]["spearman"]
                          for r in res.get(run, "sts")]) for run in ours_main]
            pi = len(names) if d == "Avg" else (names.index(d) if d in names else None)
            rows.append([d, *ours, *(None if pi is None else p2(p[pi]) for p in (moco_p, nli_p))])
        best_base = "BERT-base-whitening"
        tables.append(Table(key, title, ["dataset", *[f"ours {LABEL[r]}" for r in ours_main], "paper MoCo-BERT",
                                         "paper MoCo-BERT+NLI"], rows,
                            [w, init_note, f"Paper's strongest baselines ({best_base}): w/o NLI avg {paper[best_base][-1]}, "
                                           f"w/ NLI avg {paper[best_base + ' (NLI)'][-1]}. The other baseline rows are in "
                                           "papers/moco/reported.yaml.",
                             "NLI data here: " + ("the synthetic generator's English NLI items" if manifest["kind"] == "synthetic"
                                                  else "the 2490 English XNLI dev items (SNLI/MNLI are not in data_root); "
                                                       "paper: SNLI + MNLI train, ~1M pairs."),
                             "STS datasets: " + ("the synthetic English STS set" if manifest["kind"] == "synthetic"
                                                 else "STS12-16 (SentEval files), STS-B test, SICK-R test.")]))

    # ---------------------------------------------------------------- Figure 2 and Tables 4-6
    runs = analysis_runs(cfg)
    base_q = cfg["analysis"]["queue_size"]
    f2 = rep["figure2_queue"]
    rows = [[k, res.sts(name), res.bucc(name), p2(f2["points"].get(k)) if scale == "paper" else None] for k, name in runs["figure2_queue"]]
    (sb, sb_name), = runs["figure2_small_batch"]
    rows.append([f"{base_q} (batch {sb})", res.sts(sb_name), res.bucc(sb_name),
                 p2(f2["small_batch"]["sts_avg"]) if scale == "paper" else None])
    rows.append([f"in-batch only (batch {cfg['training']['global_batch_size']})", res.sts("inbatch"), res.bucc("inbatch"), None])
    if scale != "paper":  # the paper's sizes are not ours: its points as rows of their own
        rows += [[f"paper: {k}", None, None, p2(v)] for k, v in sorted(f2["points"].items())]
        rows.append([f"paper: 204800 (batch {f2['small_batch']['batch_size']})", None, None, p2(f2["small_batch"]["sts_avg"])])
    tables.append(Table("figure2_queue", "Figure 2: average STS (wmean) against memory queue size",
                        ["queue size", "STS avg ours", "BUCC F1 ours", "STS avg paper"], rows,
                        [w, f"Paper points (queue 204800: {f2['points'][204800]}, 409600: {f2['points'][409600]}, batch 256: "
                            f"{f2['small_batch']['sts_avg']}) are at its own queue sizes; ours scale the queue to the data "
                            f"(main {cfg['moco']['queue_size']}, analysis default {base_q}). Paper claim: {f2['claim']}."]))
    figures["figure2_queue"] = (runs, f2)
    for key, title, label in (("table4_temperature", "Table 4: temperature τ", "τ"),
                              ("table5_momentum", "Table 5: momentum update against shared parameters", "keys from"),
                              ("table6_pooling", "Table 6: pooling", "pooling")):
        rows = []
        for value, name in runs[key]:
            p = rep[key].get(value, {})
            # tau is a float key: printed as given (0.01), not with the table's one-decimal score format
            shown = f"{value:g}" if isinstance(value, float) else KEYS_FROM.get(value, value)
            rows.append([shown, res.sts(name), res.bucc(name), p2(p.get("sts")), p2(p.get("bucc"))])
        tables.append(Table(key, title, [label, "STS avg ours", "BUCC F1 ours", "STS avg paper", "BUCC F1 paper"], rows,
                            [w, f"Queue size {base_q} (the analysis default; paper: 204800)."]))

    # ---------------------------------------------------------------- Figure 3 and Table 10
    tsne = res.get("moco", "tsne")[0]
    rows = [[p["lang"], p["pair"], p["tatoeba_line"], p["x"], p["y"], p["text"]] for p in tsne["points"]]
    tables.append(Table("figure3_tsne", "Figure 3: t-SNE of random Tatoeba parallel pairs (values behind the plot)",
                        ["language", "pair", "Tatoeba line", "x", "y", "sentence"], rows,
                        [w, f"{tsne['pairs_nearest_in_map_pct']:.1f}% of the points have their translation as nearest "
                            "neighbour in the map. The paper shows the plot only."]))
    figures["figure3_tsne"] = tsne
    nb = res.get("moco", "neighbors")[0]
    paper_nb = {q["query"]: q["neighbors"] for q in rep["table10_neighbors"]}
    rows = []
    for q in nb["queries"]:
        pn = paper_nb.get(q["query"], [])
        for i, n in enumerate(q["neighbors"]):
            rows.append([q["query"] if i == 0 else "", i + 1, f"{n['cosine']:.3f}", n["sentence"],
                         f"{pn[i][0]:.3f}" if i < len(pn) else None, pn[i][1] if i < len(pn) else None])
    tables.append(Table("table10_neighbors", "Table 10: nearest English training sentences (cosine, exact match excluded)",
                        ["query", "rank", "cosine ours", "sentence ours", "cosine paper", "sentence paper"], rows,
                        [w, f"Ours: {nb['corpus_size']} English training sentences; paper: 1M random English training sentences. "
                            + ("The paper's own queries." if paper_nb.keys() & {q['query'] for q in nb['queries']}
                               else "Queries: English Tatoeba sentences (the paper's queries need real English).")]))
    return tables, figures


def claims(res: Results, cfg: dict) -> Table:
    """Section 3.4's claims at this scale, each with the rule that decides it."""
    rows = []
    for metric, f in (("STS avg (wmean)", res.sts_seeds), ("BUCC F1", res.bucc_seeds),
                      ("Tatoeba xx→en", lambda r: res.tatoeba_seeds(r, "xx2en"))):
        a, b = f("inbatch"), f("moco")  # per seed
        wins = sum(y > x for x, y in zip(a, b))
        rows.append(["queue beats in-batch negatives", metric, mean(a), mean(b),
                     f"{'holds' if mean(b) > mean(a) else 'does not hold'} (MoCo higher in {wins} of {len(a)} seeds)"])
    pts = analysis_runs(cfg)["figure2_queue"]
    vals = [res.sts_seeds(n)[0] for _, n in pts]  # first seed everywhere: the analysis runs have only that one
    inc = sum(y > x for x, y in zip(vals, vals[1:]))
    rows.append(["larger queues help", "STS avg, consecutive sizes that improve", None, None,
                 f"{inc} of {len(vals) - 1} ({'holds' if inc == len(vals) - 1 else 'partly' if inc else 'does not hold'})"])
    base = f"q{cfg['analysis']['queue_size']}"
    for metric, f in (("STS avg (wmean)", res.sts), ("BUCC F1", res.bucc)):
        a, b = f(base), f(f"{base}_shared")
        fails = b < a / 2
        rows.append(["training without momentum fails", metric, a, b,
                     "holds" if fails else "does not hold"])
    return Table("claims", "Section 3.4 claims at this scale", ["claim", "metric", "baseline / with momentum",
                                                                  "MoCo / without momentum", "verdict"],
                 rows, ["Rules: 'queue beats in-batch': MoCo-BERT's seed mean above the in-batch baseline's (same data, "
                        "steps, batch, seeds); "
                        "'larger queues help': STS (first seed) rises at every step of the Figure 2 sizes; 'fails': without momentum "
                        "below half the momentum model's score.", f"Seeds {cfg['seeds']} (main runs).",
                        queue_age_note(cfg, load_paper_config("moco", "paper"))])


def queue_age_note(cfg: dict, paper_cfg: dict) -> str:
    """How many optimizer steps old the oldest queued key is (K / B), as a share of the run, ours and the paper's.

    A key is computed once and then kept for K / B steps while the encoders keep moving, so this
    share, not K alone, says how consistent the negatives are (the argument of section 3.4).
    """
    def age(k: int, c: dict) -> str:
        steps = k / c["training"]["global_batch_size"]
        return f"{k}: {steps:g} of {c['training']['max_steps']} steps ({100 * steps / c['training']['max_steps']:.1f} %)"
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


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--scale", required=True)
    p.add_argument("--results", required=True, help="results/<scale>/moco")
    p.add_argument("--corpus", required=True)
    p.add_argument("--out", required=True)
    a = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO)
    cfg = load_paper_config("moco", a.scale)
    rep = yaml.safe_load((HERE / "reported.yaml").read_text(encoding="utf-8"))
    res = Results(Path(a.results), cfg)
    tables, figures = build_tables(res, rep, read_json(a.corpus), cfg, a.scale)
    tables.append(claims(res, cfg))
    out = Path(a.out)
    written = [p for t in tables for p in write_table(t, out)]
    written += plot_queue(*figures["figure2_queue"], res, a.scale, out, cfg["analysis"]["queue_size"])
    written += plot_tsne(figures["figure3_tsne"], out)
    write_index(out, "moco", "MoCo-BERT", a.scale, tables, ["figure2_queue", "figure3_tsne"])
    log.info("wrote %d files to %s", len(written) + 1, out)


if __name__ == "__main__":
    main()
