"""Where the report's paths point from: the report file's own folder.

A campaign records schedule files relative to the folder it was launched in. A report is opened
(and its commands run) from wherever it was written — a CI artifact, `killpoint-out/` — so the
paths it prints are rewritten relative to the report's folder when it is written to a file —
as long as the report and the file both lie inside the launch folder. A report written
elsewhere (a temporary folder, another disk), or a file kept elsewhere (a pytest session's
schedules under its temporary folder), would be reached only by climbing through the machine's
folders, so those are printed absolute.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Where:
    report_dir: Path  # the folder the report file is written in
    launch_dir: Path  # the folder the campaign's relative paths start from

    @classmethod
    def of_report(cls, report: str | Path, launch_dir: Path | None = None) -> Where:
        return cls(Path(report).absolute().parent, (launch_dir or Path.cwd()).absolute())

    @property
    def launch_from_report(self) -> str:
        """The launch folder as seen from the report's (`.` when they are one)."""
        return self._relative(self.launch_dir)

    def path(self, recorded: str) -> str:
        """`recorded` (relative to the launch folder, or absolute) relative to the report's."""
        target = Path(recorded)
        if not target.is_absolute():
            target = self.launch_dir / target
        return self._relative(target) if target.is_relative_to(self.launch_dir) else str(target)

    def _relative(self, target: Path) -> str:
        if not self.report_dir.is_relative_to(self.launch_dir):
            return str(target)
        try:
            return Path(os.path.relpath(target, self.report_dir)).as_posix()
        except ValueError:  # another drive: only the absolute path leads there
            return str(target)
