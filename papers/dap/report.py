"""Regenerate every DAP table and figure from the workflow's results, the paper's beside ours.

Outputs in ``figures/dap/<scale>/``: Table 1 (Tatoeba groups), Tables 2-3 (BUCC),
Table 4 (XNLI), Table 5 (RTL direction), Figure 3 (reconstruction ratio), Figure 4
(head depth), Table 6 (FLOPs and latency), Tables 7-8 (per-language Tatoeba), a
``claims`` summary (does DAP beat TR here?) and ``README.md`` indexing them.
Tables 2, 3, 5 and the data of Figures 3-4 are specs (:mod:`common.report.specs`).
"""
from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from common.config import load_paper_config
from common.data.corpus_parts import TEST_GOLD_BUCC_SPLITS
from common.data.manifest import source_languages
from common.io import read_json
from common.languages import TO_ISO1, XTREME_36
from common.report.claim import claims_table
from common.report.cli import main
from common.report.context import ReportContext
from common.report.figures import panels, plt, save
from common.report.results import stat
from common.report.specs import Col, Ref, Row, TableSpec
from common.report.tables import Table, leakage_note
from papers.dap.claims import declare
from papers.dap.runs import FIGURE1_METHODS, FIGURE1_TASK, TASKS, registry
from papers.dap.variants import INIT, LABEL, MAIN, ablation_variants, is_without_source, label, section5_outputs

HERE = Path(__file__).parent
TATOEBA, BUCC, XNLI = TASKS
PAPER_INIT = {"mbert": "mBERT", "xlmr": "XLM-R"}
ROWS = (INIT, *MAIN)  # the tables' models: the initial encoder, then the three methods


def paper_key(pm: str, v: str, recomputed: bool = True) -> str:
    """The paper's row of model family ``pm`` and variant ``v``: '<pm>+TR' etc.; for the initial encoder the
    authors' own run of it, '<pm> (recomputed)' in Tables 1-3 and '<pm>' in Table 4."""
    if v == INIT:
        return f"{pm} (recomputed)" if recomputed else pm
    return f"{pm}+{LABEL[v]}"


def model_name(init: str, v: str) -> str:
    return f"{init} ({LABEL[v]})" if v == INIT else f"{init}+{label(v)}"


def paper_models(init: str) -> list[str]:
    """Paper model families to show beside an initialisation: the same one, or both for others."""
    return [PAPER_INIT[init]] if init in PAPER_INIT else ["mBERT", "XLM-R"]


LEADERBOARD_BASIS = ("DAP's Tables 1 (XTREME's 36 Tatoeba languages, both directions averaged), 3 (BUCC test F1 "
                     "with the training split's threshold, its four pairs) and 4 (XNLI, its 15 languages' average)")


def leaderboard_reported(reported: dict[str, Any], init: str, variant: str,
                         manifest: dict[str, Any]) -> tuple[str, str, dict[str, float]] | None:
    """DAP's own numbers for a leaderboard row of its methods (TR, TR+TLM, DAP, the initial encoder) where the row
    stands on the paper's basis (the paper-scale leaderboard trains them from XLM-R base on DAP's corpus at DAP's
    budget, common/leaderboard/config/paper.yaml): the encoder one of the paper's (``PAPER_INIT``), and per task
    the paper's data: Table 1's XTREME 36, both directions averaged (tatoeba@cosine, whose main score is that mean
    when the corpus holds exactly the 36); Table 3's BUCC test F1 with the training split's threshold, averaged
    over its four pairs (bucc@ratio-k4, with the test gold); Table 4's average over its 15 XNLI languages. Returns
    (the paper's row, :data:`LEADERBOARD_BASIS`, task -> number), or None where no task stands on that basis."""
    if init not in PAPER_INIT or variant not in LABEL:
        return None
    pm = PAPER_INIT[init]
    out: dict[str, float] = {}
    t1 = reported["table1_tatoeba"]
    both = [t1[d].get(paper_key(pm, variant), [None] * 3)[2] for d in ("xx2en", "en2xx")]
    if sorted(manifest.get("tatoeba_languages", [])) == sorted(XTREME_36) and None not in both:
        out[TATOEBA] = sum(both) / 2
    bucc = reported["table3_bucc_test"].get(paper_key(pm, variant), {})
    pairs = sorted(k for k in bucc if k != "avg_f1")  # the paper's pairs, as the corpus names them (de-en, ...)
    if (sorted(manifest.get("bucc_pairs", [])) == pairs and manifest.get("bucc_splits") == TEST_GOLD_BUCC_SPLITS
            and bucc.get("avg_f1") is not None):
        out[BUCC] = bucc["avg_f1"]
    xnli = reported["table4_xnli"]
    row = xnli.get(paper_key(pm, variant, recomputed=False))
    if sorted(manifest.get("nli_languages", [])) == sorted(xnli["languages"]) and row:
        out[XNLI] = row[-1]  # the row's last value is its average
    return (paper_key(pm, variant), LEADERBOARD_BASIS, out) if out else None


def section5_tatoeba(ctx: ReportContext) -> tuple[str, str]:
    """Section 5's Tatoeba number: mean over the 36 XTREME languages and both directions, or over
    every evaluated language when the 36 are not all present (smoke scale): (metric path, name)."""
    groups = ctx.store.first("dap", TATOEBA)["groups"]
    return ("groups.36.both", "36 langs") if groups["36"]["both"] is not None else ("groups.all.both", "all langs")


INIT_NOTE = ("'(no pre-training)': the initial encoder evaluated as it is, pooled as every method is (seed 1: no "
             "training step), beside the paper's own run of its base model ('(recomputed)' in Tables 1-3).")


def where(ctx: ReportContext, task: str | None = None, seed: int | None = None) -> str:
    """The notes' first line: the scale, its corpus, the seeds each cell averages (the registry's DAP runs scored on
    ``task``: fewer where ``task_seeds`` limits it; ``seed``: the one seed a table or figure reads, as section 5's
    and Figure 1's) and the leakage rule's count."""
    if seed is not None:
        seeds = f"Seed {seed} only"
    else:
        scored = ctx.cfg["seeds"] if task is None else ctx.store.seeds_scored("dap", task)
        cut = " (task_seeds: a budget cut at this scale)" if len(scored) < len(ctx.cfg["seeds"]) else ""
        seeds = f"Seeds {scored} (mean){cut}"
    return f"Ours: scale '{ctx.scale}' — {ctx.cfg['description'].strip()} {seeds}. " + leakage_note(ctx.manifest)


def _group_mean(run: dict, langs: list[str], d: str) -> float | None:
    per = run["per_language"]
    return sum(per[lang][d] for lang in langs) / len(langs) if all(lang in per for lang in langs) else None


def table1(ctx: ReportContext) -> Table:
    rows = []
    rep = ctx.reported["table1_tatoeba"]
    by_source = {name: langs for name, langs in source_languages(ctx.manifest).items() if langs}
    without = [r.method for r in ctx.store.registry if is_without_source(r.method)]
    for d, dname in (("xx2en", "xx→en"), ("en2xx", "en→xx")):
        for init in ctx.store.registry.inits():
            for v in ROWS:
                runs = ctx.store.scores(v, TATOEBA, init)
                for gi, group in enumerate(("14", "28", "36", "all")):
                    ours = stat([r["groups"][group][d] for r in runs])
                    paper = [rep[d].get(paper_key(pm, v), [None] * 3)[gi] if gi < 3 else None
                             for pm in paper_models(init)]
                    n = runs[0]["groups"][group]["n_languages"]
                    label = f"{group} ({n})" if group == "all" else group
                    rows.append([dname, model_name(init, v), label, ours, *paper])
                # not paper groups: where this scale had training data, and its Latin-script part
                for group, name in (("trained", "with training data"),
                                    ("trained_latin", "Latin-script with training data")):
                    n = runs[0]["groups"][group]["n_languages"]
                    ours = stat([r["groups"][group][d] for r in runs])
                    none = [None for _ in paper_models(init)]
                    rows.append([dname, model_name(init, v), f"{name} ({n})", ours, *none])
                # the languages of each training source, and those only one source trains
                for name, langs in by_source.items():
                    ours = stat([_group_mean(r, langs, d) for r in runs])
                    rows.append([dname, model_name(init, v), f"{name} ({len(langs)})", ours,
                                 *[None for _ in paper_models(init)]])
        init = ctx.store.registry.inits()[0]
        for v in dict.fromkeys(without):  # TR and DAP without a source: the same rows, ablation seed only
            runs = ctx.store.scores(v, TATOEBA, init)
            groups: dict[str, list[str] | None] = {"all": None, **by_source}
            for name, members in groups.items():
                ours = stat([r["groups"]["all"][d] if members is None else _group_mean(r, members, d) for r in runs])
                n = runs[0]["groups"]["all"]["n_languages"] if members is None else len(members)
                rows.append([dname, model_name(init, v), f"{name} ({n})", ours, *[None for _ in paper_models(init)]])
    inits = ctx.store.registry.inits()
    return Table("table1_tatoeba", "Table 1: average Tatoeba retrieval accuracy (%)",
                 ["direction", "model", "languages", "ours", *[f"paper {pm}" for pm in paper_models(inits[0])]], rows,
                 [where(ctx, TATOEBA),
                  "Groups: 14 = LASER/XNLI languages, 28 = XTREME languages with 1000 pairs, 36 = XTREME; "
                  "'–' for ours = a language of the group is not evaluated at this scale.",
                  f"Languages with training data at this scale: {', '.join(ctx.manifest['train_languages'])}; "
                  "all others are zero-shot.", INIT_NOTE, *source_note(ctx, by_source, without)])


def source_note(ctx: ReportContext, by_source: dict[str, list[str]], without: list[str]) -> list[str]:
    """Table 1's note on the rows by training source (mini: the staged Anki, NTREX-128 and Bible pairs)."""
    if not by_source:
        return []
    groups = "; ".join(f"{name}: {', '.join(langs)}" for name, langs in by_source.items())
    out = [f"Rows by training source (the corpus's train_sources): '<source>' = the languages with pairs of that "
           f"source, '<source> alone' = those with no other source; {groups}."]
    if without:
        out.append(f"'without <source>' rows: trained on the same corpus less that source's pairs, seed "
                   f"{ctx.cfg['ablation_seed']} only, Tatoeba only.")
    return out


def bucc_table(ctx: ReportContext, key: str, part: str, title: str) -> TableSpec:
    """Tables 2-3: P, R, F per language pair and the average, ours beside each paper model's."""
    inits = ctx.store.registry.inits()
    pairs = list(ctx.store.first("dap", BUCC, inits[0])["per_pair"])
    rep = ctx.reported[key]
    rows = []
    for init in inits:
        for v in ROWS:
            name = model_name(init, v)
            for pair in pairs:
                paper = [x for pm in paper_models(init)
                         for x in (rep.get(paper_key(pm, v), {}).get(pair) or [None] * 3)]
                rows.append(Row((name, pair), v, init, {"prefix": f"per_pair.{pair}.{part}"}, tuple(paper)))
            paper = [x for pm in paper_models(init)
                     for x in (None, None, rep.get(paper_key(pm, v), {}).get("avg_f1"))]
            rows.append(Row((name, "avg"), v, init, {"prefix": part}, tuple(paper)))
    cols: list[Col | Ref] = [Col(m, BUCC, f"{{prefix}}.{k}")
                             for m, k in (("P", "precision"), ("R", "recall"), ("F", "f1"))]
    cols += [Ref(f"{pm} {m}", i) for i, (pm, m) in enumerate((pm, m) for pm in paper_models(inits[0]) for m in "PRF")]
    s = ctx.store.first("dap", BUCC, inits[0])
    return TableSpec(key, title.format(test_split=s["test_split"]), ["model", "pair"], cols, rows, [
        where(ctx, BUCC), f"Task {BUCC}: {s['scoring']} margin, k={s['k']}, best match with one-to-one filtering; "
                    f"threshold tuned on '{s['tune_split']}', applied to '{s['test_split']}'. 'avg' rows: mean P, R, F "
                    "over the pairs.", "BUCC data: " + bucc_data_note(ctx.manifest), INIT_NOTE])


def bucc_data_note(manifest: dict) -> str:
    if manifest["kind"] == "synthetic":
        return "synthetic (common.data.synthetic)."
    if not manifest.get("bucc_benchmark"):  # mini's BUCC-style benchmark (the files kind's too)
        return "BUCC 2018."
    shares = "; ".join(f"{p} {v['test']['gold']} gold in {v['test']['source_sentences']} / "
                       f"{v['test']['english_sentences']} sentences" for p, v in manifest["bucc_benchmark"].items())
    return ("a BUCC-style benchmark of held-out real translations hidden among non-parallel sentences "
            f"(common/data/bucc_mini.py; test splits: {shares}), real BUCC file format; not the BUCC 2018 corpora, "
            "so values are not comparable in level.")


def table4(ctx: ReportContext) -> Table:
    rows: list[list[Any]] = []
    langs: list[str] = []
    rep = ctx.reported["table4_xnli"]
    for init in ctx.store.registry.inits():
        for v in ROWS:
            runs = ctx.store.scores(v, XNLI, init)
            langs = list(runs[0]["accuracy"])
            ours = [stat([r["accuracy"][lang] for r in runs]) for lang in langs] + [stat([r["average"] for r in runs])]
            rows.append([model_name(init, v), "ours", *ours])
            for pm in paper_models(init):
                key = paper_key(pm, v, recomputed=False)
                if rep.get(key):
                    by_lang = dict(zip(rep["languages"] + ["avg"], rep[key]))
                    rows.append([key, "paper", *[by_lang.get(lang) for lang in langs], by_lang["avg"]])
    protocol = ctx.store.first("dap", XNLI)["protocol"]
    return Table("table4_xnli", "Table 4: XNLI accuracy (%), English fine-tuning, zero-shot transfer",
                 ["model", "source", *langs, "avg"], rows, [where(ctx, XNLI), f"Protocol here: {protocol}.", INIT_NOTE])


def section5_cols(ctx: ReportContext) -> list[Col]:
    tat, _ = section5_tatoeba(ctx)
    return [Col("Tatoeba ours", TATOEBA, tat), Col("BUCC F1 ours", BUCC), Col("XNLI ours", XNLI)]


def table5(ctx: ReportContext) -> TableSpec:
    init, seed = ctx.store.registry.inits()[0], ctx.cfg["ablation_seed"]
    rep = ctx.reported["table5_direction"]
    points = ablation_variants(ctx.cfg.get("ablations", {}), ctx.cfg["dap"]).get("direction", [])
    rows = [Row((value.replace("2", "→"),), variant, init, reported=(rep[value]["tatoeba"], rep[value]["bucc"],
                                                                     rep[value]["xnli"]), seeds=(seed,))
            for value, variant in points]
    t, b, x = section5_cols(ctx)
    _, over = section5_tatoeba(ctx)
    return TableSpec("table5_direction", "Table 5: RTL direction (section 5.1)", ["direction"],
                     [Col(f"Tatoeba ours ({over}, both dirs)", t.task, t.metric), Ref("Tatoeba paper (mBERT)", 0),
                      Col("BUCC F1 ours", b.task), Ref("BUCC F1 paper", 1), Col("XNLI ours", x.task),
                      Ref("XNLI paper", 2)],
                     rows, [where(ctx, seed=seed), f"Ours: init '{init}', seed {seed}. Paper: mBERT, 36 languages."])


def ablation_figure(ctx: ReportContext, axis: str, key: str, xlabel: str) -> tuple[TableSpec, dict]:
    """Figures 3-4: the table of values behind the plot (a spec) and the plot itself."""
    init, seed = ctx.store.registry.inits()[0], ctx.cfg["ablation_seed"]
    points = ablation_variants(ctx.cfg.get("ablations", {}), ctx.cfg["dap"]).get(axis, [])
    d, claim = ctx.reported[key]["default"], ctx.reported[key]["claim"]
    label = key.replace("figure", "Figure ").split("_")[0]
    rows = [Row((str(x),), v, init, reported=(d["tatoeba"], d["bucc"], d["xnli"]) if x == d["value"] else (),
                seeds=(seed,)) for x, v in points]
    cols = section5_cols(ctx) + [Ref("Tatoeba paper", 0), Ref("BUCC paper", 1), Ref("XNLI paper", 2)]
    spec = TableSpec(key, f"{label}: values behind the plot ({xlabel})", [xlabel], cols, rows,
                     [where(ctx, seed=seed), f"Paper claim: {claim}. The paper prints only the default point."])
    values = {name: [spec.cell(ctx.store, r, c) for r in rows] for name, c in zip(("Tatoeba", "BUCC F1", "XNLI"), cols)}
    plot = partial(panels, [x for x, _ in points], {f"ours ({init}, {ctx.scale})": values},
                   {name: (d["value"], d[key]) for name, key in (("Tatoeba", "tatoeba"), ("BUCC F1", "bucc"),
                                                                 ("XNLI", "xnli"))},
                   xlabel, f"{label} (DAP, section 5): paper's claim: {claim}. Red star: the paper's reported default.")
    return spec, {key: lambda out: plot(out / key)}


def table6(ctx: ReportContext) -> Table:
    eff = read_json(ctx.results / "efficiency" / f"{ctx.store.registry.inits()[0]}.json")
    rep = ctx.reported["table6_efficiency"]
    rows = []
    for v in MAIN:
        e, p, p_tr = eff["variants"][v], rep[f"mBERT+{LABEL[v]}"], rep["mBERT+TR"]
        rows.append([LABEL[v], f"{e['forward_flops_per_sample']:.3g}", e["latency_ms_per_sample"],
                     e["flops_ratio_to_tr"], e["dense_tlm_flops_ratio_to_tr"], e["latency_ratio_to_tr"],
                     f"{p['gflops'] * 1e9:.3g}", p["latency_ms"], p["gflops"] / p_tr["gflops"],
                     p["latency_ms"] / p_tr["latency_ms"]])
    return Table("table6_efficiency", "Table 6: forward FLOPs and training latency per sample",
                 ["method", "FLOPs/sample ours", "ms ours", "FLOPs ×TR ours", "FLOPs ×TR ours, paper's basis",
                  "latency ×TR ours", "FLOPs/sample paper", "ms paper", "FLOPs ×TR paper", "latency ×TR paper"], rows,
                 [where(ctx), f"Ours measured by the workflow: init '{eff['init']}', batch {eff['batch_size']}, length "
                              f"{eff['max_length']}, {eff['device']} ({eff['threads']} threads), median of "
                              f"{eff['repeats']} steps. Paper: mBERT-base, batch 512 on 8 V100. Compare the ratios, "
                              "not the absolute values.",
                  "FLOPs ×TR, paper's basis: our TLM predicts the vocabulary at the masked positions only; the "
                  "paper's row (TR+TLM 33.7 G = 3.06 x TR) counts a masked-LM head at every position of the "
                  "concatenated pair, as BertForMaskedLM computes it; that column counts ours so "
                  "(papers/dap/efficiency.py)."])


def per_language(ctx: ReportContext, d: str, key: str, title: str) -> Table:
    init = ctx.store.registry.inits()[0]
    per = {v: [r["per_language"] for r in ctx.store.scores(v, TATOEBA, init)] for v in MAIN}
    langs = list(per["dap"][0])
    ordered = [lang for lang in XTREME_36 if lang in langs] + sorted(lang for lang in langs if lang not in XTREME_36)
    trained = set(ctx.manifest["train_languages"])
    rows = []
    for lang in ordered:
        iso1 = TO_ISO1.get(lang)
        ours = [stat([p[lang][d] for p in per[v]]) for v in MAIN]
        paper = [ctx.reported[key][f"{pm}+{LABEL[v]}"].get(iso1) if iso1 else None
                 for pm in paper_models(init) for v in MAIN]
        rows.append([lang, "yes" if lang in trained else "zero-shot", *ours, *paper])
    cols = ["language", "training data", *[f"ours {LABEL[v]}" for v in MAIN],
            *[f"{pm}+{LABEL[v]}" for pm in paper_models(init) for v in MAIN]]
    return Table(key, title, cols, rows,
                 [where(ctx, TATOEBA), "XTREME's 36 languages first, then the rest of Tatoeba v1."])


def figure1(ctx: ReportContext) -> tuple[Table, dict[str, Any]]:
    """Figure 1: token representations of Tatoeba pairs in the PCA plane, the initial encoder, TR and DAP side by
    side (the paper: TR and DAP from mBERT, 100 Arabic-English pairs, plots only), with what the plots show
    measured (papers/dap/tasks.py)."""
    init, seed = next(iter(ctx.cfg["encoders"])), ctx.cfg["seeds"][0]
    res = {m: ctx.store.scores(m, FIGURE1_TASK, init, [seed])[0] for m in FIGURE1_METHODS}
    rows = [[LABEL[m], r["tokens"], r["other_language_nearest_pct"], r["centroid_gap"]] for m, r in res.items()]
    first = next(iter(res.values()))
    lang = first["language"] + ("" if first["language"] == first["asked_language"] else
                                f" (no {first['asked_language']} pairs at this scale: its first Tatoeba language)")
    note = (f"The first {first['pairs']} Tatoeba pairs of {lang} and English; the last layer's token states without "
            f"special tokens, one PCA over both languages' tokens; encoder '{init}', seed {seed}. The paper (100 "
            "Arabic-English pairs, mBERT) shows the plots only: large misaligned areas after TR, removed by DAP's "
            "RTL. Nearest token of the other language: % of tokens whose nearest other token (cosine, full "
            "dimension) is of the other language (higher: better mixed). Centroid gap: the languages' centroids' "
            "distance in the plane over the mean distance of a token to its own centroid (lower: better aligned).")
    table = Table("figure1_tokens", "Figure 1: token representations of parallel pairs (PCA)",
                  ["model", "tokens", "nearest token of the other language %", "centroid gap"], rows,
                  [where(ctx, seed=seed), note])
    return table, res


def figure1_plot(res: dict[str, Any], out: Path) -> list[Path]:
    fig, axes = plt.subplots(1, len(res), figsize=(4.2 * len(res), 4))
    for ax, (m, r) in zip(axes, res.items()):
        for english, colour, name in ((False, "tab:red", r["language"]), (True, "tab:blue", "eng")):
            pts = [p for p in r["points"] if p["english"] == english]
            ax.scatter([p["x"] for p in pts], [p["y"] for p in pts], s=6, linewidths=0, color=colour, alpha=0.7,
                       label=name)
        ax.set_title(f"{LABEL[m]}: other-language NN {r['other_language_nearest_pct']:.0f} %", fontsize=9)
        ax.set_xticks([])
        ax.set_yticks([])
    axes[0].legend(fontsize=8, loc="best")
    fig.suptitle("Token representations of parallel pairs, PCA (colour = language)", fontsize=9)
    return save(fig, out / "figure1_tokens")


def claims(ctx: ReportContext) -> Table:
    """The paper's claims at this scale (``papers/dap/claims.py``)."""
    return claims_table(declare(ctx.cfg), ctx, f"The paper's claims at scale '{ctx.scale}': DAP against its baselines",
                        [where(ctx), f"Seeds {ctx.cfg['seeds']} (each row's count in its 'seeds' column); evaluation "
                         "identical for every method (no tuning toward a claim)."])


Output = tuple[Table | TableSpec, dict[str, Any]]  # a table and the figures drawn from it


def figure1_output(ctx: ReportContext) -> Output:
    table, res = figure1(ctx)
    return table, {"figure1_tokens": lambda out: figure1_plot(res, out)}


def build(ctx: ReportContext) -> tuple[list[Table | TableSpec], dict[str, Any]]:
    """Every output of the scale that the report's workflow target writes (``ctx.wants``), in the paper's order,
    each read only then: a target of its own (mini's ``section5``) has only its own runs' results."""
    makers: dict[str, Callable[[], Output]] = {}
    if ctx.cfg.get("figure1"):
        makers["figure1_tokens"] = partial(figure1_output, ctx)
    makers |= {
        "table1_tatoeba": lambda: (table1(ctx), {}),
        "table2_bucc_training": lambda: (bucc_table(ctx, "table2_bucc_training", "tune",
                                                    "Table 2: BUCC on the threshold-tuning split, optimal threshold"),
                                         {}),
        "table3_bucc_test": lambda: (bucc_table(ctx, "table3_bucc_test", "test",
                                                "Table 3: BUCC {test_split} split with the threshold from the tuning "
                                                "split"), {}),
        "table4_xnli": lambda: (table4(ctx), {})}
    section5 = section5_outputs(ctx.cfg.get("ablations", {}))  # the axes this scale's config ablates
    if "table5_direction" in section5:
        makers["table5_direction"] = lambda: (table5(ctx), {})
    for axis, key, xlabel in (("rho", "figure3_rho", "reconstruction ratio ρ"),
                              ("rtl_layers", "figure4_depth", "RTL head layers K")):
        if key in section5:
            makers[key] = partial(ablation_figure, ctx, axis, key, xlabel)
    makers |= {
        "table6_efficiency": lambda: (table6(ctx), {}),
        "table7_xx2en": lambda: (per_language(ctx, "xx2en", "table7_xx2en",
                                              "Table 7: Tatoeba accuracy per language, xx→en"), {}),
        "table8_en2xx": lambda: (per_language(ctx, "en2xx", "table8_en2xx",
                                              "Table 8: Tatoeba accuracy per language, en→xx"), {}),
        "claims": lambda: (claims(ctx), {})}
    tables: list[Table | TableSpec] = []
    figures: dict[str, Any] = {}
    for name, make in makers.items():
        if ctx.wants(name):
            table, drawn = make()
            tables.append(table)
            figures |= drawn
    return tables, figures


if __name__ == "__main__":
    main("dap", "DAP", partial(load_paper_config, "dap"), registry, build, HERE / "reported.yaml")
