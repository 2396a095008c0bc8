# Reproducibility workflows for four cross-lingual sentence-embedding papers.
#   snakemake papers/dap/all --cores 2                      # smoke scale (default)
#   snakemake papers/dap/all --cores 2 --config scale=mini  # real data from data_root
#   snakemake papers/moco/all --cores 2                     # MoCo-BERT, likewise
# Each paper is a module; its rules are prefixed with the paper name (dap_train, dap_all, ...).
import os
import sys

from common.config import workflow_config

# Rules call `python -m ...`: make that the interpreter running Snakemake (the project's venv).
os.environ["PATH"] = os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")

configfile: os.path.join(workflow.basedir, "config", "config.yaml")
config.update(workflow_config(config))


module dap:
    snakefile: "papers/dap/workflow/Snakefile"
    config: config


use rule * from dap as dap_*


module moco:
    snakefile: "papers/moco/workflow/Snakefile"
    config: config


use rule * from moco as moco_*
