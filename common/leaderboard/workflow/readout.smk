# The readout check (common/eval/readout.py) of the methods the config's `readout` lists: every seed's saved model
# read as saved, as the pooled backbone without its head, and mean-centred; the table's notes give the numbers.
READOUT_DIR = f"{P.paper_results}/readout"
READOUT_METHODS = [method(m).name for m in CFG.get("readout", []) if m in CFG["methods"]]  # method(): registered
READOUT_JSONS = [f"{READOUT_DIR}/{m}.json" for m in READOUT_METHODS]


def readout_models(wc):
    return [f"{P.run_dir(r.init, r.method, r.seed)}/model" for r in REG.runs() if r.method == wc.method]


rule readout:
    """The readout check on one method's saved models (every seed): Tatoeba accuracy and the mean cosine of random
    non-parallel pairs per readout, the head's top/median singular value ratio."""
    input:
        corpus=rules.corpus.output.manifest,
        models=readout_models,
    output:
        f"{READOUT_DIR}/{{method}}.json",
    wildcard_constraints:
        method="[^/]+",
    threads: TRAIN.get("threads", 1)
    resources:
        **job_resources(CFG, "evaluate"),
    params:
        batch_size=CFG["eval"]["batch_size"],
    log:
        P.log("readout/{method}"),
    benchmark:
        P.bench("readout/{method}")
    shell:
        "OMP_NUM_THREADS={threads} python -m common.eval.readout {input.models:q} --corpus {input.corpus:q} "
        "--batch-size {params.batch_size:q} --out {output:q} > {log:q} 2>&1"
