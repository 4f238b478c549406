"""The checkpoint key, held behind its reference (`$KILLPOINT_CHECKPOINT_KEY`), never reaches a
stored row, an artifact, a report, JUnit, the result JSON or the console: every byte a
campaign leaves is scanned for the key, its hex and its base64."""

from __future__ import annotations

import base64
import os
import secrets
import subprocess
import sys
from pathlib import Path

SECRET = "planted-" + secrets.token_hex(24)
KILLPOINT = str(Path(sys.executable).with_name("killpoint"))


def _encodings(value: str) -> list[bytes]:
    raw = value.encode()
    return [raw, raw.hex().encode(), base64.b64encode(raw), base64.urlsafe_b64encode(raw)]


def _leaks(root: Path, *texts: str) -> list[str]:
    """Where any encoding of the secret appears: a file under `root` (SQLite files, WAL and
    free pages included, byte for byte) or one of `texts`."""
    needles = _encodings(SECRET)
    found = [
        str(path.relative_to(root))
        for path in root.rglob("*")
        if path.is_file() and any(n in path.read_bytes() for n in needles)
    ]
    found += [f"output {i}" for i, t in enumerate(texts) if any(n in t.encode() for n in needles)]
    return found


def test_the_scan_finds_a_planted_leak(tmp_path: Path) -> None:
    (tmp_path / "a.sqlite").write_bytes(b"\x00row\x00" + SECRET.encode().hex().encode())
    assert _leaks(tmp_path) == ["a.sqlite"]
    assert _leaks(tmp_path / "none", base64.b64encode(SECRET.encode()).decode()) == ["output 0"]


def test_a_campaign_leaves_its_checkpoint_key_nowhere(tmp_path: Path) -> None:
    out = tmp_path / "out"
    flags = ["--report", str(out / "r.html"), "--junit", str(out / "j.xml")]
    done = subprocess.run(
        [
            KILLPOINT,
            "run",
            "-s",
            "email",
            "-s",
            "order_saga",
            "--workdir",
            str(out),
            *flags,
            "--out",
            str(out / "result.json"),
        ],
        env={**os.environ, "KILLPOINT_CHECKPOINT_KEY": SECRET},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    stored = list(out.rglob("*.sqlite")) + list(out.rglob("artifacts/*"))
    assert stored and (out / "r.html").exists() and (out / "j.xml").exists()  # it all ran
    assert _leaks(out, done.stdout, done.stderr) == []
