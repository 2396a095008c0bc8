# Included first by every experiment's Snakefile, after it has set EXPERIMENT, SCALE, CFG and REG.
from common.workflow import tokenizers
from common.workflow.launch import job_resources, shape as job_shape
from common.workflow.paths import Paths

P = Paths(config["results_root"], config["figures_root"], SCALE, EXPERIMENT)
TRAIN = CFG["training"]
TRAIN_SHAPE = job_shape(TRAIN)  # launcher, threads and Slurm resources of a training job


wildcard_constraints:
    init="[^/]+",
    method="[^/]+",
    seed=r"\d+",
