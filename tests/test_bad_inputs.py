"""Bad input gets one clear error naming the file and the line, or the key, and leaves no output behind: a table of
malformed inputs across the loaders, the records, model and checkpoint files, the command lines (run in-process) and
the workflow's configs. Each case builds its input under ``in/``, makes one call, and must raise one error whose
message matches its pattern (the file's name, with ``:<line>`` where there is one, or the key); ``out/``, where any
output would go, must hold no file afterwards. The classes of bad input are listed in docs/bad_input.md."""
from __future__ import annotations

import gzip
import json
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import pytest
import torch
from safetensors.torch import save_file

from common.config import ConfigError, load_config, load_yaml, validate, workflow_config
from common.data import loaders
from common.data.manifest import load_manifest, write_manifest
from common.data.questions import read_questions
from common.data.squad import read_squad_json
from common.eval import __main__ as eval_main
from common.eval.results import read_result, write_result
from common.finite import NonFiniteError
from common.io import DataFormatError, iter_json_lines, read_lines, write_json
from common.models.embedder import load_projection, read_embedder_meta
from common.models.model_files import check_model_folder
from common.nmt.embedder import load_encoder_state
from common.report import claims_index
from common.report.claim import ClaimRecord
from common.training.checkpoint_load import WeightsOnlyCheckpointEngine
from common.training.metrics_log import read_metrics
from common.training.trainer import resumable_arguments
from tests.conftest import ROOT


@dataclass(frozen=True)
class Case:
    id: str
    make: Callable[[Path, Path], Callable[[], Any]]  # (in/, out/) -> the one call that must fail
    error: type[BaseException]
    match: str  # the message must name the file (and line) or the key


def w(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    return path


# ------------------------------------------------------------------------------------------------------- loaders
def tatoeba(i: Path, xx: str, en: str) -> Callable[[], Any]:
    w(i / "tatoeba.deu-eng.deu", xx)
    w(i / "tatoeba.deu-eng.eng", en)
    return lambda: loaders.read_tatoeba(i, "deu")


def bucc(i: Path, src: str, trg: str, gold: str) -> Callable[[], Any]:
    w(i / "de-en.test.de", src)
    w(i / "de-en.test.en", trg)
    w(i / "de-en.test.gold", gold)
    return lambda: loaders.read_bucc(i, "de-en", "test")


def truncated_gzip(i: Path) -> Path:
    data = gzip.compress("".join(f"sentence {n} {n * 7919 % 1000003}\n" for n in range(3000)).encode())
    return w(i / "test.de.gz", data[: len(data) // 2])


def sts(i: Path, gold: str, inputs: str = "a\tb\nc\td\ne\tf\n") -> Callable[[], Any]:
    w(i / "STS.input.x.txt", inputs)
    w(i / "STS.gs.x.txt", gold)
    return lambda: loaders.read_sts_senteval(i / "STS.input.x.txt", i / "STS.gs.x.txt")


LOADERS = [
    Case("tatoeba: sides of different lengths", lambda i, o: tatoeba(i, "a\nb\nc\n", "a\nb\n"), DataFormatError,
         r"tatoeba\.deu-eng\.eng:3: misaligned parallel files"),
    Case("tatoeba: a blank line", lambda i, o: tatoeba(i, "a\nb\n", "a\n \n"), DataFormatError,
         r"tatoeba\.deu-eng\.eng:2: blank line"),
    Case("tatoeba: empty sides", lambda i, o: tatoeba(i, "", ""), DataFormatError,
         r"tatoeba\.deu-eng\.deu: no Tatoeba pairs for deu"),
    Case("text: invalid UTF-8", lambda i, o: lambda: read_lines(w(i / "x.txt", b"ok\n\xff\xfe\n")), DataFormatError,
         r"x\.txt:2: invalid UTF-8"),
    Case("gzip: truncated", lambda i, o: lambda: loaders.read_parallel(truncated_gzip(i), truncated_gzip(i)),
         DataFormatError, r"test\.de\.gz:\d+: corrupt or truncated compressed data"),
    Case("gzip: not gzip at all", lambda i, o: lambda: read_lines(w(i / "dev.en.gz", "plain text\n")),
         DataFormatError, r"dev\.en\.gz:1: corrupt or truncated compressed data .*Not a gzipped file"),
    Case("bucc: an empty gold file", lambda i, o: bucc(i, "d1\tHallo\n", "e1\tHello\n", ""), DataFormatError,
         r"de-en\.test\.gold: no gold pairs"),
    Case("bucc: gold names an unknown id", lambda i, o: bucc(i, "d1\tHallo\n", "e1\tHi\n", "d1\te1\nd9\te1\n"),
         DataFormatError, r"de-en\.test\.gold:2: unknown source id 'd9'"),
    Case("bucc: an empty side", lambda i, o: bucc(i, "", "e1\tHello\n", "d1\te1\n"), DataFormatError,
         r"de-en\.test\.de: no sentences"),
    Case("bucc: an id given twice", lambda i, o: bucc(i, "d1\ta\nd1\tb\n", "e1\tx\n", "d1\te1\n"), DataFormatError,
         r"de-en\.test\.de:2: duplicate sentence id 'd1'"),
    Case("bucc: a line without a tab", lambda i, o: bucc(i, "d1 Hallo\n", "e1\tx\n", "d1\te1\n"), DataFormatError,
         r"de-en\.test\.de:1: expected 'id<TAB>sentence'"),
    Case("sts: a score out of range", lambda i, o: sts(i, "1\n7\n2\n"), DataFormatError,
         r"STS\.gs\.x\.txt:2: score 7\.0 outside \[0\.0, 5\.0\]"),
    Case("sts: a NaN score", lambda i, o: sts(i, "nan\n1\n2\n"), DataFormatError, r"STS\.gs\.x\.txt:1: score nan"),
    Case("sts: every score alike", lambda i, o: sts(i, "3\n3\n3\n"), DataFormatError,
         r"STS\.gs\.x\.txt: 3 scored pairs, 1 distinct"),
    Case("sts: a third column", lambda i, o: sts(i, "1\n2\n3\n", "a\tb\nc\td\tx\ne\tf\n"), DataFormatError,
         r"STS\.input\.x\.txt:2: expected 'sentence1<TAB>sentence2', found 3 columns"),
    Case("xnli: an unknown label", lambda i, o: lambda: loaders.read_xnli_tsv(
        w(i / "dev-de.tsv", "p\th\tneutral\np\th\tmaybe\n")), DataFormatError, r"dev-de\.tsv:2: unknown label 'maybe'"),
    Case("pawsx: no header", lambda i, o: lambda: loaders.read_pawsx_tsv(w(i / "test-de.tsv", "1\ta\tb\t0\n")),
         DataFormatError, r"test-de\.tsv:1: expected the header"),
    Case("tsv pairs: three columns", lambda i, o: lambda: loaders.read_tsv_pairs(w(i / "pairs.tsv", "a\tb\na\tb\tc\n")),
         DataFormatError, r"pairs\.tsv:2: expected 2 tab-separated columns, found 3"),
    Case("metrics log: a line that is not JSON", lambda i, o: lambda: read_metrics(
        w(i / "metrics.jsonl", '{"step": 1}\n{"step": 2, "loss": \n')), DataFormatError,
         r"metrics\.jsonl:2: invalid JSON"),
    Case("json lines: truncated gzip", lambda i, o: lambda: list(iter_json_lines(
        w(i / "q.jsonl.gz", gzip.compress(b'{"a": 1}\n' * 5000)[:60]))), DataFormatError,
         r"q\.jsonl\.gz:\d+: corrupt or truncated compressed data"),
    Case("squad: invalid JSON", lambda i, o: lambda: read_squad_json(w(i / "squad.json", '{"data": [\n  {"x": }\n')),
         DataFormatError, r"squad\.json:2: invalid JSON"),
    Case("questions: a record without answers", lambda i, o: lambda: read_questions(
        w(i / "nq.jsonl", '{"id": 1, "question": "q", "answers": ["a"]}\n{"id": 2, "question": "q"}\n')),
         DataFormatError, r"nq\.jsonl:2: expected \{'id', 'question'"),
    Case("questions: an empty file", lambda i, o: lambda: read_questions(w(i / "nq.jsonl", "\n")), DataFormatError,
         r"nq\.jsonl: no questions"),
]


# ------------------------------------------------------------------------------------------------------- records
def result(**scores_and_keys: Any) -> dict[str, Any]:
    rec = {"task_name": "tatoeba@cosine", "split": "test", "languages": ["deu"], "scores": {"main_score": 50.0},
           "model": {}, "scale": "smoke", "seed": 1, "config_hash": "0", "git_commit": None, "versions": {},
           "data_sha256": "0", "evaluation_time": 1.0}
    rec.update(scores_and_keys)
    return rec


def result_file(i: Path, text: str) -> Callable[[], Any]:
    return lambda: read_result(w(i / "r.json", text))


def writes_result(o: Path, scores: dict[str, Any]) -> Callable[[], Any]:
    return lambda: write_result(o / "tatoeba@cosine.json", task="tatoeba@cosine", split="test", languages=["deu"],
                                scores=scores, model={}, scale="smoke", seed=1, config={}, data_files=[],
                                evaluation_time=1.0)


MANIFEST = {"kind": "mini", "train": {}, "train_languages": [], "leakage": {}, "tatoeba_dir": "t",
            "tatoeba_languages": ["deu"], "bucc_dir": "b", "bucc_pairs": ["de-en"]}


def manifest_file(i: Path, **changes: Any) -> Callable[[], Any]:
    m = {k: v for k, v in {**MANIFEST, **changes}.items() if v is not ...}
    return lambda: load_manifest(w(i / "manifest.json", json.dumps(m)))


def claim(**changes: Any) -> dict[str, Any]:
    record = asdict(ClaimRecord("dap", "c", "Table 1", "s", "m", "", "A", "B", 1.0, 2.0, 1.0, 0.5, 1.5, 3, 1,
                                "holds"))
    return {k: v for k, v in {**record, **changes}.items() if v is not ...}


def claims_file(i: Path, *records: dict[str, Any]) -> Path:
    return w(i / "dap" / "mini" / "claims.json", json.dumps({"caption": "c", "records": list(records)}))


def embedder_json(i: Path, text: str) -> Callable[[], Any]:
    w(i / "model" / "embedder.json", text)
    return lambda: read_embedder_meta(i / "model")


RECORDS = [
    Case("result: no main_score", lambda i, o: result_file(i, json.dumps(result(scores={"f1": 1.0}))), DataFormatError,
         r"r\.json: not a ResultRecord: scores: 'main_score' is a required property"),
    Case("result: main_score a string", lambda i, o: result_file(i, json.dumps(result(scores={"main_score": "5"}))),
         DataFormatError, r"r\.json: not a ResultRecord: scores/main_score: '5' is not of type 'number'"),
    Case("result: main_score null", lambda i, o: result_file(i, json.dumps(result(scores={"main_score": None}))),
         DataFormatError, r"r\.json: not a ResultRecord: scores/main_score: None is not of type 'number'"),
    Case("result: a bare NaN", lambda i, o: result_file(i, json.dumps(result(scores={"main_score": float("nan")}))),
         DataFormatError, r"r\.json: scores/main_score: nan is not a finite number"),
    Case("result: Infinity deep inside", lambda i, o: result_file(i, json.dumps(result(
        scores={"main_score": 1.0, "per_language": {"deu": {"xx2en": float("inf")}}}))), DataFormatError,
         r"r\.json: scores/per_language/deu/xx2en: inf is not a finite number"),
    Case("result: truncated", lambda i, o: result_file(i, json.dumps(result(), indent=1)[:150]), DataFormatError,
         r"r\.json:\d+: invalid JSON"),
    Case("result: a key no record has", lambda i, o: result_file(i, json.dumps(result(extra=1))), DataFormatError,
         r"r\.json: not a ResultRecord: the record: Additional properties .*'extra'"),
    Case("result written with a NaN", lambda i, o: writes_result(o, {"main_score": 1.0, "f1": float("nan")}),
         DataFormatError, r"out/tatoeba@cosine\.json: not a ResultRecord: scores/f1: nan is not a finite number"),
    Case("result written without a score", lambda i, o: writes_result(o, {"main_score": None}), DataFormatError,
         r"out/tatoeba@cosine\.json: not a ResultRecord: scores/main_score: None is not of type 'number'"),
    Case("any JSON written with an infinity",
         lambda i, o: lambda: write_json(o / "x.json", {"a": [1.0, -float("inf")]}),
         NonFiniteError, r"out/x\.json: refusing to write a/1 = -inf"),
    Case("manifest: bucc_splits without test", lambda i, o: manifest_file(i, bucc_splits={"tune": "training"}),
         DataFormatError, r"manifest\.json: not a CorpusManifest: bucc_splits: 'test' is a required property"),
    Case("manifest: an unknown BUCC split",
         lambda i, o: manifest_file(i, bucc_splits={"tune": "sample", "test": "dev"}),
         DataFormatError, r"manifest\.json: not a CorpusManifest: bucc_splits/test: 'dev' is not one of"),
    Case("manifest: a key missing", lambda i, o: manifest_file(i, tatoeba_dir=...), DataFormatError,
         r"manifest\.json: not a CorpusManifest: the record: 'tatoeba_dir' is a required property"),
    Case("manifest: a list given as text", lambda i, o: manifest_file(i, tatoeba_languages="deu"), DataFormatError,
         r"manifest\.json: not a CorpusManifest: tatoeba_languages: 'deu' is not of type 'array'"),
    Case("manifest written with a key missing", lambda i, o: lambda: write_manifest(o, {**MANIFEST, "kind": None}),
         DataFormatError, r"out/manifest\.json: not a CorpusManifest: kind: None is not of type 'string'"),
    Case("claims.json: a NaN difference", lambda i, o: lambda: claims_index.read_claim_records(
        claims_file(i, claim(difference=float("nan")))), DataFormatError,
         r"claims\.json: records/0/difference: nan is not a finite number"),
    Case("claims.json: a record without its verdict", lambda i, o: lambda: claims_index.read_claim_records(
        claims_file(i, claim(), claim(verdict=...))), DataFormatError,
         r"claims\.json: records/1: not a ClaimRecord: the record: 'verdict' is a required property"),
    Case("embedder.json: no max_length", lambda i, o: embedder_json(i, '{"kind": "sentence-encoder"}'),
         DataFormatError, r"embedder\.json: not a EmbedderRecord: the record: 'max_length' is a required property"),
    Case("embedder.json: max_length 0", lambda i, o: embedder_json(i, '{"kind": "sentence-encoder", "max_length": 0}'),
         DataFormatError, r"embedder\.json: not a EmbedderRecord: max_length: 0 is less than the minimum of 1"),
    Case("embedder.json: max_length as text", lambda i, o: embedder_json(
        i, '{"kind": "sentence-encoder", "max_length": "128"}'), DataFormatError,
         r"embedder\.json: not a EmbedderRecord: max_length: '128' is not of type 'integer'"),
    Case("embedder.json: invalid JSON", lambda i, o: embedder_json(i, '{"kind": "sentence-encoder",\n'),
         DataFormatError, r"embedder\.json:2: invalid JSON"),
]


# ------------------------------------------------------------------------------------------ model and checkpoint files
EMBEDDER = '{"kind": "sentence-encoder", "max_length": 8, "pooling": "mean"}'


def model_folder(i: Path, weights: dict[str, torch.Tensor] | None = None, cut: bool = False,
                 config: str = '{"model_type": "bert"}') -> Path:
    folder = i / "model"
    w(folder / "embedder.json", EMBEDDER)
    w(folder / "config.json", config)
    save_file(weights or {"w": torch.zeros(2, 2)}, str(folder / "model.safetensors"))
    if cut:
        data = (folder / "model.safetensors").read_bytes()
        w(folder / "model.safetensors", data[: len(data) - 5])
    return folder


def checkpoint(path: Path, obj: Any, cut: bool = False) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save(obj, path)
    if cut:
        w(path, path.read_bytes()[:200])
    return path


def training_run(i: Path, args_text: str) -> Callable[[], Any]:
    w(i / "run" / "checkpoints" / "latest", "step00000002\n")
    w(i / "run" / "training_args.json", args_text)
    return lambda: resumable_arguments(i / "run")


FAIRSEQ = {"model": {"encoder.backbone.w": torch.ones(2, 2)}}
INF = {"encoder.backbone.w": torch.tensor([[1.0, float("inf")], [0.0, 1.0]])}

MODEL_FILES = [
    Case("model: a cut safetensors file", lambda i, o: lambda: check_model_folder(model_folder(i, cut=True)),
         DataFormatError, r"model/model\.safetensors: not a readable safetensors file"),
    Case("model: a NaN weight", lambda i, o: lambda: check_model_folder(model_folder(
        i, {"layer.w": torch.tensor([0.0, float("nan"), 1.0, 2.0])})), DataFormatError,
         r"model/model\.safetensors: tensor 'layer\.w': 1 of 4 values are not finite"),
    Case("model: config.json not JSON", lambda i, o: lambda: check_model_folder(model_folder(
        i, config='{"model_type": "bert",\n "hidden_size": }')), DataFormatError,
         r"model/config\.json:2: invalid JSON"),
    Case("model: a cut pytorch_model.bin", lambda i, o: lambda: check_model_folder(checkpoint(
        i / "model" / "pytorch_model.bin", {"w": torch.ones(3)}, cut=True).parent), DataFormatError,
         r"model/pytorch_model\.bin: not a readable torch checkpoint"),
    Case("model: a projection that is no safetensors file", lambda i, o: lambda: load_projection(
        w(i / "projection.safetensors", b"\x00" * 64)), DataFormatError,
         r"projection\.safetensors: not a readable safetensors file"),
    Case("training checkpoint: cut", lambda i, o: lambda: WeightsOnlyCheckpointEngine().load(str(checkpoint(
        i / "step00000002" / "mp_rank_00_model_states.pt", {"module": {"w": torch.ones(64)}}, cut=True))),
         DataFormatError, r"mp_rank_00_model_states\.pt: not a readable torch checkpoint"),
    Case("fairseq checkpoint: cut", lambda i, o: lambda: load_encoder_state(checkpoint(
        i / "checkpoint_best.pt", FAIRSEQ, cut=True)), DataFormatError,
         r"checkpoint_best\.pt: not a readable torch checkpoint"),
    Case("fairseq checkpoint: an infinite weight", lambda i, o: lambda: load_encoder_state(checkpoint(
        i / "checkpoint_best.pt", {"model": INF})), DataFormatError,
         r"checkpoint_best\.pt: tensor 'encoder\.backbone\.w': 1 of 4 values are not finite"),
    Case("training_args.json: not JSON", lambda i, o: training_run(i, '{"training_arguments": {\n "seed": 1,\n'),
         DataFormatError, r"run/training_args\.json:3: invalid JSON"),
    Case("training_args.json: no arguments", lambda i, o: training_run(i, '{"world_size": 1}'), DataFormatError,
         r"run/training_args\.json: training_arguments: missing"),
]


# ---------------------------------------------------------------------------------------------------- command lines
def eval_cli(i: Path, o: Path, *extra: str, manifest: dict[str, Any] | None = None, manifest_text: str | None = None,
             model: str = EMBEDDER, task: str = "tatoeba@cosine") -> Callable[[], Any]:
    w(i / "model" / "embedder.json", model)
    text = manifest_text if manifest_text is not None else json.dumps(manifest or MANIFEST)
    w(i / "corpus" / "manifest.json", text)
    argv = ["--task", task, "--model-dir", str(i / "model"), "--corpus", str(i / "corpus" / "manifest.json"),
            "--scale", "smoke", "--out-dir", str(o / "eval"), *extra]
    return lambda: eval_main.main(argv)


def eval_bucc_empty_gold(i: Path, o: Path) -> Callable[[], Any]:
    bucc(i / "bucc", "d1\tHallo\n", "e1\tHello\n", "")
    w(i / "bucc" / "de-en.training.de", "d1\tHallo\n")
    w(i / "bucc" / "de-en.training.en", "e1\tHello\n")
    w(i / "bucc" / "de-en.training.gold", "d1\te1\n")
    return eval_cli(i, o, task="bucc@ratio-k4", manifest={**MANIFEST, "bucc_dir": str(i / "bucc")})


def claims_index_cli(i: Path, o: Path) -> Callable[[], Any]:
    claims_file(i, claim(seeds="three"))
    return lambda: claims_index.main(["--scale", "mini", "--figures", str(i), "--out", str(o / "claims" / "mini")])


def model_and_eval_cli(i: Path, o: Path) -> Callable[[], Any]:
    model_folder(i, {"w": torch.full((2,), float("inf"))})
    return eval_cli(i, o)


CLIS = [
    Case("eval: --batch-size 0", lambda i, o: eval_cli(i, o, "--batch-size", "0"), SystemExit,
         r"argument --batch-size: 0 is below 1"),
    Case("eval: --batch-size -5", lambda i, o: eval_cli(i, o, "--batch-size", "-5"), SystemExit,
         r"argument --batch-size: -5 is below 1"),
    Case("eval: no Tatoeba language", lambda i, o: eval_cli(i, o, manifest={**MANIFEST, "tatoeba_languages": []}),
         DataFormatError, r"corpus/manifest\.json: tatoeba_languages: empty"),
    Case("eval: no BUCC pair", lambda i, o: eval_cli(i, o, task="bucc@ratio-k4", manifest={**MANIFEST,
                                                                                          "bucc_pairs": []}),
         DataFormatError, r"corpus/manifest\.json: bucc_pairs: empty"),
    Case("eval: an empty BUCC gold file", eval_bucc_empty_gold, DataFormatError,
         r"bucc/de-en\.test\.gold: no gold pairs"),
    Case("eval: a manifest that is not JSON", lambda i, o: eval_cli(i, o, manifest_text='{"kind": "mini",\n'),
         DataFormatError, r"corpus/manifest\.json:2: invalid JSON"),
    Case("eval: a manifest without bucc_splits' test", lambda i, o: eval_cli(
        i, o, task="bucc@ratio-k4", manifest={**MANIFEST, "bucc_splits": {"tune": "training"}}), DataFormatError,
         r"corpus/manifest\.json: not a CorpusManifest: bucc_splits: 'test' is a required property"),
    Case("eval: an embedder.json without max_length", lambda i, o: eval_cli(i, o, model='{"kind": "dual-encoder"}'),
         DataFormatError, r"model/embedder\.json: not a EmbedderRecord: the record: 'max_length'"),
    Case("eval: a model with an infinite weight", model_and_eval_cli, DataFormatError,
         r"model/model\.safetensors: tensor 'w': 2 of 2 values are not finite"),
    Case("eval: an unknown task", lambda i, o: eval_cli(i, o, task="tatoeba"), KeyError, r"unknown task 'tatoeba'"),
    Case("claims index: a bad claims.json", claims_index_cli, DataFormatError,
         r"dap/mini/claims\.json: records/0: not a ClaimRecord: seeds: 'three' is not of type 'integer'"),
]


# -------------------------------------------------------------------------------------------------------- workflow
def paper_config(change: Callable[[dict[str, Any]], None]) -> Callable[[], Any]:
    cfg = load_config("dap", "mini")
    change(cfg)
    return lambda: validate(cfg, ROOT / "papers" / "dap" / "config" / "schema.yaml", "papers/dap/config/mini.yaml")


WORKFLOW = [
    Case("workflow config: an unknown scale", lambda i, o: lambda: workflow_config({"scale": "huge"}), ConfigError,
         r"at 'scale': 'huge' is not one of"),
    Case("workflow config: data_root not a path", lambda i, o: lambda: workflow_config({"data_root": 5}), ConfigError,
         r"at 'data_root': 5 is not of type 'string'"),
    Case("workflow config: a misspelt key", lambda i, o: lambda: workflow_config({"scal": "mini"}), ConfigError,
         r"at '<top>': Additional properties .*'scal' was unexpected"),
    Case("config file: a key given twice", lambda i, o: lambda: load_yaml(w(i / "mini.yaml", "a: 1\nb: 2\na: 3\n")),
         ConfigError, r"mini\.yaml:3: key 'a' given twice in one mapping \(first at line 1\)"),
    Case("paper config: eval batch size 0", lambda i, o: paper_config(lambda c: c["eval"].update(batch_size=0)),
         ConfigError, r"mini\.yaml: at 'eval/batch_size': 0 is less than the minimum of 1"),
    Case("paper config: training batch size -5", lambda i, o: paper_config(
        lambda c: c["training"].update(global_batch_size=-5)), ConfigError,
         r"mini\.yaml: at 'training/global_batch_size': -5 is less than the minimum of 1"),
    Case("paper config: fp16 under ZeRO", lambda i, o: paper_config(
        lambda c: c["training"].update(precision="fp16", zero_stage=2)), ConfigError,
         r"mini\.yaml: at 'training/precision': 'fp16' needs zero_stage 0"),
]

CASES = [*LOADERS, *RECORDS, *MODEL_FILES, *CLIS, *WORKFLOW]


def test_the_table_is_large_and_its_ids_unique():
    assert len(CASES) >= 40 and len({c.id for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input_is_refused_with_one_clear_error_and_no_output(case, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(torch, "set_num_threads", lambda n: None)  # the CLIs set it for their process, not ours
    i, o = tmp_path / "in", tmp_path / "out"
    i.mkdir()
    o.mkdir()
    call = case.make(i, o)
    with pytest.raises(case.error) as caught:
        call()
    message = capsys.readouterr().err if isinstance(caught.value, SystemExit) else str(caught.value)
    assert re.search(case.match, message), message
    assert not [p for p in o.rglob("*") if p.is_file()], "an output was written"
