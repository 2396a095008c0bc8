"""Typed JSON records: the schema derived from a dataclass by hand, a file that does not fit named with its field,
and the results JSON written with its schema beside it."""
from dataclasses import dataclass, field
from typing import Any

import pytest

from common.io import DataFormatError, read_json, write_json
from common.records import read_record, schema


@dataclass(frozen=True)
class Toy:
    """A toy record."""

    name: str
    count: int
    ratio: float | None
    tags: list[str]
    extra: dict[str, Any] = field(default_factory=dict)


def test_schema_by_hand():
    assert schema(Toy) == {
        "$schema": "https://json-schema.org/draft/2020-12/schema", "title": "Toy", "description": "A toy record.",
        "type": "object", "additionalProperties": False, "required": ["name", "count", "ratio", "tags"],
        "properties": {"name": {"type": "string"}, "count": {"type": "integer"},
                       "ratio": {"anyOf": [{"type": "number"}, {"type": "null"}]},
                       "tags": {"type": "array", "items": {"type": "string"}},
                       "extra": {"type": "object", "additionalProperties": {}}}}


def test_read_record_names_the_file_and_the_field(tmp_path):
    path = tmp_path / "toy.json"
    write_json(path, {"name": "a", "count": 2, "ratio": None, "tags": ["x"]})
    assert read_record(path, Toy) == Toy("a", 2, None, ["x"])
    write_json(path, {"name": "a", "count": "2", "ratio": None, "tags": ["x"]})
    with pytest.raises(DataFormatError, match=r"toy\.json: not a Toy: count: '2' is not of type 'integer'"):
        read_record(path, Toy)
    write_json(path, {"name": "a", "count": 2, "ratio": None, "tags": ["x"], "colour": "red"})
    with pytest.raises(DataFormatError, match="Additional properties are not allowed"):
        read_record(path, Toy)


def test_results_json_is_a_result_record_with_its_schema_beside_it(tmp_path):
    from common.eval.results import ResultRecord, read_result, write_result

    out = tmp_path / "eval" / "tatoeba@cosine.json"
    write_result(out, task="tatoeba@cosine", split="test", languages=["deu"], scores={"main_score": 50.0},
                 model={"name": "m"}, scale="smoke", seed=1, config={}, data_files=[], evaluation_time=1.25)
    record = read_result(out)
    assert (record.task_name, record.scores, record.seed) == ("tatoeba@cosine", {"main_score": 50.0}, 1)
    assert read_json(tmp_path / "eval" / "ResultRecord.schema.json") == schema(ResultRecord)
