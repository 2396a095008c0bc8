# The experiment's target (TARGET, e.g. papers/dap/all): a manifest (path, sha256, rule) of every
# artifact it produced. ALL_INPUTS: the experiment's other artifacts, by the rule that makes them.


rule all:
    input:
        corpus=rules.corpus.output,
        tokenizer=sorted({f"{P.paper_results}/tokenizer/{r.init}/{s}" for r in REG
                          for s in tokenizers.sides(CFG["encoders"][r.init])}),
        train=[f"{P.run_dir(r.init, r.method, r.seed)}/model" for r in REG],
        evaluate=EVAL_JSONS,
        report=REPORT_FILES,
        **ALL_INPUTS,
    output:
        TARGET,
    log:
        P.log("all"),
    benchmark:
        P.bench("all")
    run:
        from common.workflow.manifest import write_manifest

        groups = {name: list(files) if not isinstance(files, str) else [files] for name, files in input.items()}
        n = write_manifest(output[0], groups, f"{EXPERIMENT} artifacts, scale {SCALE}")
        with open(log[0], "w") as fh:
            fh.write(f"{n} artifacts listed in {output[0]}\n")
