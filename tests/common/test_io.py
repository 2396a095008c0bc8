"""common/io.py: JSON that is not JSON names the file and the line; a copy lands whole or not at all."""
import pytest

from common.io import DataFormatError, atomic_copy, read_json


def test_read_json_names_the_file_and_line_of_bad_json(tmp_path):
    (tmp_path / "a.json").write_text('{\n  "x": 1,\n  "y": \n}\n')
    with pytest.raises(DataFormatError, match=r"a\.json:4: invalid JSON \(Expecting value\)"):
        read_json(tmp_path / "a.json")
    (tmp_path / "a.json").write_text('{"x": [1, 2]}')
    assert read_json(tmp_path / "a.json") == {"x": [1, 2]}


def test_a_copy_that_fails_halfway_leaves_the_old_target_whole(tmp_path, monkeypatch):
    import os
    import shutil

    (tmp_path / "src").write_bytes(b"\x00\x01" * 1000)
    atomic_copy(tmp_path / "src", tmp_path / "out" / "dst")
    assert (tmp_path / "out" / "dst").read_bytes() == b"\x00\x01" * 1000
    umask = os.umask(0)
    os.umask(umask)
    assert (tmp_path / "out" / "dst").stat().st_mode & 0o777 == 0o666 & ~umask  # as open() would make it
    (tmp_path / "src").write_bytes(b"new" * 1000)

    def half(fin, fout, length=0):
        fout.write(fin.read(100))
        raise OSError("disk full")

    monkeypatch.setattr(shutil, "copyfileobj", half)
    with pytest.raises(OSError, match="disk full"):
        atomic_copy(tmp_path / "src", tmp_path / "out" / "dst")
    assert (tmp_path / "out" / "dst").read_bytes() == b"\x00\x01" * 1000
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["dst"]  # no temporary file left
