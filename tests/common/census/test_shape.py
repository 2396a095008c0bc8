"""A training job's GPU count from memory (common/census/shape.py), on hand-worked examples."""
from common.census import estimate as est
from common.census import shape


def test_the_fewest_gpus_whose_memory_holds_the_batch_by_hand():
    """100 M parameters under AdamW at ZeRO 0: 4 + 4 + 8 bytes each, 1.6 GB on every GPU. Activations 0.5 GB plus
    0.1 GB per row; a global batch of 1,024 rows. One GPU: 1.6 + 0.5 + 102.4 = 104.5 GB > 80; two: 1.6 + 0.5 + 51.2
    = 53.3 GB <= 80: two GPUs."""
    states = sum(est.model_state_bytes(100_000_000, 100_000_000, est.optimizer_bytes("adamw", 100_000_000, [], 0), 0,
                                       1).values())
    assert states == 1.6e9
    acts = est.Linear(0.5e9, 0.1e9)
    assert shape.memory_gpus(1024, lambda n: states, acts.at) == 2
    # a micro batch of at most 256 rows: one micro batch needs 1,024 / 256 = 4 GPUs (1.6 + 0.5 + 25.6 GB)
    assert shape.memory_gpus(1024, lambda n: states, acts.at, micro_cap=256) == 4
    # ZeRO partitions the optimizer: 8 GB of it on one GPU, 4 on two; 0.25 GB per row: one GPU 8 + 0.5 + 256 = no,
    # two 4 + 0.5 + 128 = no, four 2 + 0.5 + 64 = 66.5 GB: four
    assert shape.memory_gpus(1024, lambda n: 8e9 / n, est.Linear(0.5e9, 0.25e9).at) == 4
    # no GPU count of one node holds it (8: 0.5 + 0.25 x 128 x 4 = 128.5 GB): none, the job keeps the config's
    assert shape.memory_gpus(1024, lambda n: 0.0, est.Linear(0.5e9, 1e9).at) is None
    # only counts that divide the batch: 6 rows of 30 GB, two GPUs hold 90 GB each (no); four and eight do not
    # divide 6, so none (each rank's share is whole rows)
    assert shape.memory_gpus(6, lambda n: 0.0, est.Linear(0, 30e9).at) is None
    assert shape.memory_gpus(6, lambda n: 0.0, est.Linear(0, 20e9).at) == 2  # 3 x 20 = 60 GB


def test_the_memory_budget_is_80_gb():
    """80 GB is 80 x 10^9 bytes: a job at 75 GiB (80.5 GB) does not fit one GPU, one at 74 GiB does."""
    assert shape.memory_gpus(2, lambda n: 0.0, lambda rows: rows / 2 * 75 * est.GIB) == 2
    assert shape.memory_gpus(2, lambda n: 0.0, lambda rows: rows / 2 * 74 * est.GIB) == 1
