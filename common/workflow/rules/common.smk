# Included first by every experiment's Snakefile, after it has set EXPERIMENT, SCALE, CFG and REG.
from common.models import tokenizer_sides as tokenizers
from common.runs import INIT, saves_only
from common.workflow.launch import job_census_checkpointing, job_census_gpus, job_resources, shape as job_shape, train_resources
from common.models import hub
from common.workflow.paths import Paths, download_args, download_inputs, model_done

P = Paths(config["results_root"], config["figures_root"], SCALE, EXPERIMENT)
if config.get("gpus") is not None:  # the workflow config's override: ranks per node of every training and NMT job
    CFG["training"]["gpus"] = config["gpus"]
    CFG["training"]["job_gpus"] = "paper"  # every job on the override's count, none from the census's memory rule
    if "nmt" in CFG:
        CFG["nmt"]["recipe"]["gpus"] = config["gpus"]
if config.get("corpus"):  # the workflow config's corpus section (your own data, docs/data.md) replaces the scale's
    CFG["corpus"] = config["corpus"]
TRAIN = CFG["training"]
TRAIN_SHAPE = job_shape(TRAIN, config.get("launcher"))  # launcher, threads and Slurm resources of a training job
SAVE_SHAPE = job_shape(TRAIN, config.get("launcher"), INIT)  # ... and of a run that only saves its encoder


def train_variant(wc):
    """The variant a training job runs (TRAINS maps a leaderboard method to its paper's variant)."""
    return TRAINS(wc.method)[1]


def train_shape(wc):
    """The job shape of a training run: one rank for a run whose variant only saves its encoder
    (common.runs.saves_only); under training.job_gpus: memory at paper scale, the GPUs the census found for the job
    (common/census/shape.py); the config's for every other."""
    if saves_only(train_variant(wc)):
        return SAVE_SHAPE
    from_memory = job_census_gpus(CFG, EXPERIMENT, f"{wc.init}/{wc.method}")
    return TRAIN_SHAPE if from_memory is None else job_shape(TRAIN, config.get("launcher"), train_variant(wc), from_memory)


wildcard_constraints:
    init="[^/]+",
    method="[^/]+",
    seed=r"\d+",


def model_inputs(wc):
    """The pinned checkpoint downloads an encoder initialisation loads (none for a from-scratch encoder)."""
    return [model_done(config, hub.model(name).folder)
            for name in hub.models_of({"encoders": {wc.init: CFG["encoders"][wc.init]}})]
