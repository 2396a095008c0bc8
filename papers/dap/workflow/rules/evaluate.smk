# Tatoeba, BUCC and XNLI for every trained model: one results JSON per (model, task, scale, seed).

rule evaluate:
    input:
        model=f"{P.paper_results}/models/{{init}}/{{variant}}/seed{{seed}}/model",
        corpus=rules.corpus.output.manifest,
    output:
        f"{P.paper_results}/eval/{{init}}/{{variant}}/seed{{seed}}/{{task}}.json",
    wildcard_constraints:
        task="tatoeba|bucc|xnli",
    threads: TRAIN.get("threads", 1)
    resources:
        gpu=min(1, TRAIN.get("gpus", 0)),
        **job_resources(CFG, "evaluate"),
    params:
        scale=SCALE,
    log:
        P.log("eval/{init}/{variant}/seed{seed}/{task}"),
    benchmark:
        P.bench("eval/{init}/{variant}/seed{seed}/{task}")
    shell:
        "OMP_NUM_THREADS={threads} python -m papers.dap.evaluate --task {wildcards.task} --scale {params.scale} "
        "--model-dir {input.model} --corpus {input.corpus} --variant {wildcards.variant} --init {wildcards.init} "
        "--seed {wildcards.seed} --out {output} > {log} 2>&1"
