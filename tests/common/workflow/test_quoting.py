"""Every path reaches a shell command quoted: each value a rule's shell command formats in is quoted by Snakemake
(``{...:q}``), except the argument strings a rule builds itself (listed below), whose paths are quoted where they
are built; a dry run with a results root and a data root holding a space and an apostrophe prints commands that a
shell splits back into those paths whole."""
import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

from common.models import tokenizer_sides
from common.workflow.paths import download_args
from tests.conftest import ROOT

# shell fragments a rule builds as one string of arguments (quoted where built) or that are plain numbers
ARGUMENT_STRINGS = {"params.launcher": "common/workflow/launch.py: the launcher and its numbers",
                    "params.args": "common/models/tokenizer_sides.py: names quoted with shlex",
                    "params.extra": "a report's own arguments (method and task names)",
                    "threads": "a number", "params.rank_threads": "a number"}
RULE_FILES = sorted([ROOT / "Snakefile", *ROOT.glob("common/**/*.smk"), *ROOT.glob("common/**/Snakefile"),
                     *ROOT.glob("papers/*/workflow/**/*.smk"), *ROOT.glob("papers/*/workflow/Snakefile"),
                     *ROOT.glob("bench/workflow/**/*.smk"), ROOT / "bench" / "workflow" / "Snakefile"])
PLACEHOLDER = re.compile(r"(?<!\{)\{([A-Za-z_][\w.\[\]]*)(:q)?\}(?!\})")


def shell_commands(path: Path) -> list[str]:
    """The shell command of each rule in a Snakemake file: the string literals after ``shell:``."""
    out, lines = [], path.read_text().splitlines()
    for n, line in enumerate(lines):
        if line.strip() == "shell:":
            parts = []
            for follow in lines[n + 1:]:
                s = follow.strip()
                if not (s.startswith('"') or s.startswith("+")):
                    break
                parts += re.findall(r'"((?:[^"\\]|\\.)*)"', s)
            out.append("".join(parts))
    return out


def test_every_value_formatted_into_a_shell_command_is_quoted():
    commands = [(path, c) for path in RULE_FILES if path.exists() for c in shell_commands(path)]
    assert len(commands) > 20  # every rule file was read
    unquoted = [(path.relative_to(ROOT), name) for path, c in commands for name, q in PLACEHOLDER.findall(c)
                if not q and name not in ARGUMENT_STRINGS]
    assert not unquoted, unquoted


def test_argument_strings_quote_their_paths_where_they_are_built():
    assert download_args({"scale": "rehearsal", "results_root": "a b"}) == ["--mirror", "a b/rehearsal/mirror"]
    cfg = {"encoders": {"x": {"pretrained": "/models/it's here"}}}
    assert shlex.split(tokenizer_sides.arguments(cfg, "x", "shared")) == ["--pretrained", "/models/it's here"]


def test_a_dry_run_with_spaces_and_quotes_in_its_roots_prints_commands_that_split_back(tmp_path):
    """HICTL's paper scale runs every kind of job: corpus, tokenizers, training, evaluation, reports and NMT."""
    results, data = tmp_path / "res o'k", tmp_path / "d a'ta"
    data.mkdir()
    proc = subprocess.run([sys.executable, "-m", "snakemake", "-s", str(ROOT / "Snakefile"), "-d", str(tmp_path / "wd"),
                           "papers/hictl/all", "-n", "-p", "--config", "scale=paper", f"results_root={results}",
                           f"data_root={data}"], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    commands = [line.removeprefix("Shell command: ") for line in proc.stdout.splitlines()
                if line.startswith("Shell command: python") or line.startswith("Shell command: OMP_")]
    rules = set(re.findall(r"^rule (\w+):", proc.stdout, re.M))
    assert {"hictl_corpus", "hictl_train", "hictl_evaluate_task", "hictl_report", "hictl_nmt_stage2",
            "hictl_nmt_translate"} <= rules
    assert len(commands) > 50
    for command in commands:
        words = shlex.split(command)  # a shell splits it the same way
        for word in words:
            if word.startswith(("{", "[")):  # a JSON argument: it parses, and its paths are whole in it
                assert all(not isinstance(v, str) or "res o" not in v or v.startswith(f"{results}/")
                           for v in re.findall(r'"((?:[^"\\]|\\.)*)"', word)), word
                json.loads(word)
                continue
            if "res o" in word:
                assert word.startswith(f"{results}/"), (word, command)
            if "d a'ta" in word:
                assert word == str(data), (word, command)
    assert any(f"--data-root {shlex.quote(str(data))}" in c for c in commands)
