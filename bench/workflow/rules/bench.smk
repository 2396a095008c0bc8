# The benchmark rules (included by bench/workflow/Snakefile at the scales the benchmarks have).
from snakemake.exceptions import WorkflowError

CFG = load_bench_config(SCALE)
# the machine's name is a wildcard that only bench/all fills in (machine() may ask CUDA, and loading the workflow
# must not import torch: tests/test_workflow.py)
OUT = f"{config['figures_root']}/bench/{{machine}}/{SCALE}"
RESULTS = f"{config['results_root']}/{SCALE}/bench"
NAMES = ["train_step", "encode", "mining", "overheads", "scaling"]
PLOTS = {"mining": "mining_time", "scaling": "scaling"}
try:  # every benchmark job takes all the cores Snakemake was given, so none run (and time) at once
    BENCH_THREADS = workflow.cores
except WorkflowError:  # a cluster executor (no --cores): one job per node, the config's thread count
    BENCH_THREADS = CFG["threads"]


wildcard_constraints:
    machine=r"[^/]+",


def here(wildcards):
    """The output folder of a benchmark job (its machine wildcard filled in)."""
    return OUT.format(machine=wildcards.machine)


def outputs(name):
    files = [f"{OUT}/{name}.json", f"{OUT}/{name}.md"]
    return files + [f"{OUT}/{PLOTS[name]}.{ext}" for ext in ("png", "pdf")] if name in PLOTS else files


def per_machine(name):
    """The log and benchmark folder of job ``name``: a benchmark or its report is one per machine."""
    return f"{SCALE}/bench/{{machine}}" if name in (*NAMES, "report") else f"{SCALE}/bench"


def log(name):
    return f"logs/{per_machine(name)}/{name}.log"


def bench(name):
    return f"benchmarks/{per_machine(name)}/{name}.tsv"


rule all:
    input:
        lambda wc: expand([*(f for n in NAMES for f in outputs(n)), f"{OUT}/README.md"], machine=machine()),
    output:
        "bench/all",
    log:
        log("all"),
    benchmark:
        bench("all")
    run:
        from common.workflow.manifest import write_manifest

        n = write_manifest(output[0], {"bench": list(input)}, f"benchmarks, scale {SCALE}, machine {machine()}")
        with open(log[0], "w") as fh:
            fh.write(f"{n} artifacts listed in {output[0]}\n")


def bucc_set_reads(wc):
    """No input: the data_root files the BUCC-style set is built from are there (checked as the DAG is built)."""
    from pathlib import Path

    from common.config import load_paper_config
    from common.data import bucc_mini
    from common.workflow.data_root import check

    spec = load_paper_config("dap", "mini")["corpus"]["mini"]["bucc"] | {"pairs": CFG["mining"]["bucc_pairs"]}
    return check(bucc_mini.reads(Path(config["data_root"]), spec), config["data_root"], "the benchmarks' BUCC-style set")


rule bucc_set:
    input:
        bucc_set_reads,
    output:
        directory(f"{RESULTS}/bucc"),
    params:
        data_root=config["data_root"],
        pairs=CFG["mining"]["bucc_pairs"],
    log:
        log("bucc_set"),
    benchmark:
        bench("bucc_set")
    shell:
        "python -m bench.bucc_set --data-root {params.data_root:q} --pairs {params.pairs:q} --out {output:q} > {log:q} 2>&1"


rule train_step:
    output:
        outputs("train_step"),
    threads: BENCH_THREADS
    params:
        out=here,
        c=CFG["train_step"],
        threads=CFG["threads"],
    log:
        log("train_step"),
    benchmark:
        bench("train_step")
    shell:
        "python -m bench.train_step --out {params.out:q} --threads {params.threads:q} --batch {params.c[batch]:q} "
        "--max-length {params.c[max_length]:q} --warmup {params.c[warmup]:q} --steps {params.c[steps]:q} "
        "--rounds {params.c[rounds]:q} --precision {params.c[precision]:q} > {log:q} 2>&1"


rule encode:
    output:
        outputs("encode"),
    threads: BENCH_THREADS
    params:
        out=here,
        c=CFG["encode"],
        threads=CFG["threads"],
    log:
        log("encode"),
    benchmark:
        bench("encode")
    shell:
        "python -m bench.encode --out {params.out:q} --threads {params.threads:q} --sentences {params.c[sentences]:q} "
        "--batch {params.c[batch]:q} --max-length {params.c[max_length]:q} --rounds {params.c[rounds]:q} "
        "--precision {params.c[precision]:q} > {log:q} 2>&1"


rule mining:
    input:
        bucc=rules.bucc_set.output,
    output:
        outputs("mining"),
    threads: BENCH_THREADS
    params:
        out=here,
        c=CFG["mining"],
        sizes=list(map(str, CFG["mining"]["sizes"])),
        flat_max=CFG["mining"].get("flat_max", 0),
        threads=CFG["threads"],
    log:
        log("mining"),
    benchmark:
        bench("mining")
    shell:
        "python -m bench.mining --out {params.out:q} --threads {params.threads:q} --sizes {params.sizes:q} --dim {params.c[dim]:q} "
        "--k {params.c[k]:q} --approx {params.c[approx]:q} --flat-max {params.flat_max:q} --bucc-dir {input.bucc:q} "
        "> {log:q} 2>&1"


rule overheads:
    output:
        outputs("overheads"),
    threads: BENCH_THREADS
    params:
        out=here,
        c=CFG["overheads"],
        threads=CFG["threads"],
    log:
        log("overheads"),
    benchmark:
        bench("overheads")
    shell:
        "python -m bench.overheads --out {params.out:q} --threads {params.threads:q} --batch {params.c[batch]:q} "
        "--max-length {params.c[max_length]:q} --warmup {params.c[warmup]:q} --repeats {params.c[repeats]:q} "
        "--precision {params.c[precision]:q} > {log:q} 2>&1"


rule scaling:
    output:
        outputs("scaling"),
    threads: BENCH_THREADS
    params:
        out=here,
        c=CFG["scaling"],
        batches=list(map(str, CFG["scaling"]["batches"])),
        processes=list(map(str, CFG["scaling"]["processes"])),
        threads=CFG["threads"],
    log:
        log("scaling"),
    benchmark:
        bench("scaling")
    shell:
        "python -m bench.scaling --out {params.out:q} --threads {params.threads:q} --batches {params.batches:q} "
        "--processes {params.processes:q} --process-batch {params.c[process_batch]:q} "
        "--max-length {params.c[max_length]:q} --warmup {params.c[warmup]:q} --steps {params.c[steps]:q} > {log:q} 2>&1"


rule report:
    input:
        [f"{OUT}/{n}.json" for n in NAMES],
    output:
        f"{OUT}/README.md",
    params:
        out=here,
    log:
        log("report"),
    benchmark:
        bench("report")
    shell:
        "python -m bench.report --dir {params.out:q} " + " ".join(NAMES) + " > {log:q} 2>&1"
