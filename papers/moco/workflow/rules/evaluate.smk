# Tatoeba, BUCC and STS for every run; t-SNE and nearest neighbours for the main model.

rule evaluate:
    input:
        model=f"{P.paper_results}/models/pair/{{run}}/seed{{seed}}/model",
        corpus=rules.corpus.output.manifest,
    output:
        f"{P.paper_results}/eval/pair/{{run}}/seed{{seed}}/{{task}}.json",
    wildcard_constraints:
        task="tatoeba|bucc|sts|tsne|neighbors",
    threads: TRAIN.get("threads", 1)
    resources:
        gpu=min(1, TRAIN.get("gpus", 0)),
        **job_resources(CFG, "evaluate"),
    params:
        scale=SCALE,
    log:
        P.log("eval/{run}/seed{seed}/{task}"),
    benchmark:
        P.bench("eval/{run}/seed{seed}/{task}")
    shell:
        "OMP_NUM_THREADS={threads} python -m papers.moco.evaluate --task {wildcards.task} --scale {params.scale} "
        "--model-dir {input.model} --corpus {input.corpus} --run {wildcards.run} --seed {wildcards.seed} "
        "--out {output} > {log} 2>&1"
