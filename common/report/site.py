"""The results to browse: a static site from the committed figures (``snakemake site``; open ``site/index.html``).

    python -m common.report.site --figures figures --out site

One page each, every page linking every other: the leaderboard; each paper (every figures folder of it: its
tables with the paper's numbers beside ours, its figures, its claims with their verdicts; the calibration tables);
every paper's claims in one index; the census of the paper-scale jobs; and a start page counting each paper's
verdicts. Plain HTML and one CSS file, no JavaScript, no server (``file://`` will do): the Markdown the reports
wrote (:mod:`common.report.html`), its images and data files linked where they are in the figures folder, by
relative paths. The site is committed beside ``figures/`` (a clone can open it as it is); ``.figures-<digest>``
in it names the figures it was written from, which is the ``site`` rule's output, so a changed figure makes the
rule run again (and ``tests/common/report/test_site.py`` fails until it has).
"""
from __future__ import annotations

import argparse
import hashlib
import html
import json
import logging
import os
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from common.config import ROOT, papers
from common.io import sha256_file
from common.report.html import Converter

log = logging.getLogger(__name__)
CSS = """body { font: 15px/1.45 system-ui, sans-serif; margin: 0; color: #1d1d1f; background: #fff; }
header { background: #21364f; padding: 0.6em 1.5em; }
header a { color: #fff; margin-right: 1.2em; text-decoration: none; }
header a.here { text-decoration: underline; font-weight: bold; }
main { max-width: 1200px; margin: 0 auto; padding: 1em 1.5em 3em; }
h1 { font-size: 1.7em; } h2 { border-bottom: 1px solid #ccd; padding-bottom: 0.2em; margin-top: 1.8em; }
.table { overflow-x: auto; margin: 0.6em 0 1em; }
table { border-collapse: collapse; font-size: 0.9em; }
th, td { border: 1px solid #c8ccd4; padding: 0.25em 0.55em; text-align: left; vertical-align: top; }
thead th { background: #eef1f6; } tbody tr:nth-child(even) { background: #f8f9fb; }
img { max-width: 100%; height: auto; border: 1px solid #dde; }
code { background: #f1f2f4; padding: 0 0.25em; border-radius: 3px; }
nav.toc { background: #f6f7f9; border: 1px solid #e0e3e8; padding: 0.5em 1em; }
nav.toc ul { margin: 0.2em 0; } li { margin: 0.15em 0; }
footer { color: #666; font-size: 0.85em; margin-top: 3em; }
"""


@dataclass
class Page:
    name: str  # the file, without .html
    title: str  # the navigation's label
    heading: str
    body: list[str] = field(default_factory=list)


class Site:
    def __init__(self, figures: Path, out: Path):
        self.figures, self.out = Path(figures), Path(out)
        self.pages: list[Page] = []

    # ------------------------------------------------------------------ files a document links
    def _linker(self, folder: Path) -> Callable[[str], str]:
        """Where a document of ``folder`` links to: the file in the figures folder, relative to the site."""
        def link(url: str) -> str:
            path, _, frag = url.partition("#")
            source = (folder / path).resolve()
            if not source.is_file() or self.figures.resolve() not in source.parents:
                raise FileNotFoundError(f"{folder}: a link to {url}, which is not a file of {self.figures}")
            rel = Path(os.path.relpath(source, self.out.resolve())).as_posix()
            return rel + (f"#{frag}" if frag else "")
        return link

    def document(self, path: Path, prefix: str, shift: int) -> tuple[str, Converter]:
        """A Markdown file of the figures as HTML (its links copied into the site)."""
        conv = Converter(self._linker(path.parent), prefix, shift)
        return conv.convert(path.read_text(encoding="utf-8")), conv

    def folder(self, folder: Path, prefix: str) -> tuple[str, Converter]:
        """A figures folder: its README (tables inline, figures), or, without one (a paper's calibration), each
        table with the figure of the same name."""
        readme = folder / "README.md"
        if readme.exists():  # its title line is the page's section heading
            text = re.sub(r"\A# .*\n", "", readme.read_text(encoding="utf-8"))
            conv = Converter(self._linker(folder), prefix, 1)
            return conv.convert(text), conv
        text = "".join(f"{table.read_text(encoding='utf-8').strip()}\n\n" +
                       (f"![{table.stem}]({table.stem}.png)\n\n" if table.with_suffix(".png").exists() else "")
                       for table in sorted(folder.glob("*.md")))
        text = re.sub(r"^\*\*(.+)\*\*$", r"### \1", text, flags=re.M)  # each table's bold caption as its heading
        conv = Converter(self._linker(folder), prefix, 0)
        return conv.convert(text), conv

    # ------------------------------------------------------------------ pages
    def paper_page(self, paper: str) -> Page | None:
        root = self.figures / paper
        folders = sorted({p.parent for p in root.rglob("*.md")}, key=lambda p: (p.name == "calibration", str(p)))
        if not folders:
            return None
        readme = ROOT / "papers" / paper / "README.md"
        title, cite = paper, ""
        if readme.exists():
            lines = [line for line in readme.read_text(encoding="utf-8").splitlines() if line.strip()]
            title, cite = lines[0].lstrip("# ").strip(), lines[1] if len(lines) > 1 else ""
        page = Page(paper, title.split(":")[0], title)
        if cite:
            page.body.append(Converter().convert(cite))
        sections = []
        for folder in folders:
            rel = folder.relative_to(root).as_posix()
            body, conv = self.folder(folder, f"{rel.replace('/', '-')}-")
            sections.append((rel, body, conv))
        page.body.append(_toc([(rel, conv) for rel, _, conv in sections]))
        for rel, body, _ in sections:
            label = "calibration (runs beside the workflow)" if rel == "calibration" else f"scale '{rel}'"
            page.body.append(f'<h2 id="{_id(rel)}">{html.escape(label)}</h2>\n{body}')
        return page

    def single(self, name: str, title: str, heading: str, docs: list[Path]) -> Page | None:
        docs = [d for d in docs if d.exists()]
        if not docs:
            return None
        page = Page(name, title, heading)
        for doc in docs:
            body, _ = self.document(doc, f"{doc.stem}-", 1)
            page.body.append(body)
        return page

    def start_page(self, paper_pages: list[Page]) -> Page:
        page = Page("index", "Start", "Cross-lingual sentence embeddings: four papers, one workflow, the results")
        page.body.append("<p>Every table, figure and claim of the figures folder, each table with the paper's "
                         "numbers beside ours (the committed figures are the mini scale's: real public data, small "
                         "models, CPU budgets). Written by <code>snakemake site</code>; the repository's README "
                         "and each paper's README say how each was made and where we depart from the paper.</p>")
        rows = []
        for scale_json in sorted(self.figures.glob("claims/*.json")):
            records = json.loads(scale_json.read_text(encoding="utf-8"))["records"]
            verdicts = Counter((r["paper"], r["verdict"]) for r in records)
            for p in sorted({r["paper"] for r in records}):
                counts = ", ".join(f"{v}: {n}" for (q, v), n in sorted(verdicts.items()) if q == p)
                rows.append(f'<tr><td><a href="{p}.html">{html.escape(p)}</a></td><td>{scale_json.stem}</td>'
                            f"<td>{html.escape(counts)}</td></tr>")
        links = [(p.name, p.heading) for p in paper_pages]
        page.body.append("<h2>Pages</h2>\n<ul>\n" + "".join(
            f'<li><a href="{n}.html">{html.escape(h)}</a></li>\n' for n, h in
            [("leaderboard", "Leaderboard: every method on equal terms"), *links,
             ("claims", "Every paper's claims with their verdicts"), ("census", "Census of the paper-scale jobs")]
            if (self.out / f"{n}.html").exists() or any(pp.name == n for pp in self.pages)) + "</ul>")
        if rows:
            page.body.append('<h2>Claims by verdict</h2>\n<div class="table"><table>\n<thead><tr><th>paper</th>'
                             "<th>scale</th><th>verdicts</th></tr></thead>\n<tbody>\n" + "\n".join(rows) +
                             "\n</tbody>\n</table></div>")
        return page

    def build(self) -> list[Path]:
        self.out.mkdir(parents=True, exist_ok=True)
        for old in [*self.out.glob("*.html"), *self.out.glob(".figures-*")]:  # what an earlier build wrote
            old.unlink()
        board = self.single("leaderboard", "Leaderboard", "Leaderboard: every method on equal terms",
                            sorted(self.figures.glob("leaderboard/*/README.md")))
        paper_pages = [p for p in (self.paper_page(name) for name in papers()) if p]
        claims = self.single("claims", "Claims", "Every paper's claims with their verdicts",
                             sorted(self.figures.glob("claims/*.md")))
        census = self.single("census", "Census", "Census of the paper-scale jobs",
                             sorted(self.figures.glob("census/*.md")))
        self.pages = [p for p in (board, *paper_pages, claims, census) if p]
        self.pages.insert(0, self.start_page(paper_pages))
        written = [self.out / "style.css", self.out / stamp(self.figures)]
        (self.out / "style.css").write_text(CSS, encoding="utf-8")
        written[1].write_text(digest(self.figures) + "\n", encoding="utf-8")
        for page in self.pages:
            written.append(self.out / f"{page.name}.html")
            written[-1].write_text(self.render(page), encoding="utf-8")
        log.info("site: %d pages in %s", len(self.pages), self.out)
        return written

    def render(self, page: Page) -> str:
        here = ' class="here"'
        nav = "".join(f'<a href="{p.name}.html"{here if p is page else ""}>{html.escape(p.title)}</a>'
                      for p in self.pages)
        return (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
                f'<meta name="viewport" content="width=device-width, initial-scale=1">\n'
                f"<title>{html.escape(page.heading)}</title>\n"
                f'<link rel="stylesheet" href="style.css">\n</head>\n<body>\n<header>{nav}</header>\n<main>\n'
                f"<h1>{html.escape(page.heading)}</h1>\n" + "\n".join(page.body) +
                "\n<footer>Written by <code>snakemake site</code> (common/report/site.py) from the repository's "
                "figures/ folder.</footer>\n</main>\n</body>\n</html>\n")


def digest(figures: str | Path) -> str:
    """One sha256 over every file under ``figures`` (names and contents) but the measurement logs (``*.jsonl``,
    appended by benchmarks and CI runs; no page shows their rows): the site rule's trigger to rebuild."""
    h = hashlib.sha256()
    for path in sorted(p for p in Path(figures).rglob("*") if p.is_file() and p.suffix != ".jsonl"):
        h.update(f"{path.relative_to(figures).as_posix()}\0{sha256_file(path)}\n".encode())
    return h.hexdigest()


def stamp(figures: str | Path) -> str:
    """The site's file that names the figures it was written from (the ``site`` rule's output)."""
    return f".figures-{digest(figures)[:16]}"


def _id(text: str) -> str:
    return re.sub(r"[^\w-]", "-", text)


def _toc(sections: list[tuple[str, Converter]]) -> str:
    """The page's contents: each folder and its tables and figures."""
    items = []
    for rel, conv in sections:
        subs = "".join(f'<li><a href="#{a}">{html.escape(t)}</a></li>' for level, t, a in conv.headings if level == 3)
        items.append(f'<li><a href="#{_id(rel)}">{html.escape(rel)}</a><ul>{subs}</ul></li>')
    return '<nav class="toc"><strong>Contents</strong>\n<ul>' + "\n".join(items) + "</ul></nav>"


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m common.report.site", description=__doc__.splitlines()[0])
    p.add_argument("--figures", default="figures")
    p.add_argument("--out", default="site")
    a = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    for path in Site(Path(a.figures), Path(a.out)).build():
        print(path)


if __name__ == "__main__":
    main()
