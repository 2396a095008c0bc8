"""Benchmark records: ratios, goals (on the ratio or on a difference), the Markdown table and the summary."""
import json

import pytest

from bench.report import main as report_main
from bench.results import Record, Row


def test_ratio_and_goal_on_the_ratio():
    r = Row("step", ours=1.8, peer=2.0, goal=0.9)
    assert r.ratio == pytest.approx(0.9) and r.met  # 1.8 / 2.0 = 0.9 <= 0.9
    assert not Row("step", ours=1.9, peer=2.0, goal=0.9).met
    assert Row("no goal", ours=1.0, peer=2.0).met is None
    assert Row("no peer", ours=1.0, goal=1.0).ratio is None and Row("no peer", ours=1.0, goal=1.0).met is None


def test_goal_on_the_difference():
    assert Row("F1", ours=80.1, peer=80.5, goal=0.5, goal_on="difference").met  # |80.1 - 80.5| = 0.4
    assert not Row("F1", ours=79.9, peer=80.5, goal=0.5, goal_on="difference").met  # 0.6


def test_record_files_and_report(tmp_path):
    rec = Record("train_step", "Training step: ours vs peer", {"threads": 2})
    rec.add(Row("TR step", 1.5, 2.0, "s/step", "ours", "peer", 0.9, "note"))
    rec.add(Row("F1", 80.0, 81.0, "F1 %", "approx", "exact", 0.5, goal_on="difference"))
    rec.write(tmp_path)
    saved = json.loads((tmp_path / "train_step.json").read_text())
    assert [r["met"] for r in saved["rows"]] == [True, False] and saved["rows"][0]["ratio"] == 0.75
    table = (tmp_path / "train_step.md").read_text().splitlines()
    assert table[-2] == "| TR step | 1.5 (ours) | 2 (peer) | s/step | 0.75 | <= 0.9 | met | note |"
    assert table[-1].startswith("| F1 | 80 (approx) | 81 (exact) | F1 % | 0.9877 | abs(ours - peer) <= 0.5 | "
                                "**not met**")
    [row] = [json.loads(line) for line in (tmp_path / "log.jsonl").read_text().splitlines()]
    assert row["record"] == "train_step" and row["command"].startswith("python -m bench.train_step")
    assert row["figures"]["TR step"] == {"ours": 1.5, "peer": 2.0, "unit": "s/step", "ratio": 0.75}
    assert "cpu_flags" in row["machine"]
    report_main(["--dir", str(tmp_path), "train_step"])
    readme = (tmp_path / "README.md").read_text()
    assert "| Training step | TR step | ours/peer 0.75 | <= 0.9 | met |" in readme
    assert "| Training step | F1 | ours - peer -1.00 | abs <= 0.5 | **not met** |" in readme


def test_the_report_says_when_each_benchmark_was_measured(tmp_path):
    import datetime

    from bench.report import when

    today = datetime.date.today().isoformat()
    rec = Record("mining", "Mining", {"threads": 2})
    rec.add(Row("time", 1.0, 2.0))
    rec.write(tmp_path)
    assert json.loads((tmp_path / "mining.json").read_text())["setup"]["measured"] == today
    assert f"measured = {today}" in (tmp_path / "mining.md").read_text()
    same = {"a": {"setup": {"measured": "2026-11-22"}}, "b": {"setup": {"measured": "2026-11-22"}}}
    assert when(same) == "Measured by `snakemake bench/all` on 2026-11-22"
    # one benchmark rerun alone beside a record from before the field existed: each says its own day
    mixed = {"encode": {"setup": {}}, "mining": {"setup": {"measured": "2026-11-27"}}}
    assert when(mixed).endswith("(encode: day not recorded; mining: 2026-11-27)")
    report_main(["--dir", str(tmp_path), "mining"])
    assert f"Measured by `snakemake bench/all` on {today};" in (tmp_path / "README.md").read_text()


def test_the_cpu_name_carries_its_matrix_product_tier():
    """Two CPUs sold as "AMD EPYC" differ in bf16 against fp32 by 20x or more: the folder name tells them apart."""
    from bench.results import cpu_name

    def info(model, flags):
        block = f"processor\t: 0\nmodel name\t: {model}\nflags\t\t: {flags}\n"
        return block + "\n" + block.replace("processor\t: 0", "processor\t: 1")

    assert cpu_name(info("AMD EPYC", "fpu sse2 avx2 fma"), 2) == "AMD-EPYC-avx2-2cores"
    assert cpu_name(info("AMD EPYC", "avx2 avx512f avx512_bf16"), 2) == "AMD-EPYC-avx512bf16-2cores"
    assert cpu_name(info("AMD EPYC", "avx2 avx512f"), 4) == "AMD-EPYC-avx512-4cores"
    assert (cpu_name(info("Intel(R) Xeon(R) Platinum 8481C CPU @ 2.70GHz", "avx2 avx512f avx512_bf16 amx_bf16"), 2)
            == "Intel-Xeon-Platinum-8481C-amx-2cores")
    assert cpu_name(info("Some CPU", "sse2"), 1) == "Some-1cores"  # no tier: the name alone
