# Every table and figure of the experiment, the paper's numbers beside ours: REPORT_MODULE reads the
# results JSON of every run of the registry (and REPORT_INPUTS, e.g. DAP's Table 6 measurement).

from common.report import curves, vocabulary_table

EVAL_JSONS = [P.eval_json(r.init, r.method, r.seed, t) for r, t in REG.evaluations()]


def report_files(out, tables, figures):
    """What common.report.cli writes into ``out``: each table as CSV, Markdown and LaTeX (the claims table's records
    as JSON too: common/report/claim.py), each figure as PNG and PDF, and the index README.md."""
    return ([f"{out}/{t}.{ext}" for t in tables for ext in ("csv", "md", "tex")]
            + [f"{out}/claims.json" for t in tables if t == "claims"]
            + [f"{out}/{f}.{ext}" for f in figures for ext in ("png", "pdf")] + [f"{out}/README.md"])


# the tables and figures every report adds from the config (common/report/cli.py)
REPORT_FILES = report_files(P.figures, TABLES + ([vocabulary_table.NAME] if vocabulary_table.extended(CFG) else []),
                            FIGURES + ([curves.FIGURE] if CFG.get("learning_curve") else []))


rule report:
    input:
        evals=EVAL_JSONS,
        curve=CURVE_JSONS,
        corpus=rules.corpus.output.manifest,
        extra=REPORT_INPUTS,
    output:
        REPORT_FILES,
    params:
        module=REPORT_MODULE,
        scale=SCALE,
        results=P.paper_results,
        out=P.figures,
        extra=REPORT_ARGS,
    log:
        P.log("report"),
    benchmark:
        P.bench("report")
    shell:
        "python -m {params.module:q} --scale {params.scale:q} --results {params.results:q} --corpus {input.corpus:q} "
        "--out {params.out:q} {params.extra} > {log:q} 2>&1"
