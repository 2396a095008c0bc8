"""The README's promises: every relative link resolves, and every command it shows names something real -- a
module (``python -m``), a script (``bash``), or Snakemake targets that a dry run accepts (one dry run per
``--config``; ``<paper>`` stands for each paper)."""
from __future__ import annotations

import importlib.util
import re
import shlex
from pathlib import Path

from tests.conftest import DATA_ROOT
from tests.test_workflow import snakemake

ROOT = Path(__file__).resolve().parents[1]
PAPERS = ("dap", "moco", "hictl", "vmsst")
COMMAND = re.compile(r"(?:\.venv/bin/)?((?:snakemake|python -m|bash) [^`\n]+)")


def documents() -> list[Path]:
    return [ROOT / "README.md", *sorted(ROOT.glob("papers/*/README.md")), *sorted(ROOT.glob("docs/*.md"))]


def commands(text: str) -> list[str]:
    """The commands in the text's code: fenced blocks line by line, inline code spans whole."""
    code = re.findall(r"```[^\n]*\n(.*?)```", text, flags=re.S) + re.findall(r"`([^`\n]+)`", text)
    found = []
    for block in code:
        for line in block.splitlines():
            for part in line.split("&&"):
                m = COMMAND.match(part.strip())
                if m:
                    found.append(m.group(1).strip())
    return found


def test_relative_links_resolve():
    broken = []
    for doc in documents():
        for link in re.findall(r"\]\(([^)\s]+)\)", doc.read_text(encoding="utf-8")):
            if link.startswith(("http://", "https://", "#", "mailto:")):
                continue
            if not (doc.parent / link.split("#")[0]).exists():
                broken.append(f"{doc.relative_to(ROOT)}: {link}")
    assert not broken


def config_of(words: list[str]) -> tuple[str, ...]:
    """The ``key=value`` words after ``--config`` up to the next option (placeholders such as ``<name>`` left out)."""
    out, inside = [], False
    for w in words:
        if w.startswith("-"):
            inside = w == "--config"
        elif inside and "=" in w and "<" not in w:
            out.append(w)
    return tuple(out)


def test_config_of_reads_every_value_after_the_flag():
    words = shlex.split("snakemake leaderboard/rows --cores 2 --config scale=mini leaderboard_methods='[a, b]' "
                        "models=<m> --dry-run x=1")
    assert config_of(words) == ("scale=mini", "leaderboard_methods=[a, b]")


def test_commands_name_real_modules_scripts_and_targets(tmp_path):
    targets: dict[tuple[str, ...], set[str]] = {}
    for doc in documents():
        for cmd in commands(doc.read_text(encoding="utf-8")):
            words = shlex.split(cmd.replace("<", "'<").replace(">", ">'")) if "<" in cmd else shlex.split(cmd)
            if words[0] == "python":
                module = words[2]
                assert module == "pytest" or importlib.util.find_spec(module), f"{doc.name}: {cmd}"
            elif words[0] == "bash":
                assert (ROOT / words[1]).is_file(), f"{doc.name}: {cmd}"
            else:
                config = config_of(words)
                for i, w in enumerate(words[1:], start=1):
                    if w.startswith("-") or "=" in w or w.isdigit() or w.startswith("profiles/") or \
                            words[i - 1] == "--configfile":  # a user's config file (docs/data.md): not a target
                        continue
                    for t in ([w.replace("<paper>", p) for p in PAPERS] if "<paper>" in w else [w]):
                        if "<" not in t:
                            targets.setdefault(config, set()).add(t)
    assert targets
    for config, names in sorted(targets.items()):  # data_root: the shared one where a command names none
        config = config if any(c.startswith("data_root=") for c in config) else (*config, f"data_root={DATA_ROOT}")
        snakemake(tmp_path, *sorted(names), "-n", "--cores", "2", "--config", *config)
