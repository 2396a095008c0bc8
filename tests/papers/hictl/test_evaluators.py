"""HICTL's t-SNE items (Figure 4): the same XNLI items in five languages, row by row."""
import pytest

from common.io import DataFormatError
from papers.hictl.evaluators import multi_parallel


def test_multi_parallel_takes_the_same_rows_and_refuses_files_of_unequal_length(tmp_path):
    rows = {"en": ["a", "a", "b", "c"], "de": ["A", "A2", "B", "C"], "fr": ["x", "x", "y", "z"]}
    for lang, hyps in rows.items():
        (tmp_path / f"dev-{lang}.tsv").write_text("".join(f"p\t{h}\tneutral\n" for h in hyps))
    manifest = {"nli_languages": ["en", "de", "fr"], "nli_dir": str(tmp_path)}
    langs, items, _ = multi_parallel(manifest, ["fr", "en"], 3)
    assert langs == ["fr", "en", "de"]  # the asked languages first, then the others
    # the first three distinct hypotheses of the first language (rows 0, 2, 3) and the same rows elsewhere
    assert items == {"fr": ["x", "y", "z"], "en": ["a", "b", "c"], "de": ["A", "B", "C"]}
    (tmp_path / "dev-de.tsv").write_text("p\tA\tneutral\n")
    with pytest.raises(DataFormatError, match=r"dev-de\.tsv: 1 rows, dev-fr\.tsv has 4"):
        multi_parallel(manifest, ["fr", "en"], 3)
