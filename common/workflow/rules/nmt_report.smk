# The NMT tables and figures of the experiment in figures/<experiment>/<scale>/nmt/, a report of their own:
# NMT_REPORT_MODULE reads the BLEU JSONs of the NMT stage (nmt.smk's NMT_DONE) and needs none of the
# pre-training evaluations, so the two reports can be regenerated apart (e.g. in two sessions at mini scale).

from common.targets import NMT_TARGET, nmt_own_target

NMT_REPORT_DIR = f"{P.figures}/nmt"
NMT_OWN_TARGET = nmt_own_target(CFG)  # a workflow target of their own (common/targets.py)
NMT_REPORT_FILES = report_files(NMT_REPORT_DIR, NMT_TABLES, NMT_FIGURES)  # report.smk, included before this file


rule report_nmt:
    input:
        translations=NMT_DONE,
        corpus=rules.corpus.output.manifest,
        extra=NMT_REPORT_INPUTS,
    output:
        NMT_REPORT_FILES,
    params:
        module=NMT_REPORT_MODULE,
        scale=SCALE,
        results=P.paper_results,
        out=NMT_REPORT_DIR,
    log:
        P.log("report_nmt"),
    benchmark:
        P.bench("report_nmt")
    shell:
        "python -m {params.module:q} --scale {params.scale:q} --results {params.results:q} --corpus {input.corpus:q} "
        "--out {params.out:q} > {log:q} 2>&1"
