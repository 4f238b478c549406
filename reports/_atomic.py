"""Write a report file so that a reader never sees half of it.

CI jobs and the pytest plugin may be killed while they write, and a browser may be open on the
previous report: the text goes to a temporary file in the same folder (so `os.replace` is a
rename on one file system), is flushed to disk, and then replaces the target in one step.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

NEW_FILE_MODE = 0o644  # a report is read by CI uploaders and browsers, not only its writer


def write_atomic(path: str | Path, data: str | bytes) -> Path:
    """Replace `path` with `data` in one step; on any error the old file is left as it was.

    The new file keeps the mode of the one it replaces (mkstemp's 0600 otherwise).
    """
    target = Path(path)
    try:
        mode = target.stat().st_mode & 0o777
    except FileNotFoundError:
        mode = NEW_FILE_MODE
    target.parent.mkdir(parents=True, exist_ok=True)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as tmp:
            tmp.write(payload)
            tmp.flush()
            os.fsync(tmp.fileno())
        os.chmod(tmp_name, mode)
        os.replace(tmp_name, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
        raise
    return target
