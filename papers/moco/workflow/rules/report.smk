# Every table and figure, the paper's numbers beside ours.

TABLES = ["table1_tatoeba", "table2_bucc", "table3_sts_wmean", "table8_sts_all", "figure2_queue",
          "table4_temperature", "table5_momentum", "table6_pooling", "figure3_tsne", "table10_neighbors", "claims"]
FIGURES = ["figure2_queue", "figure3_tsne"]
REPORT_FILES = ([f"{P.figures}/{t}.{ext}" for t in TABLES for ext in ("csv", "md", "tex")]
                + [f"{P.figures}/{f}.{ext}" for f in FIGURES for ext in ("png", "pdf")]
                + [f"{P.figures}/README.md"])


rule report:
    input:
        evals=EVALS,
        corpus=rules.corpus.output.manifest,
        reported=str(Path(papers.moco.__file__).parent / "reported.yaml"),
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
        "python -m papers.moco.report --scale {params.scale} --results {params.results} --corpus {input.corpus} "
        "--out {params.out} > {log} 2>&1"
