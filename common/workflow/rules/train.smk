# DeepSpeed training: one job per run of the run registry (REG). TRAINS(method) names the paper
# whose train module runs it and that paper's method name (a paper: itself; the leaderboard: the
# method's registration).
from functools import cache

from common.config import load_experiment_config
from common.report import curves
from common.training.provenance import training_digest


def tokenizer_inputs(wc):
    enc = CFG["encoders"][wc.init]
    return [f"{P.paper_results}/tokenizer/{wc.init}/{s}" for s in tokenizers.sides(enc)]


def snapshot_steps(wc):
    """The snapshots a learning curve evaluates (config learning_curve; common/report/curves.py)."""
    steps = curves.curve_steps(CFG) if curves.on_curve(CFG, wc.method, wc.init) else []
    return ["--snapshot_steps", *map(str, steps)] if steps else []


@cache
def _training_digest(paper):
    return training_digest(load_experiment_config(EXPERIMENT, paper, SCALE))


def trained_settings(wc):
    """The digest of the config sections the run's training module reads (common/training/provenance.py): a change
    to them reruns the training through snakemake's params trigger."""
    return _training_digest(TRAINS(wc.method)[0])


def census_checkpointing(wc):
    """Under training.gradient_checkpointing: auto at paper scale, the checkpointing the census chose for the job
    (common/census/checkpointing.py); none where the config's own applies."""
    chosen = job_census_checkpointing(CFG, EXPERIMENT, f"{wc.init}/{wc.method}")
    return ["--gradient_checkpointing", chosen] if chosen else []


def rehearsed_time_limit(wc):
    """The rehearsal's simulated time limit, for the one run it names (training.rehearse_time_limit)."""
    r = TRAIN.get("rehearse_time_limit")
    return ["--rehearse_time_limit_at", str(r["at"])] if r and r["run"] == f"{wc.init}/{wc.method}" else []


rule train:
    input:
        corpus=rules.corpus.output.manifest,
        tokenizer=tokenizer_inputs,
        models=model_inputs,
    output:
        model=directory(f"{P.paper_results}/models/{{init}}/{{method}}/seed{{seed}}/model"),
        summary=f"{P.paper_results}/models/{{init}}/{{method}}/seed{{seed}}/summary.json",
    params:
        experiment=EXPERIMENT,
        scale=SCALE,
        module=lambda wc: f"papers.{TRAINS(wc.method)[0]}.train",
        method=lambda wc: TRAINS(wc.method)[1],
        tokenizer=lambda wc: tokenizers.folder(P.paper_results, wc.init, CFG["encoders"][wc.init]),
        run_dir=lambda wc: P.run_dir(wc.init, wc.method, wc.seed),
        launcher=lambda wc: train_shape(wc).command,
        rank_threads=lambda wc: train_shape(wc).rank_threads,
        rehearse=rehearsed_time_limit,
        snapshots=snapshot_steps,
        checkpointing=census_checkpointing,
        settings=trained_settings,
    threads: lambda wc: train_shape(wc).threads
    # the rehearsal's time limit ends one run's first attempt with EXIT_RESUME; the retry resumes. Otherwise (None:
    # no rule value, which would replace it) the command line's --retries applies: profiles/slurm's covers the
    # resubmissions the census expects of the longest job at its time limit (common/census/estimate.py)
    retries: 1 if TRAIN.get("rehearse_time_limit") else None
    resources:
        # the same resource names for every job (launch.shape); their values by job
        **{name: (lambda wc, name=name: train_shape(wc).resources[name]) for name in TRAIN_SHAPE.resources},
        # at paper scale: the census's figures (figures/census/paper.json), for the ranks of the job's shape
        **train_resources(CFG, EXPERIMENT, variant=train_variant),
    log:
        P.log("train/{init}/{method}/seed{seed}"),
    benchmark:
        P.bench("train/{init}/{method}/seed{seed}")
    shell:
        "OMP_NUM_THREADS={params.rank_threads} {params.launcher} -m {params.module:q} --experiment {params.experiment:q} --scale {params.scale:q} "
        "--method {params.method:q} --init {wildcards.init:q} --seed {wildcards.seed:q} --corpus {input.corpus:q} "
        "--tokenizer {params.tokenizer:q} --output_dir {params.run_dir:q} {params.rehearse:q} {params.snapshots:q} "
        "{params.checkpointing:q} > {log:q} 2>&1"
