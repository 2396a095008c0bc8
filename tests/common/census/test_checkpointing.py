"""The census's choice of a job's activation checkpointing (common/census/checkpointing.py), on rows shaped by hand:
the cheaper candidate among those that fit one node from memory, the fewer GPUs on a near tie, full where none
fits; and the job's count under each candidate."""
from common.census.checkpointing import CANDIDATES, TIE, candidates, choose


def row(gpus: int, a100_hours: float, gpus_from: str = "memory", nodes: int = 1, fits: bool = True) -> dict:
    return {"gpus": gpus, "nodes": nodes, "gpus_from": gpus_from, "gpu_hours": {"a100": a100_hours},
            "fits": {"a100": fits}}


def test_the_cheaper_mode_that_fits_one_node():
    # VMSST's 24-layer model: selective 0.876x full's FLOPs on 8 GPUs against full on 1
    assert choose({"selective": row(8, 603.0), "full": row(1, 688.1)}) == "selective"
    assert choose({"selective": row(8, 700.0), "full": row(1, 688.1)}) == "full"


def test_a_mode_that_does_not_fit_is_not_chosen():
    # HICTL large: selective's batch fits no node; on the config's 8 GPUs, with no micro batches, it does not fit
    assert choose({"selective": row(8, 380.0, gpus_from="paper", fits=False), "full": row(4, 506.2)}) == "full"
    assert choose({"selective": row(8, 380.0, "paper", fits=False), "full": row(8, 506.2, "paper", fits=False)}) \
        == "full"
    # VMSST's larger Table 7 batches: on the config's 8 GPUs in micro-batches under either mode, both fit
    assert choose({"selective": row(8, 760.0, "paper"), "full": row(8, 865.0, "paper")}) == "selective"


def test_a_near_tie_goes_to_fewer_gpus():
    within = 100.0 * (1 + TIE / 2)
    assert choose({"selective": row(8, 100.0), "full": row(2, within)}) == "full"
    assert choose({"selective": row(8, 100.0), "full": row(2, 100.0 * (1 + 2 * TIE))}) == "selective"


def test_candidates():
    assert candidates({"gradient_checkpointing": "auto"}) == CANDIDATES == ("selective", "full")
    assert candidates({"gradient_checkpointing": True}) == (True,)
    assert candidates({}) == (False,)


def test_a_job_counted_under_each_candidate_and_an_earlier_count_reused():
    """``auto``: the probe runs once per candidate the earlier census lacks; the cheaper mode that fits is taken.
    A config's own mode: one count, an earlier row of the same kind reused."""
    from common.census.__main__ import counts_by_checkpointing

    probed = []

    def count(training):
        probed.append(training["gradient_checkpointing"])
        return {"optimizer_bytes": 1, "activation_fit": {}, "mode": training["gradient_checkpointing"]}

    def shape_row(counted, training):
        return row(8, 600.0) if counted["mode"] == "selective" else row(1, 690.0)

    chosen, by_mode = counts_by_checkpointing({"gradient_checkpointing": "auto"}, "vmsst", None, count, shape_row)
    assert chosen == "selective" and probed == ["selective", "full"] and set(by_mode) == {"selective", "full"}
    earlier = {"counted_by_checkpointing": {"full": {"optimizer_bytes": 1, "activation_fit": {}, "mode": "full"}}}
    probed.clear()
    counts_by_checkpointing({"gradient_checkpointing": "auto"}, "vmsst", earlier, count, shape_row)
    assert probed == ["selective"]  # full's count kept from the earlier census
    probed.clear()
    chosen, by_mode = counts_by_checkpointing({"gradient_checkpointing": True}, "vmsst", earlier, count, shape_row)
    assert chosen == "True" and probed == [True]  # an earlier census's choice is not a count of the config's mode
    probed.clear()
    kept = {"optimizer_bytes": 1, "activation_fit": {}, "mode": True}  # an earlier count of the config's mode
    counts_by_checkpointing({"gradient_checkpointing": True}, "vmsst", kept, count, shape_row)
    assert probed == []


def test_an_earlier_count_under_another_mode_is_not_reused():
    from common.census.__main__ import _earlier_count

    full = {"optimizer_bytes": 1, "activation_fit": {}, "counted_checkpointing": "True"}
    assert _earlier_count(full, True, False) is full
    assert _earlier_count(full, "selective", False) is None  # the config moved from full to selective: counted again
    legacy = {"optimizer_bytes": 1, "activation_fit": {}}  # a row from before rows named their mode
    assert _earlier_count(legacy, "selective", False) is legacy
    assert _earlier_count({"counted_by_checkpointing": {"full": full}}, "full", True) is full
    assert _earlier_count({"counted_by_checkpointing": {"full": full}}, "selective", True) is None
