# Outside models (common/leaderboard/outside.py): the evaluation-only corpus, the models built here, their
# evaluations, and the target that scores them alone and rewrites the committed table (leaderboard/models).
from pathlib import Path


def rewrite_committed_table(params, corpus, log, output, flags, groups, description):
    """The report into the committed folder, keeping what it keeps of that folder's table (``--trained-from``, and
    ``flags``), then the target's manifest: ``groups`` of inputs and every file of the folder."""
    from common.workflow.manifest import write_manifest

    shell("python -m common.leaderboard.report --scale {params.scale:q} --results {params.results:q} "
          "--corpus {corpus:q} --out {params.out:q} --trained-from {params.out:q} {flags} {params.extra} > {log:q} 2>&1")
    outputs = sorted(str(p) for p in Path(params.out).rglob("*") if p.is_file())
    write_manifest(output[0], {**groups, "report": outputs}, description)

OUTSIDE_DIR = f"{P.paper_results}/outside"
OUTSIDE_TASKS = list(CFG["tasks"])
OUTSIDE_JSONS = [f"{OUTSIDE_DIR}/eval/{name}/{t}.json" for name in OUTSIDE for t in OUTSIDE_TASKS]


rule corpus_eval:
    """The evaluation data alone (common/data/corpus.py --evaluation-only): what the outside models are scored on."""
    input:
        download_inputs(config),
    output:
        manifest=f"{P.paper_results}/eval_corpus/manifest.json",
    params:
        data_root=config["data_root"],
        out=f"{P.paper_results}/eval_corpus",
        experiment=EXPERIMENT,
        scale=SCALE,
        source=download_args(config),
        settings=digest(CFG["corpus"]),
    resources:
        **job_resources(CFG, "corpus"),
    log:
        P.log("eval_corpus"),
    benchmark:
        P.bench("eval_corpus")
    shell:
        "python -m common.data.corpus --experiment {params.experiment:q} --scale {params.scale:q} --data-root {params.data_root:q} "
        "--out {params.out:q} {params.source:q} --evaluation-only > {log:q} 2>&1"


rule outside_model:
    """An outside model that the config builds here from a packaged one (outside_models.<name>.build)."""
    output:
        directory(f"{OUTSIDE_DIR}/models/{{name}}"),
    params:
        recipe=lambda wc: digest(OUTSIDE[wc.name].build),  # an edited recipe rebuilds it
        scale=SCALE,
    log:
        P.log("outside/{name}/build"),
    benchmark:
        P.bench("outside/{name}/build")
    shell:
        "python -m common.leaderboard.outside --scale {params.scale:q} --name {wildcards.name:q} --out {output:q} > {log:q} 2>&1"


def outside_model_input(wc):
    return [] if OUTSIDE[wc.name].spec else [f"{OUTSIDE_DIR}/models/{wc.name}"]


rule evaluate_outside:
    """Every task of the leaderboard on one outside model, truncated at eval.max_length as the trained methods are."""
    input:
        corpus=rules.corpus_eval.output.manifest,
        model=outside_model_input,
    output:
        [f"{OUTSIDE_DIR}/eval/{{name}}/{t}.json" for t in OUTSIDE_TASKS],
    wildcard_constraints:
        name="[^/]+",
    threads: TRAIN.get("threads", 1)
    resources:
        gpu=min(1, TRAIN.get("gpus", 0)),
        **job_resources(CFG, "evaluate"),
    params:
        tasks=[arg for t in OUTSIDE_TASKS for arg in ("--task", t)],
        model=lambda wc: OUTSIDE[wc.name].spec or f"{OUTSIDE_DIR}/models/{wc.name}",
        batch_size=CFG["eval"]["batch_size"],
        max_length=CFG["eval"]["max_length"],
        precision=CFG["eval"].get("precision", "fp32"),
        out_dir=lambda wc: f"{OUTSIDE_DIR}/eval/{wc.name}",
        tensorboard=lambda wc: f"{OUTSIDE_DIR}/tensorboard/{wc.name}",
        scale=SCALE,
    log:
        P.log("outside/{name}/eval"),
    benchmark:
        P.bench("outside/{name}/eval")
    shell:
        "OMP_NUM_THREADS={threads} python -m common.eval {params.tasks:q} --model {params.model:q} "
        "--max-length {params.max_length:q} --corpus {input.corpus:q} --scale {params.scale:q} --seed 1 "
        "--batch-size {params.batch_size:q} --precision {params.precision:q} --model-name {wildcards.name:q} "
        "--out-dir {params.out_dir:q} --tensorboard {params.tensorboard:q} > {log:q} 2>&1"


rule models:
    """The outside models alone: their rows join the committed table (figures/leaderboard/<scale>/leaderboard.csv),
    whose trained rows are kept as they are (no training, no corpus); every figure of the folder is rewritten."""
    input:
        evals=OUTSIDE_JSONS,
        corpus=rules.corpus_eval.output.manifest,
    output:
        MODELS_TARGET,
    params:
        results=P.paper_results,
        out=P.figures,
        extra=REPORT_ARGS,
        scale=SCALE,
        experiment=EXPERIMENT,
    log:
        P.log("models_report"),
    benchmark:
        P.bench("models_report")
    run:
        rewrite_committed_table(params, input.corpus, log, output, "", {"evaluate": list(input.evals)},
                                f"{params.experiment} outside models, scale {params.scale}")
