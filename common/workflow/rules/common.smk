# Included first by every experiment's Snakefile, after it has set EXPERIMENT, SCALE, CFG and REG.
from common.workflow import tokenizers
from common.workflow.launch import job_resources, launcher, resources as launch_resources
from common.workflow.paths import Paths

P = Paths(config["results_root"], config["figures_root"], SCALE, EXPERIMENT)
TRAIN = CFG["training"]


wildcard_constraints:
    init="[^/]+",
    method="[^/]+",
    seed=r"\d+",
