"""Training launchers and Slurm job shapes from a config's training section (common/workflow/launch.py)."""
import pytest

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
    assert s.command == ("srun --nodes 2 --ntasks-per-node 4 --cpus-per-task 8 --kill-on-bad-exit=1 --gres gpu:4 "
                         "python")
    assert s.resources == {"nodes": 2, "tasks": 8, "gres": "gpu:4", "cpus_per_task": 8, "mpi": "srun"}
    one = shape({"gpus": 2, "threads": 1, "launcher": "srun"})
    assert one.command.startswith("srun --nodes 1 --ntasks-per-node 2 ") and one.resources["tasks"] == 2
    with pytest.raises(ValueError, match="launcher"):
        shape({"launcher": "mpirun"})
