# Evaluation: one results JSON per (run, task) of the run registry. The tasks every run has are
# evaluated in one job per run (the model is loaded once, shared embeddings computed once); a task
# only some runs have (MoCo-BERT's t-SNE, XNLI for single-encoder methods of the leaderboard) gets
# a job of its own. With eval.job_per_task (the paper scale), every task is a job of its own, so
# one failed or timed-out task (hours of XNLI fine-tuning) does not redo the others.
import os
import re

from common.report import curves

EVAL_DIR = f"{P.paper_results}/eval/{{init}}/{{method}}/seed{{seed}}"
COMMON_TASKS = ([] if CFG["eval"].get("job_per_task") else
                [t for t in next(iter(REG)).tasks if all(t in r.tasks for r in REG)])
EXTRA_TASKS = sorted({t for r in REG for t in r.tasks} - set(COMMON_TASKS))


rule evaluate:
    input:
        model=f"{P.paper_results}/models/{{init}}/{{method}}/seed{{seed}}/model",
        corpus=rules.corpus.output.manifest,
    output:
        [f"{EVAL_DIR}/{t}.json" for t in COMMON_TASKS],
    threads: TRAIN.get("threads", 1)
    resources:
        gpu=min(1, TRAIN.get("gpus", 0)),
        **job_resources(CFG, "evaluate"),
    params:
        tasks=[arg for t in COMMON_TASKS for arg in ("--task", t)],
        scale=SCALE,
        batch_size=CFG["eval"]["batch_size"],
        precision=CFG["eval"].get("precision", "fp32"),
        name=lambda wc: f"{EXPERIMENT}/{wc.init}/{wc.method}/seed{wc.seed}",
        out_dir=lambda wc: EVAL_DIR.format(init=wc.init, method=wc.method, seed=wc.seed),
        tensorboard=lambda wc: f"{P.run_dir(wc.init, wc.method, wc.seed)}/tensorboard",
    log:
        P.log("eval/{init}/{method}/seed{seed}/tasks"),
    benchmark:
        P.bench("eval/{init}/{method}/seed{seed}/tasks")
    shell:
        "OMP_NUM_THREADS={threads} python -m common.eval {params.tasks:q} --model-dir {input.model:q} "
        "--corpus {input.corpus:q} --scale {params.scale:q} --seed {wildcards.seed:q} --batch-size {params.batch_size:q} "
        "--precision {params.precision:q} --model-name {params.name:q} --out-dir {params.out_dir:q} "
        "--tensorboard {params.tensorboard:q} > {log:q} 2>&1"


use rule evaluate as evaluate_task with:
    output:
        f"{EVAL_DIR}/{{task}}.json",
    wildcard_constraints:
        task="|".join(map(re.escape, EXTRA_TASKS)) or "(?!)",
    resources:
        gpu=min(1, TRAIN.get("gpus", 0)),
        # at paper scale the census's figures for this (encoder, task) (figures/census/paper.json,
        # common/census/evaluation.py); the config's resources.evaluate otherwise
        **train_resources(CFG, EXPERIMENT, job=lambda wc: f"eval/{wc.init}/{wc.task}", ranks=1, stage="evaluate"),
    params:
        tasks=lambda wc: ["--task", wc.task],
        scale=SCALE,
        batch_size=CFG["eval"]["batch_size"],
        precision=CFG["eval"].get("precision", "fp32"),
        name=lambda wc: f"{EXPERIMENT}/{wc.init}/{wc.method}/seed{wc.seed}",
        out_dir=lambda wc: EVAL_DIR.format(init=wc.init, method=wc.method, seed=wc.seed),
        tensorboard=lambda wc: f"{P.run_dir(wc.init, wc.method, wc.seed)}/tensorboard",
    log:
        P.log("eval/{init}/{method}/seed{seed}/{task}"),
    benchmark:
        P.bench("eval/{init}/{method}/seed{seed}/{task}")


CURVE_JSONS = curves.point_paths(CFG, REG, P.paper_results)  # the learning curve's snapshot evaluations


rule learning_curve_point:
    """A snapshot of a run (``--snapshot_steps``) on the learning curve's task (common/report/curves.py)."""
    input:
        summary=f"{P.paper_results}/models/{{init}}/{{method}}/seed{{seed}}/summary.json",
        corpus=rules.corpus.output.manifest,
    output:
        f"{P.paper_results}/curve/{{init}}/{{method}}/seed{{seed}}/step{{step}}/{{task}}.json",
    threads: TRAIN.get("threads", 1)
    resources:
        **job_resources(CFG, "evaluate"),
    params:
        model=lambda wc: f"{P.run_dir(wc.init, wc.method, wc.seed)}/snapshots/step{wc.step}",
        scale=SCALE,
        batch_size=CFG["eval"]["batch_size"],
        precision=CFG["eval"].get("precision", "fp32"),
        out_dir=lambda wc, output: os.path.dirname(output[0]),
    log:
        P.log("curve/{init}/{method}/seed{seed}/step{step}/{task}"),
    benchmark:
        P.bench("curve/{init}/{method}/seed{seed}/step{step}/{task}")
    shell:
        "OMP_NUM_THREADS={threads} python -m common.eval --task {wildcards.task:q} --model-dir {params.model:q} "
        "--corpus {input.corpus:q} --scale {params.scale:q} --seed {wildcards.seed:q} --batch-size {params.batch_size:q} "
        "--precision {params.precision:q} --out-dir {params.out_dir:q} > {log:q} 2>&1"
