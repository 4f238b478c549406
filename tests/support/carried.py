"""What a report carries to replay its runs, taken out of its HTML as a reader would: each
printed `killpoint replay …` command, and the schedule its download link saves."""

from __future__ import annotations

import base64
import gzip
import io
import re
import shlex
import tarfile
from html import unescape
from pathlib import Path

from tests.support.dom import Census

DATA_URL = "data:application/json;base64,"
ARCHIVE_URL = "data:application/gzip;base64,"
# a command drawn in full, or named in a line beside the archive that carries its schedule
COMMAND = re.compile(r'<(?:pre class="replay"><code|code class="replay")>(killpoint replay [^<]+)<')


def carried_files(html: str) -> dict[str, bytes]:
    """File name -> the bytes its `schedule-download` link saves, and each file of the
    `schedule-archive` the page carries, as `tar xzf` would unpack it."""
    files = {}
    census = Census(html)
    for link in census.by_class("schedule-download"):
        href = link.attrs["href"]
        assert href.startswith(DATA_URL), href
        files[link.attrs["download"]] = base64.b64decode(href.removeprefix(DATA_URL))
    for link in census.by_class("schedule-archive"):
        href = link.attrs["href"]
        assert href.startswith(ARCHIVE_URL), href
        packed = gzip.decompress(base64.b64decode(href.removeprefix(ARCHIVE_URL)))
        with tarfile.open(fileobj=io.BytesIO(packed)) as tar:
            for member in tar.getmembers():
                unpacked = tar.extractfile(member)
                assert unpacked is not None and "/" not in member.name, member.name
                files[member.name] = unpacked.read()
    return files


def save_carried(html: str, folder: Path) -> list[list[str]]:
    """Save every schedule the page carries into `folder`, as its links would; the printed
    replay commands, split into their arguments (without the leading `killpoint`)."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, content in carried_files(html).items():
        (folder / name).write_bytes(content)
    return [shlex.split(unescape(command))[1:] for command in COMMAND.findall(html)]
