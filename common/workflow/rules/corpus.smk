# Corpus preparation (every experiment): training pairs after the leakage rule, the mini-scale
# BUCC-style benchmark, and a manifest of the evaluation sets.
import json

from common.training.provenance import digest
from common.workflow import data_root as data_root_check


def data_root_checked(wc):
    """No input: every file this corpus job reads in place (data_root's folders, a config's own files) is there,
    checked while the DAG is built, so a dry run stops as a run would (common/workflow/data_root.py)."""
    return data_root_check.check(data_root_check.corpus_reads(CFG, config["data_root"]), config["data_root"],
                                 f"{EXPERIMENT}'s corpus job at scale {SCALE}")


rule corpus:
    input:
        download_inputs(config),
        data_root=data_root_checked,
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
        corpus=["--corpus", json.dumps(config["corpus"])] if config.get("corpus") else [],  # your own data
    resources:  # at paper scale mem_mb from the census (common/census/corpus.py)
        **train_resources(CFG, EXPERIMENT, job=lambda wc: "corpus", ranks=1, stage="corpus"),
    log:
        P.log("corpus"),
    benchmark:
        P.bench("corpus")
    shell:
        "python -m common.data.corpus --experiment {params.experiment:q} --scale {params.scale:q} "
        "--data-root {params.data_root:q} --out {params.out:q} {params.source:q} {params.corpus:q} > {log:q} 2>&1"
