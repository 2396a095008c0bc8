"""TensorBoard events beside metrics.jsonl: the logged scalars at their steps, purged after the step a run resumes
from, and evaluation scores under eval/."""
import pytest
import torch
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from common.io import DataFormatError
from common.training.metrics_log import read_metrics, write_eval_scores
from common.training.trainer import Trainer, TrainingArguments
from tests.common.training.test_precision import EXAMPLES, Tiny, collate


def scalars(folder, tag):
    acc = EventAccumulator(str(folder))
    acc.Reload()
    return {e.step: e.value for e in acc.Scalars(tag)}


def test_events_follow_the_run_and_its_resume(tmp_path):
    args = lambda **kw: TrainingArguments(output_dir=str(tmp_path), max_steps=6, global_batch_size=4,
                                          learning_rate=1e-2, log_every=1, save_every=2, **kw)
    Trainer(Tiny(), EXAMPLES, collate, args(stop_after=3)).train()  # killed after step 3, checkpoint at step 2
    Trainer(Tiny(), EXAMPLES, collate, args()).train()
    loss = scalars(tmp_path / "tensorboard", "train/loss")
    assert sorted(loss) == [1, 2, 3, 4, 5, 6]  # step 3 was purged and written again, once
    assert set(scalars(tmp_path / "tensorboard", "train/examples_per_s")) == {1, 2, 3, 4, 5, 6}
    jsonl = [line for line in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    assert len(jsonl) == 6
    write_eval_scores(tmp_path / "tensorboard", 6, "tatoeba@cosine", {"main_score": 42.5, "languages": ["x"]})
    assert scalars(tmp_path / "tensorboard" / "eval", "eval/tatoeba@cosine/main_score") == {6: 42.5}


def test_logged_scalars_are_detached_and_moved_to_the_training_device():
    """A scalar a model builds on the CPU (VMSST's KL weight, HICTL's p_avg) joins the others on the training device
    before the ranks' mean (on CUDA, torch.stack of mixed devices failed the first GPU rehearsal); "meta" stands in
    for the GPU on a CPU machine. Non-scalars and non-tensors are not logged."""
    from common.training.trainer import logged_scalars

    loss = torch.tensor(2.0, requires_grad=True) * 3
    got = logged_scalars({"loss": loss, "kl_weight": torch.tensor(0.5), "logits": torch.ones(2, 3), "n": 4},
                         torch.device("meta"))
    assert sorted(got) == ["kl_weight", "loss"]
    assert all(v.device.type == "meta" and not v.requires_grad for v in got.values())


def test_read_metrics_reads_a_folder_or_its_file_and_names_the_bad_line(tmp_path):
    (tmp_path / "metrics.jsonl").write_text('{"step": 1, "loss": 2.5}\n\n{"step": 2, "loss": 2.25}\n')
    assert read_metrics(tmp_path) == read_metrics(tmp_path / "metrics.jsonl") == [
        {"step": 1, "loss": 2.5}, {"step": 2, "loss": 2.25}]  # the blank line is skipped
    for bad, why in (('{"step": 3, "loss": 2.', "invalid JSON"), ('{"loss": 2.0}', 'integer "step"'),
                     ('[3, 2.0]', 'integer "step"')):
        (tmp_path / "metrics.jsonl").write_text('{"step": 1, "loss": 2.5}\n\n' + bad + "\n")
        with pytest.raises(DataFormatError, match=f"metrics.jsonl:3: .*{why}"):
            read_metrics(tmp_path)


def test_a_resume_drops_the_lines_after_its_step_and_a_torn_last_line(tmp_path, caplog):
    """A run stopped while it appended a line leaves that line without its newline; the resumed run drops it (with
    a warning) with the other lines after its step, instead of failing on it."""
    from common.training.metrics_log import MetricsLog

    (tmp_path / "metrics.jsonl").write_text('{"step": 1, "loss": 3.0}\n{"step": 2, "loss": 2.5}\n'
                                            '{"step": 3, "loss": 2.0}\n{"step": 4, "lo')
    m = MetricsLog(tmp_path, enabled=True, tensorboard=False)
    with caplog.at_level("WARNING"):
        m.start(2)
    assert "torn last line" in caplog.text
    assert (tmp_path / "metrics.jsonl").read_text() == '{"step": 1, "loss": 3.0}\n{"step": 2, "loss": 2.5}\n'
    assert not list(tmp_path.glob("*.tmp*"))  # rewritten through a temporary file, renamed into place


def test_a_run_retried_from_step_0_starts_its_log_anew(tmp_path):
    """A job that died before its first checkpoint and is started again (a Slurm retry) trains from step 0: the
    first attempt's lines, a torn one included, would otherwise stay in front of the second's."""
    from common.training.metrics_log import MetricsLog

    (tmp_path / "metrics.jsonl").write_text('{"step": 1, "loss": 3.0}\n{"step": 2, "lo')
    MetricsLog(tmp_path, enabled=True, tensorboard=False).start(0)
    assert (tmp_path / "metrics.jsonl").read_text() == ""
