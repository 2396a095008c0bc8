# Corpus preparation (every experiment): training pairs after the leakage rule, the mini-scale
# BUCC-style benchmark, and a manifest of the evaluation sets.
from common.training.provenance import digest


rule corpus:
    input:
        download_inputs(config),
    output:
        manifest=f"{P.corpus}/manifest.json",
        leakage=f"{P.corpus}/leakage.json",
    params:
        experiment=EXPERIMENT,
        scale=SCALE,
        data_root=config["data_root"],
        out=P.corpus,
        source=download_args(config),
        settings=digest(CFG["corpus"]),  # the module reads the config's corpus section: an edit reruns it
    resources:  # at paper scale mem_mb from the census (common/census/corpus.py)
        **train_resources(CFG, EXPERIMENT, job=lambda wc: "corpus", ranks=1, stage="corpus"),
    log:
        P.log("corpus"),
    benchmark:
        P.bench("corpus")
    shell:
        "python -m common.data.corpus --experiment {params.experiment:q} --scale {params.scale:q} "
        "--data-root {params.data_root:q} --out {params.out:q} {params.source:q} > {log:q} 2>&1"
