# One tokenizer per language, then the DeepSpeed training runs.

from common.workflow.launch import job_resources, launcher, resources as launch_resources

TRAIN = CFG["training"]


def tokenizer_args(wildcards):
    enc = CFG["encoders"][wildcards.side]
    if enc.get("pretrained"):
        return f"--pretrained {enc['pretrained']}"
    tok = CFG["tokenizer"]
    return f"--side {wildcards.side} --vocab-size {tok['vocab_size']} --min-frequency {tok.get('min_frequency', 2)}"


rule tokenizer:
    input:
        rules.corpus.output.manifest,
    output:
        directory(f"{P.paper_results}/tokenizer/{{side}}"),
    wildcard_constraints:
        side="xx|en",
    params:
        args=tokenizer_args,
    log:
        P.log("tokenizer/{side}"),
    benchmark:
        P.bench("tokenizer/{side}")
    shell:
        "python -m common.models.tokenizer --corpus {input} {params.args} --out {output} > {log} 2>&1"


rule train:
    input:
        corpus=rules.corpus.output.manifest,
        tok_xx=f"{P.paper_results}/tokenizer/xx",
        tok_en=f"{P.paper_results}/tokenizer/en",
    output:
        model=directory(f"{P.paper_results}/models/pair/{{run}}/seed{{seed}}/model"),
        summary=f"{P.paper_results}/models/pair/{{run}}/seed{{seed}}/summary.json",
    params:
        scale=SCALE,
        run_dir=lambda wc: P.run_dir("pair", wc.run, wc.seed),
        launcher=launcher(TRAIN),
    threads: TRAIN.get("threads", 1)
    resources:
        **launch_resources(TRAIN),
        **job_resources(CFG, "train"),
    log:
        P.log("train/{run}/seed{seed}"),
    benchmark:
        P.bench("train/{run}/seed{seed}")
    shell:
        "OMP_NUM_THREADS={threads} {params.launcher} -m papers.moco.train --scale {params.scale} --run {wildcards.run} "
        "--seed {wildcards.seed} --corpus {input.corpus} --tokenizer_xx {input.tok_xx} --tokenizer_en {input.tok_en} "
        "--output_dir {params.run_dir} > {log} 2>&1"
