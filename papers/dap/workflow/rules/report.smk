# Table 6 measurement, then every table and figure with the paper's numbers beside ours.

TABLES = ["table1_tatoeba", "table2_bucc_training", "table3_bucc_test", "table4_xnli", "table5_direction",
          "figure3_rho", "figure4_depth", "table6_efficiency", "table7_xx2en", "table8_en2xx", "claims"]
FIGURES = ["figure3_rho", "figure4_depth"]
REPORTED = str(Path(papers.dap.__file__).parent / "reported.yaml")
REPORT_FILES = ([f"{P.figures}/{t}.{ext}" for t in TABLES for ext in ("csv", "md", "tex")]
                + [f"{P.figures}/{f}.{ext}" for f in FIGURES for ext in ("png", "pdf")]
                + [f"{P.figures}/README.md"])


rule efficiency:
    input:
        corpus=rules.corpus.output.manifest,
        tokenizer=f"{P.paper_results}/tokenizer/{{init}}",
    output:
        f"{P.paper_results}/efficiency/{{init}}.json",
    threads: TRAIN.get("threads", 1)
    resources:
        gpu=lambda wc: min(1, TRAIN.get("gpus", 0)),
    params:
        scale=SCALE,
    log:
        P.log("efficiency/{init}"),
    benchmark:
        P.bench("efficiency/{init}")
    shell:
        "OMP_NUM_THREADS={threads} python -m papers.dap.efficiency --scale {params.scale} --init {wildcards.init} "
        "--corpus {input.corpus} --tokenizer {input.tokenizer} --out {output} > {log} 2>&1"


rule report:
    input:
        evals=[P.eval_json(i, v, s, t) for i, v, s in RUNS for t in TASKS],
        efficiency=f"{P.paper_results}/efficiency/{INITS[0]}.json",
        corpus=rules.corpus.output.manifest,
        reported=REPORTED,
    output:
        REPORT_FILES,
    params:
        scale=SCALE,
        results=P.paper_results,
        out=P.figures,
    log:
        P.log("report"),
    benchmark:
        P.bench("report")
    shell:
        "python -m papers.dap.report --scale {params.scale} --results {params.results} --corpus {input.corpus} "
        "--efficiency {input.efficiency} --out {params.out} > {log} 2>&1"
