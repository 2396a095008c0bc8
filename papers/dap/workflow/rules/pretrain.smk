# Tokenizer and DeepSpeed pre-training runs.

from common.workflow.launch import job_resources, launcher, resources as launch_resources

TRAIN = CFG["training"]


rule tokenizer:
    input:
        rules.corpus.output.manifest,
    output:
        directory(f"{P.paper_results}/tokenizer/{{init}}"),
    params:
        args=lambda wc: (f"--pretrained {CFG['encoders'][wc.init]['pretrained']}"
                         if CFG["encoders"][wc.init].get("pretrained")
                         else f"--vocab-size {CFG['tokenizer']['vocab_size']} "
                              f"--min-frequency {CFG['tokenizer'].get('min_frequency', 2)}"),
    log:
        P.log("tokenizer/{init}"),
    benchmark:
        P.bench("tokenizer/{init}")
    shell:
        "python -m common.models.tokenizer --corpus {input} {params.args} --out {output} > {log} 2>&1"


rule train:
    input:
        corpus=rules.corpus.output.manifest,
        tokenizer=f"{P.paper_results}/tokenizer/{{init}}",
    output:
        model=directory(f"{P.paper_results}/models/{{init}}/{{variant}}/seed{{seed}}/model"),
        summary=f"{P.paper_results}/models/{{init}}/{{variant}}/seed{{seed}}/summary.json",
    params:
        scale=SCALE,
        run_dir=lambda wc: P.run_dir(wc.init, wc.variant, wc.seed),
        launcher=launcher(TRAIN),
    threads: TRAIN.get("threads", 1)
    resources:
        **launch_resources(TRAIN),
        **job_resources(CFG, "train"),
    log:
        P.log("train/{init}/{variant}/seed{seed}"),
    benchmark:
        P.bench("train/{init}/{variant}/seed{seed}")
    shell:
        "OMP_NUM_THREADS={threads} {params.launcher} -m papers.dap.train --scale {params.scale} --variant {wildcards.variant} "
        "--init {wildcards.init} --seed {wildcards.seed} --corpus {input.corpus} --tokenizer {input.tokenizer} "
        "--output_dir {params.run_dir} > {log} 2>&1"
