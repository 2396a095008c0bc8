# Every table and figure of the experiment, the paper's numbers beside ours: REPORT_MODULE reads the
# results JSON of every run of the registry (and REPORT_INPUTS, e.g. DAP's Table 6 measurement). Where the scale's
# config splits the work into targets (common/targets.py), `report` writes the main target's outputs and
# the folder's README.md, and `report_<name>` those of target <name>, from that target's results alone.

from common.report import curves, vocabulary_table
from common.runs import MAIN_TARGET
from common.targets import outputs_of, split_targets



def eval_jsons(target):
    """The results JSON of every evaluation of workflow target ``target``."""
    return [P.eval_json(r.init, r.method, r.seed, t) for r, t in REG.evaluations(target)]


EVAL_JSONS = eval_jsons(MAIN_TARGET)


def report_files(out, tables, figures, target=MAIN_TARGET):
    """What common.report.cli writes into ``out`` for workflow target ``target``: each of its tables as CSV, Markdown
    and LaTeX (the claims table's records as JSON too: common/report/claim.py), each of its figures as PNG and PDF,
    and, for the main target, the index README.md."""
    tables, figures = outputs_of(CFG, target, tables), outputs_of(CFG, target, figures)
    return ([f"{out}/{t}.{ext}" for t in tables for ext in ("csv", "md", "tex")]
            + [f"{out}/claims.json" for t in tables if t == "claims"]
            + [f"{out}/{f}.{ext}" for f in figures for ext in ("png", "pdf")]
            + ([f"{out}/README.md"] if target == MAIN_TARGET else []))


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


for _target in split_targets(CFG):
    rule:
        name: f"report_{_target}"
        input:
            evals=eval_jsons(_target),
            corpus=rules.corpus.output.manifest,
        output:
            report_files(P.figures, TABLES, FIGURES, _target),
        params:
            module=REPORT_MODULE,
            scale=SCALE,
            results=P.paper_results,
            out=P.figures,
            extra=REPORT_ARGS,
            target=_target,
        log:
            P.log(f"report_{_target}"),
        benchmark:
            P.bench(f"report_{_target}")
        shell:
            "python -m {params.module:q} --scale {params.scale:q} --results {params.results:q} "
            "--corpus {input.corpus:q} --out {params.out:q} --target {params.target:q} {params.extra} > {log:q} 2>&1"
