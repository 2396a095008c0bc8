"""requirements.txt and environment.yml must pin the same packages at the same versions."""
import re

import yaml

from common.config import ROOT


def pins(lines):
    out = {}
    for line in lines:
        line = line.split("#")[0].strip()
        m = re.fullmatch(r"([A-Za-z0-9_.\-]+)==([^\s]+)", line)
        if m:
            out[m.group(1).lower()] = m.group(2)
    return out


def test_requirements_and_environment_agree():
    req = pins((ROOT / "requirements.txt").read_text().splitlines())
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip_section = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    conda = pins(pip_section)
    assert req and req == conda
    assert all("==" in l for l in (ROOT / "requirements.txt").read_text().splitlines() if l and not l.startswith("#"))
