"""Training launchers and Slurm resources from the paper config."""
from common.workflow.launch import launcher, resources


def test_one_process_one_node_many_nodes():
    assert launcher({"gpus": 0}) == "python" and resources({"gpus": 0}) == {"gpu": 0}
    assert launcher({"gpus": 1}) == "python"
    assert launcher({"gpus": 8}) == "torchrun --standalone --nproc_per_node 8" and resources({"gpus": 8}) == {"gpu": 8}
    two = {"gpus": 4, "nodes": 2}
    assert launcher(two) == "srun python"
    assert resources(two) == {"gpu": 8, "nodes": 2, "tasks_per_node": 4, "mpi": "srun"}
