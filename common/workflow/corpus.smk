# Shared corpus preparation (included by every paper module): training pairs after the
# leakage rule, the mini-scale BUCC-style benchmark, and a manifest of evaluation sets.

from common.workflow.launch import job_resources


rule corpus:
    output:
        manifest=f"{P.corpus}/manifest.json",
        leakage=f"{P.corpus}/leakage.json",
    params:
        scale=SCALE,
        data_root=config["data_root"],
        out=P.corpus,
        paper=PAPER,
    resources:
        **job_resources(CFG, "corpus"),
    log:
        P.log("corpus"),
    benchmark:
        P.bench("corpus")
    shell:
        "python -m common.data.corpus --paper {params.paper} --scale {params.scale} --data-root {params.data_root} "
        "--out {params.out} > {log} 2>&1"
