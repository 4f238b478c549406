from pathlib import Path

from killpoint.harness.run.folders import empty


def test_empty_unlinks_every_file_and_keeps_the_folders(tmp_path: Path) -> None:
    (tmp_path / "ab").mkdir()
    (tmp_path / "ab" / "abcd").write_bytes(b"x")
    (tmp_path / "top.json").write_text("{}")
    empty(tmp_path)
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*")) == ["ab"]


def test_empty_of_a_missing_folder_does_nothing(tmp_path: Path) -> None:
    empty(tmp_path / "missing")
    assert not (tmp_path / "missing").exists()
