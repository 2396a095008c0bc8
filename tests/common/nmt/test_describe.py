"""The NMT notes (common/nmt/describe.py) say what the config ran: the target dictionary, each final model's
updates and the random-init model's shape."""
from common.nmt import describe


def nmt(**recipe):
    base = {"stage1_max_update": 800, "stage1_patience": 4, "stage2_max_update": 400, "baseline_max_update": 1200,
            "baseline_arch": "transformer", "baseline_args": ["--encoder-layers", "3"]}
    return {"recipe": {**base, **recipe}, "encoder_seed": 1,
            "settings": {"low": {"systems": ["hictl", "random"], "finetune": ["de-en"], "tests": {}}}}


def test_updates_name_each_budget_and_say_when_they_are_equal():
    assert describe.updates(nmt(), "low") == (
        "Updates (low): pre-trained encoders: stage 1 at most 800 updates (on the setting's pairs together; stops "
        "after 4 validations without a better loss) + stage 2 400 per pair; random init: fairseq's transformer "
        "(--encoder-layers 3), at most 1,200 updates on the pair alone; the same number of updates for every final "
        "model.")
    text = describe.updates(nmt(baseline_max_update=1000, baseline_arch="same"), "low")
    assert "random init: the pre-trained model's shape, at most 1,000 updates" in text
    assert "the same number" not in text


def test_the_target_dictionary_is_named_with_its_size():
    assert describe.target_dictionary({**nmt(), "target_vocab": 8000}).startswith(
        "Target side: a dictionary of its own, 8,000 BPE pieces")
    assert describe.target_dictionary(nmt()).startswith("Target side: the encoder's own tokenizer")
