"""A command engine of a few lines, stdlib only: one e-mail, progress in a JSON file.

What it does at each point is chosen by `TINY_MODE` (set by the test), so one script pins
each rule of the protocol: a hook call, a request to the services, a child process of its own,
a hang, a malformed status line.
"""

import json
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

env = os.environ
mode = env.get("TINY_MODE", "send")
state_file = Path(env["KILLPOINT_WORKDIR"]) / "tiny.json"


def hook(boundary: str, step: str) -> None:
    body = json.dumps({"boundary": boundary, "step": step}).encode()
    urllib.request.urlopen(urllib.request.Request(env["KILLPOINT_HOOK_URL"], data=body))


def status(status: str, state: str, sequence: int = 0) -> None:
    print(
        "killpoint-status " + json.dumps({"status": status, "state": state, "sequence": sequence})
    )


if env["KILLPOINT_ACTION"] == "history":  # its one checkpoint, once it has sent
    if state_file.exists() and json.loads(state_file.read_text())["sent"]:
        record = {"record": "checkpoint", "sequence": 1, "state": "verified"}
        print(json.dumps({**record, "status": "completed", "created_at": 1800000000.0}))
    print(env.get("TINY_HISTORY_TAIL", ""))
    sys.exit(0)
if mode == "hang":
    time.sleep(600)
if mode == "no-status":
    sys.exit(0)
if mode == "bad-status":
    print('killpoint-status {"status": "sideways"}')
    sys.exit(0)
if mode == "fails":
    print("the engine's own error", file=sys.stderr)
    sys.exit(3)

if "KILLPOINT_INPUT" in env:
    (Path(env["KILLPOINT_WORKDIR"]) / f"handed-{env['KILLPOINT_OWNER']}").write_text("1")
if not state_file.exists():  # the start message, taken durably
    message = json.loads(Path(env["KILLPOINT_INPUT"]).read_text())
    state_file.write_text(json.dumps({"sent": False, "input": message}))
    if mode == "ack":
        hook("start.taken", "")
done = json.loads(state_file.read_text())
if mode == "child":  # a process of its own, which must die with it
    child = subprocess.Popen(["sleep", "600"])
    (Path(env["KILLPOINT_WORKDIR"]) / f"child-{env['KILLPOINT_OWNER']}").write_text(str(child.pid))
hook("step.begin", "notify")
if not done["sent"]:
    message = done["input"]
    request = urllib.request.Request(
        env["KILLPOINT_MAILER_URL"] + "/messages",
        data=json.dumps({k: message.get(k, "") for k in ("to", "subject", "body")}).encode(),
        headers={"content-type": "application/json"},
    )
    try:
        urllib.request.urlopen(request)
    except OSError as exc:  # no answer: it cannot ask the mailer whether it sent
        (Path(env["KILLPOINT_WORKDIR"]) / "lost").write_text(type(exc).__name__)
        status("needs_review", "received")
        sys.exit(0)
    (Path(env["KILLPOINT_WORKDIR"]) / f"heard-{env['KILLPOINT_OWNER']}").write_text("yes")
    state_file.write_text(json.dumps({**done, "sent": True}))
hook("checkpoint.committed", "notify")
status("completed", "verified", 1)
