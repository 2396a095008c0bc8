"""A table written three ways: CSV (full precision), Markdown and LaTeX (one decimal).

Every table carries a caption saying which paper table it regenerates and notes saying
which scale, data and models produced *our* numbers; ``None`` prints as "–" (not
reported / not applicable); a value over several seeds prints as "mean ± sd".
"""
from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from common.io import atomic_write, write_json


@dataclass
class Table:
    name: str
    caption: str
    columns: list[str]
    rows: list[list[Any]]
    notes: list[str] = field(default_factory=list)
    records: list[dict[str, Any]] | None = None  # a table of typed records (the claims) also writes them as <name>.json


def departures_note(cfg: dict[str, Any]) -> str:
    """A scale's declared departures from its paper (the config's ``departures``), as a sentence for a table's
    notes; empty when it declares none."""
    items = [" ".join(d.split()) for d in cfg.get("departures", [])]
    return (" Departures from the paper: " + " ".join(f"({i}) {d}" for i, d in enumerate(items, 1))) if items else ""


def leakage_note(manifest: dict[str, Any]) -> str:
    """The leakage rule's count and, where the corpus took staged parallel sources (``corpus.mini.parallel``), what
    each gave per language: a table says which sources trained its models."""
    leak = manifest["leakage"]
    text = f"Leakage rule dropped {leak['dropped_total']} training pairs."
    if "bucc_distractors_excluded" in leak:  # the mini BUCC builder's candidates found in training or other eval sets
        text += f" BUCC distractor candidates excluded by the same rule: {leak['bucc_distractors_excluded']:,}."
    if "nli_dropped" in leak:  # the NLI training items (MoCo-BERT's multi-task data) under the same rule
        text += f" NLI training items dropped by the same rule: {leak['nli_dropped']:,}."
    by_source = leak.get("by_source")
    if by_source:
        text += " Staged parallel sources trained on (pairs taken, of which dropped as leaked): " + "; ".join(
            f"{source}: " + ", ".join(f"{lang} {c['taken']:,} ({c['leaked']:,})" for lang, c in sorted(langs.items()))
            for source, langs in by_source.items()) + "."
    return text


def fmt(value: Any, digits: int = 1) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    if hasattr(value, "sd"):  # common.report.results.Stat: mean ± sd over seeds
        return f"{value.mean:.{digits}f} ± {value.sd:.{digits}f}"
    return str(value)


def _latex_escape(text: str) -> str:
    for a, b in (("\\", r"\textbackslash{}"), ("&", r"\&"), ("%", r"\%"), ("_", r"\_"), ("#", r"\#"),
                 ("→", r"$\rightarrow$"), ("ρ", r"$\rho$"), ("–", "--"), ("±", r"$\pm$")):
        text = text.replace(a, b)
    return text


def to_markdown(t: Table) -> str:
    lines = [f"**{t.caption}**", "", "| " + " | ".join(t.columns) + " |", "|" + "---|" * len(t.columns)]
    lines += ["| " + " | ".join(fmt(v) for v in row) + " |" for row in t.rows]
    lines += [""] + [f"- {n}" for n in t.notes]
    return "\n".join(lines) + "\n"


def to_latex(t: Table) -> str:
    spec = "l" * len(t.columns)
    out = [r"\begin{table}[t]", r"\centering", r"\small", rf"\begin{{tabular}}{{{spec}}}", r"\toprule",
           " & ".join(_latex_escape(c) for c in t.columns) + r" \\", r"\midrule"]
    out += [" & ".join(_latex_escape(fmt(v)) for v in row) + r" \\" for row in t.rows]
    out += [r"\bottomrule", r"\end{tabular}", rf"\caption{{{_latex_escape(t.caption)}}}",
            rf"\label{{tab:{t.name}}}", r"\end{table}"]
    return "\n".join(out) + "\n"


def to_csv(t: Table) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(t.columns)
    for row in t.rows:
        w.writerow(["" if v is None else round(v, 4) if isinstance(v, float) else fmt(v, 4) if hasattr(v, "sd") else v
                    for v in row])
    return buf.getvalue()


def write_table(t: Table, out_dir: str | Path, latex: bool = True) -> list[Path]:
    out_dir = Path(out_dir)
    paths = [out_dir / f"{t.name}.csv", out_dir / f"{t.name}.md"] + ([out_dir / f"{t.name}.tex"] if latex else [])
    for path, text in zip(paths, (to_csv(t), to_markdown(t), to_latex(t))):
        with atomic_write(path) as fh:
            fh.write(text)
    if t.records is not None:
        paths.append(out_dir / f"{t.name}.json")
        write_json(paths[-1], {"caption": t.caption, "records": t.records})
    return paths
