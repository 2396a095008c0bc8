"""The seven English STS datasets have SentEval's subsets and pair counts."""
from common.data.corpora import absent
from common.data.sts_benchmark import SENTEVAL_7, english_sts, senteval7_paths


def test_senteval_seven_datasets(data_root):
    datasets, files = english_sts({"sts_dir": str(data_root / "sts")})
    assert tuple(datasets) == SENTEVAL_7
    sizes = {name: sum(len(s) for s in subsets) for name, subsets in datasets.items()}
    # SentEval's counts: STS13 without the licence-restricted SMT subset
    assert sizes == {"STS12": 3108, "STS13": 1500, "STS14": 3750, "STS15": 3000, "STS16": 1186,
                     "STS-B": 1379, "SICK-R": 4927}
    assert [s.name for s in datasets["STS13"]] == ["FNWN", "OnWN", "headlines"]
    assert len(files) == 2 * (5 + 3 + 6 + 5 + 5) + 2


def test_synthetic_stand_in(tmp_path):
    (tmp_path / "STS.input.en-en.txt").write_text("a b\tc d\ne f\tg h\n")
    (tmp_path / "STS.gs.en-en.txt").write_text("1.0\n4.0\n")
    datasets, _ = english_sts({"sts_dir": str(tmp_path), "sts_kind": "synthetic"})
    assert list(datasets) == ["synthetic en-en"] and datasets["synthetic en-en"][0].scores == [1.0, 4.0]


def test_every_file_read_lies_under_the_declared_paths(data_root):
    """senteval7_paths is what the preflight looks for: english_sts reads each year's inputs that match its pattern
    (and their gold files beside them), STS-B's and SICK's files, and nothing else."""
    root = data_root / "sts"
    *years, stsb, sick = senteval7_paths(root)
    _, files = english_sts({"sts_dir": str(root)})
    inputs = [f for f in files if f.name.startswith("STS.input.")]
    assert {f.parent for f in files} - {stsb.parent, sick.parent} == {y.parent for y in years}
    assert all(any(f.parent == y.parent and f.match(y.name) for y in years) for f in inputs)
    assert len(inputs) == 5 + 3 + 6 + 5 + 5 and files[-2:] == [stsb, sick]
    assert absent(senteval7_paths(root)) == []
    assert absent(senteval7_paths(root / "nowhere")) == senteval7_paths(root / "nowhere")


def test_a_year_folder_without_inputs_is_absent(tmp_path):
    """A partial copy holding only a year's readme is missing: the pattern needs an input file."""
    year = tmp_path / "sts12-16" / "STS12-en-test"
    year.mkdir(parents=True)
    (year / "00-readme.txt").write_text("readme\n")
    assert absent(senteval7_paths(tmp_path))[0] == year / "STS.input.*.txt"
    (year / "STS.input.MSRpar.txt").write_text("a\tb\n")
    assert year / "STS.input.*.txt" not in absent(senteval7_paths(tmp_path))
