"""What a report carries to replay its runs, taken out of its HTML as a reader would: each
printed `killpoint replay …` command, and the schedule its download link saves."""

from __future__ import annotations

import base64
import re
import shlex
from html import unescape
from pathlib import Path

from tests.support.dom import Census

DATA_URL = "data:application/json;base64,"
COMMAND = re.compile(r'<pre class="replay"><code>(killpoint replay [^<]+)</code></pre>')


def carried_files(html: str) -> dict[str, bytes]:
    """File name -> the bytes its `schedule-download` link saves."""
    files = {}
    for link in Census(html).by_class("schedule-download"):
        href = link.attrs["href"]
        assert href.startswith(DATA_URL), href
        files[link.attrs["download"]] = base64.b64decode(href.removeprefix(DATA_URL))
    return files


def save_carried(html: str, folder: Path) -> list[list[str]]:
    """Save every schedule the page carries into `folder`, as its links would; the printed
    replay commands, split into their arguments (without the leading `killpoint`)."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, content in carried_files(html).items():
        (folder / name).write_bytes(content)
    return [shlex.split(unescape(command))[1:] for command in COMMAND.findall(html)]
