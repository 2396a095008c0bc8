# The experiment's target (TARGET, e.g. papers/dap/all): a manifest (path, sha256, rule) of every
# artifact it produced. ALL_INPUTS: the experiment's other artifacts, by the rule that makes them. Where the scale's
# config splits the work (common/targets.py), TARGET builds the main target's runs and outputs and
# papers/<p>/<name> (beside TARGET) those of target <name>.


def write_target_manifest(input, output, log, description):
    """A target's output: the manifest of its inputs by group (common/workflow/manifest.py), the count in its log."""
    from common.workflow.manifest import write_manifest

    groups = {name: list(files) if not isinstance(files, str) else [files] for name, files in input.items()}
    n = write_manifest(output[0], groups, description)
    with open(log[0], "w") as fh:
        fh.write(f"{n} artifacts listed in {output[0]}\n")


def model_dirs(target):
    """The saved model of every run of workflow target ``target``."""
    return [f"{P.run_dir(r.init, r.method, r.seed)}/model" for r in REG.runs(target)]


rule all:
    input:
        corpus=rules.corpus.output,
        tokenizer=sorted({f"{P.paper_results}/tokenizer/{r.init}/{s}" for r in REG
                          for s in tokenizers.sides(CFG["encoders"][r.init])}),
        train=model_dirs(MAIN_TARGET),
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
        write_target_manifest(input, output, log, f"{EXPERIMENT} artifacts, scale {SCALE}")


for _target in split_targets(CFG):
    rule:
        name: f"target_{_target}"
        input:
            train=model_dirs(_target),
            evaluate=eval_jsons(_target),
            report=report_files(P.figures, TABLES, FIGURES, _target),
        output:
            f"{TARGET.rsplit('/', 1)[0]}/{_target}",
        params:
            description=f"{EXPERIMENT} artifacts of target {_target}, scale {SCALE}",
        log:
            P.log(f"target_{_target}"),
        benchmark:
            P.bench(f"target_{_target}")
        run:
            write_target_manifest(input, output, log, params.description)


# `snakemake <experiment>_preflight --config scale=paper` (or the top-level `snakemake preflight`): what a
# submission would miss (downloads, hand-placed files, data root, imports, GPUs, memory, disk;
# common/workflow/preflight.py), checked before anything is submitted. No output: it runs whenever it is named.
rule preflight:
    input:
        download_inputs(config),
    params:
        experiment=EXPERIMENT,
        scale=SCALE,
        source=download_args(config),
        runs=len(REG),
        gpu_kind=["--gpu-kind", config["gpu_kind"]] if config.get("gpu_kind") else [],
    log:
        P.log("preflight"),
    benchmark:
        P.bench("preflight")
    localrule: True
    shell:
        "python -m common.workflow.preflight --experiment {params.experiment:q} --scale {params.scale:q} --data-root {config[data_root]:q} "
        "--results-root {config[results_root]:q} --cache-root {config[cache_root]:q} {params.source:q} --runs {params.runs:q} "
        "{params.gpu_kind:q} 2>&1 | tee {log:q}"
