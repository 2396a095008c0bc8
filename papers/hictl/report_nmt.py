"""HICTL's machine-translation tables and figure (section 4.2, Tables 4-6, Figure 3's two stages), from the NMT
stage's BLEU JSONs (:mod:`common.nmt.plan`), the paper's numbers beside ours, in ``figures/hictl/<scale>/nmt/``
(a report of its own, rule ``report_nmt``: it needs the NMT stages and one pre-trained encoder, not the
pre-training evaluations of :mod:`papers.hictl.report`).

* ``table5_low_resource`` -- our systems on the low-resource setting's pairs (stage 2 models; random init trained
  per pair) beside the paper's Table 5: a result goes under the paper's column when it is the paper's test set
  ('<test> <pair>', e.g. "IWSLT'14 De→En"), the other test sets follow; BLEU flavour per test set as the config's
  ``nmt.tokenized_bleu`` says (multi-bleu for IWSLT'14 En<->De and WMT, as the paper; sacreBLEU otherwise);
* ``table_nmt_tests`` -- every model on every test set (stage 1 and stage 2), with its BLEU signature;
* ``table4_high_resource`` -- the paper's Table 4, and our ``high_resource`` setting's rows where the scale has one;
* ``table6_transfer`` -- fine-tuned on one pair, tested on other source languages into English, beside Table 6;
* ``figure_nmt_training`` -- validation loss over updates, stage 1 then stage 2 (the switch marked), pre-trained
  encoder against random init;
* ``claims`` -- pre-trained above random init, stage 2 above stage 1, the logit bias, with intervals over the test
  sentences.
"""
from __future__ import annotations

from functools import partial
from pathlib import Path

from common.config import PAPER_SCALES, load_paper_config
from common.io import read_json
from common.nmt import describe
from common.nmt import plan as plan
from common.nmt.logs import validation_curve
from common.nmt.settings import NMTSettings
from common.report.claim import claims_table
from common.report.cli import main
from common.report.context import ReportContext
from common.report.figures import plt, save
from common.report.tables import Table, leakage_note
from papers.hictl.claims import nmt_declare
from papers.hictl.names import LABEL, NAMES, TEST_LABELS, arrow
from papers.hictl.report import HERE
from papers.hictl.runs import registry


def label(system: str, labels: dict[str, str]) -> str:
    if system == plan.RANDOM:
        return "ours: random init"
    run = plan.pretrained_run(system)
    base = labels.get(run, system) if run else system
    return f"ours: {base}" + (", no logit bias" if system.endswith(plan.NOBIAS) else "")


def load(ctx, t: plan.Translation) -> dict:
    """A translation's BLEU file (a bad or outdated one: an error naming it)."""
    return describe.read_result(ctx.cfg["nmt"], t.path(str(ctx.results)))


def final_model(system: str, pair: str) -> str:
    return pair if system == plan.RANDOM else f"stage2-{pair}"


def column(t: plan.Translation) -> str:
    """A result's column: '<test label> <pair>' -- the paper's column name where the paper has that test set."""
    return f"{TEST_LABELS.get(t.test, t.test)} {arrow(t.pair)}"


def system_rows(ctx, setting: str, labels: dict[str, str], paper_cols: list[str], n_paper: int = 0) -> tuple:
    """Our rows of a setting (final models: stage 2, or random init trained on the pair) with the paper's columns
    first and then every other test set we translate; returns (extra columns, rows)."""
    nmt, spec = ctx.cfg["nmt"], ctx.cfg["nmt"]["settings"].get(setting)
    if not spec:
        return [], []
    finals = [t for t in plan.translations(nmt) if t.setting == setting and t.model == final_model(t.system, t.pair)]
    extra = list(dict.fromkeys(column(t) for t in finals if column(t) not in paper_cols))
    rows = []
    for system in spec["systems"]:
        cells = {column(t): load(ctx, t)["main_score"] for t in finals if t.system == system}
        rows.append([label(system, labels), "ours", *[None] * n_paper, *[cells.get(c) for c in paper_cols],
                     *[cells.get(c) for c in extra]])
    return extra, rows


def encoder_note(ctx) -> str:
    nmt = ctx.cfg["nmt"]
    inits = "; ".join(f"{setting}: '{plan.encoder_init(nmt, setting, ctx.cfg['encoders'])}' with a "
                      f"{NMTSettings.from_config(plan.settings(nmt, setting, plan.RANDOM)).decoder_layers}-layer "
                      "decoder"
                      for setting in nmt["settings"])
    return (f"Ours: scale '{ctx.scale}'; the pre-trained encoders of seed {nmt['encoder_seed']} of encoder setting "
            f"per setting ({inits}); NMT seed {nmt.get('seed', 1)} (one run per "
            "system); label smoothing 0.1 (fairseq's Transformer recipe; the paper says only 'log-likelihood'). "
            "[CLS]-vocabulary bias (section 3.2, 'aggregate them with the logits ... through an element-wise "
            "additive operation'; no scale given): the cosine between the encoder's final [CLS] state and each "
            "word's input embedding, added at scale 1 (our choice: a bias in [-1, 1] shifts no logit by more than "
            "the unscaled similarity the paper describes, and the decoder's output layer can outweigh it; "
            "common/nmt/fairseq_plugin/model.py). " + batch_note(ctx)
            + " The encoders' pre-training corpus: " + leakage_note(ctx.manifest))


def batch_note(ctx) -> str:
    """The batches and precisions the NMT runs had (their done.json), and where they differ from the plan
    (``tokens_per_update``: --update-freq reaches it on fewer GPUs; a CPU run has one process)."""
    seen: dict[str, set[str]] = {}
    for done in sorted(Path(ctx.results, "nmt").rglob("done.json")):
        b = read_json(done).get("batch")
        if not b:
            continue
        text = (f"{b['max_tokens']} tokens x {b['processes']} process(es) x update-freq {b['update_freq']} = "
                f"{b['tokens_per_update']} target tokens per update, {b['precision']}")
        if b["planned_tokens_per_update"] and b["tokens_per_update"] != b["planned_tokens_per_update"]:
            text += f" (NOT the planned {b['planned_tokens_per_update']})"
        seen.setdefault(text, set()).add(done.relative_to(Path(ctx.results, "nmt")).parts[0])
    if not seen:
        return ""
    return "Batch as run: " + "; ".join(f"{text} [{', '.join(sorted(s))}]" for text, s in seen.items()) + "."


def bleu_note(ctx) -> str:
    tokenized = ctx.cfg["nmt"].get("tokenized_bleu", [])
    return ("BLEU of the final models (stage 2; random init: trained on the pair alone). "
            + (f"Tokenized BLEU (multi-bleu on Moses tokens, as the paper for IWSLT'14 En<->De and WMT) for "
               f"{', '.join(tokenized)}; " if tokenized else "")
            + "sacreBLEU for the rest (signatures in table_nmt_tests). " + describe.target_dictionary(ctx.cfg["nmt"])
            + " " + " ".join(describe.updates(ctx.cfg["nmt"], setting) for setting in ctx.cfg["nmt"]["settings"]))


def table5(ctx, labels: dict[str, str]) -> Table:
    paper_cols = list(ctx.reported["table5_columns"])
    extra, ours = system_rows(ctx, "low_resource", labels, paper_cols)
    rows = [[name, "paper", *vals, *[None] * len(extra)] for name, vals in ctx.reported["table5"].items()] + ours
    notes = [bleu_note(ctx), encoder_note(ctx)]
    if ctx.scale not in PAPER_SCALES:
        notes.append("The paper's pairs (IWSLT'14 En<->De / En->Es, WMT'16 Ro->En, IWSLT'17) are paper-scale data "
                     "(not available offline); at this scale we train on Multi30k (small, image-caption domain), so "
                     "the IWSLT'14 and newstest cells measure out-of-domain transfer.")
    return Table("table5_low_resource", "Table 5: BLEU on low-resource pairs", ["model", "source", *paper_cols,
                 *extra], rows, notes)


def decoding(r: dict) -> str:
    """A translation result's decoding settings; the output length cap where it is not fairseq's 200 tokens."""
    a, b = plan.max_len(r)
    cap = "" if (a, b) == plan.FAIRSEQ_MAX_LEN else f", at most {a:g} x source + {b:g} tokens"
    return f"beam {r['beam']}, lenpen {r['lenpen']}{cap}"


def table_tests(ctx, labels: dict[str, str]) -> Table:
    rows = []
    for t in plan.translations(ctx.cfg["nmt"]):
        r = load(ctx, t)
        tok = r.get("tokenized_bleu", {}).get("bleu")
        rows.append([t.setting, label(t.system, labels), t.model, arrow(t.pair), TEST_LABELS.get(t.test, t.test),
                     r["sacrebleu"]["bleu"], tok, r["n"], decoding(r)])
    return Table("table_nmt_tests", "Every NMT model on every test set (BLEU)",
                 ["setting", "system", "model", "pair", "test set", "sacreBLEU", "tokenized BLEU", "sentences",
                  "decoding"], rows, [scoring_note(ctx), "tokenized BLEU: multi-bleu on Moses-tokenized text "
                                      "(common/nmt/bleu.py).", "Decoding: section 4.2's beam 4 / length penalty 0.6 "
                                      "for WMT'14 En->De, beam 5 / 1.0 otherwise.", encoder_note(ctx)])


def scoring_note(ctx) -> str:
    """Each sacreBLEU signature with the pair / test sets it scored (the tokenizer follows the target language,
    the case the benchmark: common/nmt/bleu.py), and why a test was lower-cased."""
    by_sig: dict[str, set[str]] = {}
    cases: dict[str, set[str]] = {}
    for t in plan.translations(ctx.cfg["nmt"]):
        r = load(ctx, t)
        by_sig.setdefault(r["sacrebleu"]["signature"], set()).add(f"{arrow(t.pair)} {TEST_LABELS.get(t.test, t.test)}")
        if r.get("case", "cased") != "cased":
            cases.setdefault(r["case"], set()).add(TEST_LABELS.get(t.test, t.test))
    sigs = "; ".join(f"{sig} ({', '.join(sorted(used))})" for sig, used in by_sig.items())
    return (f"sacreBLEU signatures: {sigs}." + "".join(f" {why[0].upper()}{why[1:]} ({', '.join(sorted(tests))})."
                                                    for why, tests in cases.items()))


def table4(ctx, labels: dict[str, str]) -> Table:
    cols = list(ctx.reported["table4_columns"])
    n_layers = sum(1 for c in cols if c.endswith("layers"))
    extra, ours = system_rows(ctx, "high_resource", labels, cols[n_layers:], n_layers)
    rows = [[name, "paper", *vals, *[None] * len(extra)] for name, vals in ctx.reported["table4"].items()] + ours
    notes = ["Ours: WMT'14 En->De / En->Fr (4.5M / 36M pairs, newstest2014), paper scale only; like the paper's "
             "rows, the 24-layer HICTL (large) with a 6-layer decoder (Table 4's layers column; its caption: 'the "
             "best version of HiCTL'; section 4.2's prose says 'with the base setting' for both tables and a "
             "4-layer decoder: we follow the table), where Table 5 fine-tunes HICTL Base with the prose's 4-layer "
             "decoder; the "
             "random-init baseline is Transformer big (dropout 0.3 for En->De, 0.1 for En->Fr: Vaswani et al. "
             "2017)." if ours else
             "Ours: WMT'14 En->De / En->Fr (4.5M / 36M pairs) are paper-scale data; at this scale the paper's "
             "numbers only."]
    if ours:
        notes += [bleu_note(ctx), encoder_note(ctx)]
    return Table("table4_high_resource", "Table 4: BLEU on high-resource pairs (WMT'14)",
                 ["model", "source", *cols, *extra], rows, notes)


def table6(ctx, labels: dict[str, str]) -> Table:
    """Every setting named ``transfer*`` (one fine-tuning pair each), beside the paper's Table 6."""
    nmt = ctx.cfg["nmt"]
    transfer = {name: spec for name, spec in nmt["settings"].items() if name.startswith("transfer")}
    langs = []
    for block in ctx.reported["table6"].values():
        for vals in block.values():
            langs += [x for x in vals if x not in langs]
    ours: dict[tuple[str, str], dict[str, float]] = {}
    for t in plan.translations(nmt):
        spec = transfer.get(t.setting)
        if spec and t.model == final_model(t.system, spec["finetune"][0]):
            src = t.pair.split("-")[0]
            if src not in langs:
                langs.append(src)
            if t.test == plan.tests_of(spec, t.pair, t.system)[0]:
                ours.setdefault((t.setting, t.system), {})[src] = load(ctx, t)["main_score"]
    rows = [[ft, name, "paper", *[vals.get(x) for x in langs]] for ft, block in ctx.reported["table6"].items()
            for name, vals in block.items()]
    for setting, spec in transfer.items():
        ft = f"fine-tuned on {arrow(spec['finetune'][0])}"
        rows += [[ft, label(s, labels), "ours", *[ours.get((setting, s), {}).get(x) for x in langs]]
                 for s in spec["systems"]]
    notes = ["BLEU into English of a model fine-tuned on one pair only (the paper: 'no bi-text for the target pair').",
             "Ours: " + ("the first test set of each pair; random init is the paper's 'always near 0' reference."
                         if transfer else "not run at this scale.")]
    if ours:
        notes += [bleu_note(ctx), encoder_note(ctx)]
    if transfer and ctx.scale not in PAPER_SCALES:
        notes.append("Unlike the paper's It/Nl, our transfer languages are in the pre-training corpus with English "
                     "translations (the sentence-level CTL aligned them); the NMT stages never see their bi-text.")
    return Table("table6_transfer", "Table 6: zero-shot MT via language transfer (BLEU, X→En)",
                 ["fine-tuned on", "model", "source", *[f"{NAMES.get(x, x)}→En" for x in langs]], rows, notes)


def training_figure(ctx, out: Path) -> list[Path]:
    spec = ctx.cfg["nmt"]["settings"].get("low_resource") or next(iter(ctx.cfg["nmt"]["settings"].values()))
    setting = "low_resource" if "low_resource" in ctx.cfg["nmt"]["settings"] else next(iter(ctx.cfg["nmt"]["settings"]))
    pair = spec["finetune"][0]
    fig, ax = plt.subplots(figsize=(6, 3.4))
    root = str(ctx.results)
    for k, system in enumerate(s for s in spec["systems"] if not s.endswith(plan.NOBIAS)):
        if system == plan.RANDOM:
            curve = validation_curve(Path(plan.checkpoint(root, setting, system, pair)))
            ax.plot([p["update"] for p in curve], [p["loss"] for p in curve], color=f"C{k}", marker="o", ms=3,
                    label="random init")
            continue
        s1 = validation_curve(Path(plan.checkpoint(root, setting, system, "stage1")))
        s2 = validation_curve(Path(plan.checkpoint(root, setting, system, f"stage2-{pair}")))
        end = s1[-1]["update"] if s1 else 0
        ax.plot([p["update"] for p in s1], [p["loss"] for p in s1], color=f"C{k}", marker="o", ms=3,
                label=f"{system}: stage 1 (all pairs)")
        # markers: a short stage 2 may validate once (one point, no line)
        ax.plot([end + p["update"] for p in s2], [p["loss"] for p in s2], color=f"C{k}", linestyle="--", marker="s",
                ms=4, label=f"{system}: stage 2 ({arrow(pair)}, its own validation set)")
        ax.axvline(end, color=f"C{k}", alpha=0.3)
    ax.set_xlabel("update")
    ax.set_ylabel("validation loss")
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    ax.set_title(f"NMT training, {setting} (stage 1: encoder frozen; vertical line: switch to stage 2)", fontsize=8)
    return save(fig, out / "figure_nmt_training")


def claims(ctx: ReportContext) -> Table:
    """The NMT claims at this scale (``papers/hictl/claims.py``: ``nmt_declare``)."""
    return claims_table(nmt_declare(ctx.cfg), ctx, f"The paper's NMT claims at scale '{ctx.scale}'",
                        [encoder_note(ctx)], interval_note=(
                            "One seed per NMT model: the interval holds the test sentences' part only (a bootstrap of "
                            "corpus BLEU from their statistics, on each pair's first test set, 1000 replicates) and "
                            "says nothing of another seed. Verdict: 'holds' when the interval lies above zero, "
                            "'reversed' below, else 'inconclusive'."))


def build(ctx: ReportContext):
    tables = [table4(ctx, LABEL), table5(ctx, LABEL), table6(ctx, LABEL), table_tests(ctx, LABEL), claims(ctx)]
    return tables, {"figure_nmt_training": lambda out: training_figure(ctx, out)}


if __name__ == "__main__":
    main("hictl", "HICTL machine translation", partial(load_paper_config, "hictl"), registry, build,
         HERE / "reported.yaml", pretraining=False)
