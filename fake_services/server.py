"""The real tier: the fake services as a uvicorn process, and a handle to run one.

``python -m fake_services.server --journal FILE`` serves every service from one process with its
journal in a SQLite file. :class:`ServiceProcess` is what the harness uses to start it (port 0,
readiness polled on ``/_admin/health``), SIGKILL it, and restart it on the same journal file and
port: the journal is committed before each response, so what it says survives the kill.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import uvicorn

from killpoint.fake_services.app import build_app
from killpoint.fake_services.clock import ServiceClock
from killpoint.fake_services.faults import FaultInjector, FaultPlan
from killpoint.fake_services.journal import Journal
from killpoint.fake_services.transport import connect, loopback_transport

_PACKAGE_ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m fake_services.server")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--journal", required=True, help="SQLite file of the ground truth")
    parser.add_argument("--port-file", help="write the bound port here once listening")
    parser.add_argument("--clock", type=float, default=0.0, help="start of the injected clock")
    args = parser.parse_args(argv)

    app = build_app(Journal.open(args.journal), FaultInjector(), ServiceClock(args.clock))
    # Bind here, not in uvicorn: port 0 is then known before serving, and SO_REUSEADDR lets a
    # restarted server take the port of the one that was just SIGKILLed.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # Accepted connections inherit this: a response is written in pieces, and with Nagle on,
    # a keep-alive client waits 40 ms (its delayed ACK) for every response.
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind((args.host, args.port))
    port = sock.getsockname()[1]
    if args.port_file:
        partial = f"{args.port_file}.partial"
        Path(partial).write_text(str(port))
        os.replace(partial, args.port_file)
    print(f"fake_services listening on http://{args.host}:{port}", flush=True)
    # `Date` is the services' injected clock where a service says it (outbound's search), never
    # uvicorn's wall clock beside it
    config = uvicorn.Config(
        app, log_level="warning", access_log=False, lifespan="off", date_header=False
    )
    uvicorn.Server(config).run(sockets=[sock])


class ServiceProcess:
    """Start, kill and restart one fake-services server process on a journal file."""

    def __init__(
        self,
        journal_path: str | Path,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        startup_timeout: float = 10.0,
    ) -> None:
        self.journal_path = Path(journal_path)
        self.host = host
        self.port = port
        self.startup_timeout = startup_timeout
        self._process: subprocess.Popen[bytes] | None = None
        self._plan = FaultPlan()
        self._clock: float = 0.0
        self._journal: Journal | None = None
        self._admin: httpx.Client | None = None

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def log_path(self) -> Path:
        return self.journal_path.with_name(self.journal_path.name + ".log")

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def start(self) -> ServiceProcess:
        """Spawn the server and wait until ``/_admin/health`` answers; re-apply plan and clock."""
        if self.running:
            raise RuntimeError("the service process is already running")
        port_file = self.journal_path.with_name(self.journal_path.name + ".port")
        port_file.unlink(missing_ok=True)
        command = [sys.executable, "-m", "killpoint.fake_services.server", "--host", self.host]
        command += ["--port", str(self.port), "--journal", str(self.journal_path)]
        command += ["--port-file", str(port_file), "--clock", repr(self._clock)]
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join(
                p for p in (str(_PACKAGE_ROOT), os.environ.get("PYTHONPATH", "")) if p
            ),
        }
        with self.log_path.open("ab") as log:
            self._process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env)
        deadline = time.monotonic() + self.startup_timeout
        self._wait_for(lambda: port_file.exists() and port_file.read_text() != "", deadline)
        self.port = int(port_file.read_text())
        self._admin = httpx.Client(
            base_url=self.base_url, transport=loopback_transport(), timeout=5.0
        )
        self._wait_for(self._healthy, deadline)
        self._put("/_admin/faults", content=self._plan.model_dump_json())
        return self

    def _wait_for(self, ready: Any, deadline: float) -> None:
        while not ready():
            if self._process is None or self._process.poll() is not None:
                tail = self.log_path.read_text(errors="replace")[-2000:]
                raise RuntimeError(f"fake_services server exited during startup:\n{tail}")
            if time.monotonic() > deadline:
                self.kill()
                raise TimeoutError(f"fake_services server not ready in {self.startup_timeout}s")
            time.sleep(0.01)

    def _healthy(self) -> bool:
        assert self._admin is not None
        try:
            return self._admin.get("/_admin/health").status_code == 200
        except httpx.TransportError:
            return False

    def _put(self, path: str, **kwargs: Any) -> dict[str, Any]:
        return self._call("PUT", path, **kwargs)

    def _call(self, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        if self._admin is None:
            raise RuntimeError("the service process was never started")
        response = self._admin.request(method, path, **kwargs)
        response.raise_for_status()
        payload: dict[str, Any] = response.json()
        return payload

    def client(self, timeout: float = 5.0) -> httpx.Client:
        """A client whose transport applies this server's fault plan."""
        return connect(self.base_url, timeout)

    @property
    def journal(self) -> Journal:
        """A reader on the journal file (works while the server runs and after it died)."""
        if self._journal is None:
            self._journal = Journal.open(self.journal_path)
        return self._journal

    @property
    def plan(self) -> FaultPlan:
        """The fault plan the server was last given."""
        return self._plan

    def set_plan(self, plan: FaultPlan) -> None:
        if not plan.rules and not self._plan.rules:
            return  # no rule to install and none to count: the server already has this plan
        self._plan = plan
        self._put("/_admin/faults", content=plan.model_dump_json())

    def set_clock(self, t: float) -> None:
        self._clock = float(self._put("/_admin/clock", json={"now": t})["now"])

    def advance_clock(self, dt: float) -> float:
        self._clock = float(self._call("POST", "/_admin/clock/advance", json={"dt": dt})["now"])
        return self._clock

    def now(self) -> float:
        return float(self._call("GET", "/_admin/clock")["now"])

    def reset(self) -> None:
        """Forget ground truth and state and clear the plan (the clock stays)."""
        self._plan = FaultPlan()
        self._call("POST", "/_admin/reset")

    def stop(self, timeout: float = 5.0) -> None:
        """Shut down cleanly: SIGTERM, then SIGKILL if it does not exit in ``timeout``."""
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(timeout)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        self._close_admin()

    def kill(self) -> None:
        """SIGKILL the server process: no cleanup, no flush, like a crash."""
        if self._process is not None and self._process.poll() is None:
            self._process.send_signal(signal.SIGKILL)
            self._process.wait()
        self._close_admin()

    def restart(self) -> ServiceProcess:
        """Stop if running and start again on the same journal file and port."""
        self.stop()
        return self.start()

    def close(self) -> None:
        self.stop()
        if self._journal is not None:
            self._journal.close()
            self._journal = None

    def _close_admin(self) -> None:
        if self._admin is not None:
            self._admin.close()
            self._admin = None

    def __enter__(self) -> ServiceProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()


if __name__ == "__main__":
    main()
