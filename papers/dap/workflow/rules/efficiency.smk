# Table 6 (section 5.4): FLOPs and training latency of TR, TR+TLM and DAP, measured on this machine.


rule efficiency:
    input:
        corpus=rules.corpus.output.manifest,
        tokenizer=tokenizer_inputs,
        models=model_inputs,
    output:
        f"{P.paper_results}/efficiency/{{init}}.json",
    threads: TRAIN.get("threads", 1)
    resources:
        gpu=min(1, TRAIN.get("gpus", 0)),
    params:
        scale=SCALE,
        tokenizer=lambda wc: tokenizers.folder(P.paper_results, wc.init, CFG["encoders"][wc.init]),
    log:
        P.log("efficiency/{init}"),
    benchmark:
        P.bench("efficiency/{init}")
    shell:
        "OMP_NUM_THREADS={threads} python -m papers.dap.efficiency --scale {params.scale:q} --init {wildcards.init:q} "
        "--corpus {input.corpus:q} --tokenizer {params.tokenizer:q} --out {output:q} > {log:q} 2>&1"
