"""Training launchers and Slurm job shapes from a config's training section (common/workflow/launch.py)."""
from types import SimpleNamespace

import pytest

from common.runs import INIT
from common.workflow.launch import shape


def test_one_process():
    for gpus in (0, 1):
        s = shape({"gpus": gpus, "threads": 4})
        assert s.command == "python" and s.threads == 4 and s.rank_threads == 4
    assert shape({"gpus": 0}).resources == {"gpu": 0}
    assert shape({"gpus": 1, "threads": 4}).resources == {"gpu": 1, "nodes": 1, "cpus_per_task": 4}


def test_one_node_many_gpus():
    s = shape({"gpus": 8, "threads": 6})
    assert s.command == "python -m common.distributed.launch --nproc 8"
    assert (s.threads, s.rank_threads) == (48, 6)  # one task holds the launcher and its 8 ranks
    assert s.resources == {"gpu": 8, "nodes": 1, "cpus_per_task": 48}


def test_many_nodes_and_srun_on_one():
    s = shape({"gpus": 4, "nodes": 2, "threads": 8})
    assert s.command == ("env -u SLURM_NTASKS_PER_GPU srun --nodes 2 --ntasks-per-node 4 --cpus-per-task 8 "
                         "--kill-on-bad-exit=1 --gres gpu:4 python")
    assert s.resources == {"nodes": 2, "tasks": 8, "gres": "gpu:4", "tasks_per_gpu": 1, "cpus_per_task": 8,
                           "mpi": "srun"}
    one = shape({"gpus": 2, "threads": 1, "launcher": "srun"})
    assert " srun --nodes 1 --ntasks-per-node 2 " in one.command and one.resources["tasks"] == 2
    assert shape({"gpus": 2, "threads": 1}, launcher="srun") == one  # the workflow config's override
    assert shape({"gpus": 1, "launcher": "srun"}).command == "python"  # one rank: nothing to fan out
    with pytest.raises(ValueError, match="launcher"):
        shape({"launcher": "mpirun"})


def test_a_run_that_only_saves_its_encoder_takes_one_rank_in_the_same_form():
    """Paper-scale ``init`` jobs asked for a training job's 8 GPUs to save the encoder as it starts. One rank now,
    with the same resource names as the training jobs (one Snakemake rule holds both)."""
    one = shape({"gpus": 8, "threads": 6}, method=INIT)
    assert one.command == "python" and (one.threads, one.rank_threads) == (6, 6)
    assert one.resources == {"gpu": 1, "nodes": 1, "cpus_per_task": 6}
    srun = shape({"gpus": 4, "nodes": 2, "threads": 8}, method=INIT)
    assert srun.command.endswith(" srun --nodes 1 --ntasks-per-node 1 --cpus-per-task 8 --kill-on-bad-exit=1 "
                                 "--gres gpu:1 python")
    # mpi=0: snakemake-executor-plugin-slurm refuses an MPI job of one task; the key stays, so the job-step plugin
    # does not wrap the script in an srun of its own
    assert srun.resources == {"nodes": 1, "tasks": 1, "gres": "gpu:1", "tasks_per_gpu": 1, "cpus_per_task": 8,
                              "mpi": 0}
    for training in ({"gpus": 8, "threads": 6}, {"gpus": 4, "nodes": 2, "threads": 8}, {"gpus": 0}, {"gpus": 2}):
        assert shape(training, method=INIT).resources.keys() == shape(training).resources.keys()
    assert shape({"gpus": 0, "threads": 2}, method=INIT) == shape({"gpus": 0, "threads": 2})  # CPU scales: unchanged


class _Resources(dict):
    __getattr__ = dict.get


def sbatch_call(training: dict) -> str:
    """The sbatch command line the Slurm executor builds for a training job of this shape (its GPU flags come from
    a function of their own)."""
    from snakemake_executor_plugin_slurm.submit_string import get_submit_command
    from snakemake_executor_plugin_slurm.utils import set_gres_string

    s = shape(training)
    job = SimpleNamespace(resources=_Resources(runtime=60, mem_mb=1000, **s.resources), threads=s.threads)
    params = {"run_uuid": "u", "slurm_logfile": "log", "comment_str": "c", "account": "", "partition": "",
              "workdir": "."}
    return get_submit_command(job, params) + set_gres_string(job)


def test_the_executor_submits_one_task_per_gpu():
    """The executor reads ``tasks`` as tasks *per GPU* for a GPU job; without ``tasks_per_gpu=1``
    a 2 x 4-GPU job asked for 8 tasks per GPU (64 ranks), which never fits (the local Slurm kept it pending)."""
    call = sbatch_call({"gpus": 4, "nodes": 2, "threads": 8}).split()
    assert {"--nodes=2", "--ntasks-per-gpu=1", "--ntasks=8", "--gres=gpu:4", "--cpus-per-task=8"} <= set(call)
    call = sbatch_call({"gpus": 8, "threads": 6}).split()
    assert {"--gpus=8", "--nodes=1", "--cpus-per-task=48"} <= set(call) and not any("ntasks-per" in a for a in call)


def test_the_slurm_executor_accepts_every_job_shape_the_srun_launcher_makes():
    """snakemake-executor-plugin-slurm builds the sbatch line from a job's resources, and refuses an MPI job of one
    task: the one-rank init job in srun form was refused there (seen on a local Slurm). Every srun shape, one rank
    or many, must pass its checks and ask for the tasks the job's own srun starts."""
    from snakemake_executor_plugin_slurm.submit_string import get_submit_command

    class Resources(dict):
        __getattr__ = dict.__getitem__

    params = {"run_uuid": "u", "slurm_logfile": "log", "comment_str": "c", "account": "", "partition": "",
              "workdir": "."}
    for training, method, tasks in (({"gpus": 4, "nodes": 2, "threads": 8}, "dap", 8),
                                    ({"gpus": 4, "nodes": 2, "threads": 8}, INIT, 1),
                                    ({"gpus": 2, "launcher": "srun"}, "tr", 2),
                                    ({"gpus": 2, "launcher": "srun"}, INIT, 1)):
        s = shape(training, method=method)
        job = SimpleNamespace(resources=Resources(s.resources), threads=s.threads)
        call = get_submit_command(job, params)
        assert "--ntasks-per-gpu=1" in call and f"--nodes={s.resources['nodes']}" in call, call
        assert (f"--ntasks={tasks}" in call) == (tasks > 1), call  # an MPI job names its tasks; one task: per GPU
        assert "mpi" in s.resources  # the job-step plugin leaves the script unwrapped: our own srun starts the ranks


def test_a_job_runs_on_the_gpus_the_census_found_from_memory(tmp_path):
    """Under ``training.job_gpus: memory`` at paper scale, a job's launcher and Slurm resources take the census's
    count for it (``gpus_from: memory``), in the config's form (the same resource names); a job the census lacks,
    or shaped otherwise, keeps the config's; other scales never read the census."""
    import json

    from common.workflow.launch import job_census_gpus, train_resources

    training = {"gpus": 8, "threads": 8, "job_gpus": "memory"}
    two, config = shape(training, method="tr", from_memory=2), shape(training, method="tr")
    assert two.command == "python -m common.distributed.launch --nproc 2" and config.resources["gpu"] == 8
    assert two.resources == {"gpu": 2, "nodes": 1, "cpus_per_task": 16}
    assert two.resources.keys() == config.resources.keys()
    one = shape(training, method="tr", from_memory=1)
    assert one.command == "python" and one.resources == {"gpu": 1, "nodes": 1, "cpus_per_task": 8}
    srun = shape({**training, "launcher": "srun"}, method="tr", from_memory=2)
    assert "--ntasks-per-node 2" in srun.command and srun.resources["tasks"] == 2
    assert shape({**training, "job_gpus": "paper"}, method="tr", from_memory=2).resources["gpu"] == 8
    path = tmp_path / "paper.json"
    row = {"paper": "dap", "job": "mbert/tr", "gpus": 2, "nodes": 1, "gpus_from": "memory", "mem_mb": 30000,
           "runtime_minutes": 900}
    path.write_text(json.dumps({"jobs": [row, {**row, "job": "mbert/dap", "gpus": 8, "gpus_from": "paper"}]}))
    cfg = {"scale": "paper", "training": training, "resources": {"train": {"mem_mb": 1, "runtime": 2}}}
    assert job_census_gpus(cfg, "dap", "mbert/tr", path) == 2
    assert job_census_gpus(cfg, "dap", "mbert/dap", path) is None and job_census_gpus(cfg, "dap", "x/y", path) is None
    assert job_census_gpus({**cfg, "scale": "mini"}, "dap", "mbert/tr", path) is None
    # the Slurm figures: as counted for the census's 2 GPUs; on the paper's 8 (job_gpus: paper), rescaled
    wc = SimpleNamespace(init="mbert", method="tr")
    res = train_resources(cfg, "dap", path)
    assert (res["mem_mb"](wc), res["runtime"](wc)) == (30000, 900)
    res = train_resources({**cfg, "training": {**training, "job_gpus": "paper"}}, "dap", path)
    assert (res["mem_mb"](wc), res["runtime"](wc)) == (120000, 225)


def test_a_job_takes_the_checkpointing_the_census_chose(tmp_path):
    """Under ``training.gradient_checkpointing: auto`` at paper scale, a job runs the census's choice for it (the
    train rule passes ``--gradient_checkpointing``); a job the census did not choose for, another setting and
    another scale run the config's own."""
    import json

    from common.workflow.launch import job_census_checkpointing

    path = tmp_path / "paper.json"
    row = {"paper": "vmsst", "job": "l24/vmsst", "gpus": 8, "nodes": 1, "gpus_from": "memory",
           "checkpointing": "selective"}
    path.write_text(json.dumps({"jobs": [row, {**row, "job": "mt5/vmsst", "checkpointing": "full"},
                                         {k: v for k, v in row.items() if k != "checkpointing"} | {"job": "l6/x"}]}))
    cfg = {"scale": "paper", "training": {"gradient_checkpointing": "auto"}}
    assert job_census_checkpointing(cfg, "vmsst", "l24/vmsst", path) == "selective"
    assert job_census_checkpointing(cfg, "vmsst", "mt5/vmsst", path) == "full"
    assert job_census_checkpointing(cfg, "vmsst", "l6/x", path) is None  # counted under the config's own
    assert job_census_checkpointing(cfg, "vmsst", "no/such", path) is None
    assert job_census_checkpointing({**cfg, "training": {"gradient_checkpointing": True}}, "vmsst", "l24/vmsst",
                                    path) is None
    assert job_census_checkpointing({**cfg, "scale": "rehearsal"}, "vmsst", "l24/vmsst", path) is None
