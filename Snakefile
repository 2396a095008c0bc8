# Reproducibility workflows for four cross-lingual sentence-embedding papers, and a leaderboard across them.
#   snakemake all --cores 2                                  # every paper and the leaderboard, smoke scale (default)
#   snakemake papers/dap/all --cores 2                       # one paper
#   snakemake papers/dap/all --cores 2 --config scale=mini   # real data from data_root
#   snakemake papers/dap/section5 --cores 2 --config scale=mini   # a scale's other target (the config's targets)
#   snakemake leaderboard/all --cores 2                      # every method on equal terms
#   snakemake claims --cores 2                               # every paper's claims and verdicts -> figures/claims/
#   snakemake bench/all --cores 2                            # speed against the peers -> figures/bench/<machine>/
#   snakemake papers/dap/all --cores 2 --config scale=rehearsal   # the paper scale's code paths on a CPU
#   snakemake data --cores 2 --config data_root=DIR          # data_root rebuilt from its public sources
#   snakemake site --cores 1                                 # the figures as a static site: site/index.html
# Each experiment is a module; its rules are prefixed with its name (dap_train, moco_report, leaderboard_all, ...).
import os
import sys

from common.config import LEADERBOARD, load_paper_config, papers, workflow_config
from common.report.site import stamp as site_stamp
from common.workflow.paths import download_args, download_inputs
from common.targets import extra_targets

# Rules call `python -m ...`: make that the interpreter running Snakemake (the project's venv).
os.environ["PATH"] = os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")
# ... and keep the working directory off its sys.path (Python 3.11's safe path): the targets papers/<p>/all make a
# papers/<p>/ folder there, which, outside the repository (`--directory`), shadows the installed package and broke
# `python -m papers.dap.train` for every job scheduled after a paper's `all` (measured in the smoke run).
os.environ["PYTHONSAFEPATH"] = "1"

configfile: os.path.join(workflow.basedir, "config", "config.yaml")
config.update(workflow_config(config))
# One cache for every job (common/models/hub.py): pinned checkpoints are downloaded by the 'model' rule only; a job
# that would reach the Hub itself fails instead (offline), and anything else Hugging Face caches stays here too.
os.environ["XLING_CACHE"] = os.path.abspath(config["cache_root"])
os.environ["HF_HOME"] = os.path.join(os.environ["XLING_CACHE"], "hf")
os.environ["HF_HUB_OFFLINE"] = "1"

include: "common/workflow/rules/downloads.smk"
include: "common/workflow/rules/data.smk"
# Every paper is a folder with a workflow (papers/<p>/workflow/Snakefile), found here: adding a paper adds a folder,
# removing it removes the folder. The leaderboard and the benchmarks are experiments of their own.
PAPERS = papers()
EXPERIMENTS = {**{p: f"papers/{p}/workflow/Snakefile" for p in PAPERS},
               LEADERBOARD: "common/leaderboard/workflow/Snakefile", "bench": "bench/workflow/Snakefile"}


# a paper's scale may split its work into more targets than papers/<p>/all (common/targets.py): its config's
# `targets`, and its NMT tables where `nmt.own_target` says so
# (the leaderboard's NMT column, target leaderboard/nmt where it is one of its own, is not among them: it rewrites
# the table leaderboard/all writes, so the two run one after the other, in either order: docs/leaderboard.md)
SPLIT_TARGETS = [f"papers/{p}/{t}" for p in papers(config["scale"])
                 for t in extra_targets(load_paper_config(p, config["scale"]))]


rule all:
    input:
        [f"papers/{p}/all" for p in PAPERS] + SPLIT_TARGETS + ["leaderboard/all"],
    default_target: True


rule claims:  # every paper's declared claims at this scale with their reports' verdicts (common/report/claims_index.py)
    input:
        [f"papers/{p}/all" for p in PAPERS],
    output:
        md=f"{config['figures_root']}/claims/{config['scale']}.md",
        json=f"{config['figures_root']}/claims/{config['scale']}.json",
    log:
        f"logs/{config['scale']}/claims.log",
    benchmark:
        f"benchmarks/{config['scale']}/claims.tsv"
    localrule: True
    shell:
        "python -m common.report.claims_index --scale {config[scale]:q} --figures {config[figures_root]:q} > {log:q} 2>&1"


rule preflight:  # every experiment's preflight: `snakemake preflight --config scale=paper` (one per experiment:
    input:         # `snakemake dap_preflight ...`; common/workflow/preflight.py)
        download_inputs(config),
    params:
        experiments=[*papers(config["scale"]), LEADERBOARD],  # the papers with a config at this scale
        source=download_args(config),
        gpu_kind=["--gpu-kind", config["gpu_kind"]] if config.get("gpu_kind") else [],
    log:
        f"logs/{config['scale']}/preflight.log",
    benchmark:
        f"benchmarks/{config['scale']}/preflight.tsv"
    localrule: True
    shell:
        "python -m common.workflow.preflight --experiment {params.experiments:q} --scale {config[scale]:q} "
        "--data-root {config[data_root]:q} --results-root {config[results_root]:q} --cache-root {config[cache_root]:q} "
        "{params.source:q} {params.gpu_kind:q} 2>&1 | tee {log:q}"


rule site:  # the results to browse, one page each, no server: open site/index.html (common/report/site.py)
    output:  # the site's stamp names the figures it was written from: a changed figure makes this rule run again
        f"site/{site_stamp(config['figures_root'])}",
    params:
        figures=config["figures_root"],
    log:
        "logs/site.log",
    benchmark:
        "benchmarks/site.tsv"
    localrule: True
    shell:
        "python -m common.report.site --figures {params.figures:q} --out site > {log:q} 2>&1"


def census_reads(wc):
    """No input: NTREX-128, whose sentences size the corpus jobs' memory, is in data_root (checked as the DAG is
    built; common/census/corpus.py)."""
    from pathlib import Path

    from common.workflow.data_root import check

    return check([Path(config["data_root"]) / "ntrex128" / "*-eng.tsv.gz"], config["data_root"], "the census")


rule census:  # what every paper-scale job needs, counted from the code (common/census); the paper-scale
    input:       # train rules take their runtime and mem_mb from the JSON (common/workflow/launch.py)
        census_reads,
    output:
        md="figures/census/paper.md",
        json="figures/census/paper.json",
    log:
        "logs/census.log",
    benchmark:
        "benchmarks/census.tsv"
    localrule: True
    shell:
        "python -m common.census --data-root {config[data_root]:q} --out figures/census/paper > {log:q} 2>&1"


# each experiment as a module, its rules prefixed with its name (dap_train, moco_report, leaderboard_all, ...)
for experiment, snakefile in EXPERIMENTS.items():
    rule_prefix = f"{experiment}_"

    module:
        name: experiment
        snakefile: snakefile
        config: config

    use rule * from experiment as rule_prefix*
