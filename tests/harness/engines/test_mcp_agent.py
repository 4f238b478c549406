"""A pydantic-ai agent whose tools are MCP tools (`docs/examples/mcp_agent`), under killpoint.

Proven here: one lost response of the charge's MCP call is enough to charge the naive agent
twice, the saved schedule alone replays it (`killpoint replay FILE`), and the services' journal
holds both charges while the agent's own history shows it heard of the first only as an
`outcome unknown` tool error; the careful agent survives every single crash and every network
fault of order_saga. Each worker is a `python3 agent.py` process importing pydantic-ai (about
2 s), so the campaign here is kept to single crashes and network faults, on two processes;
docs/frameworks.md gives the whole campaign's figures.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

# The imports after the needs below load the extra they check for, as importorskip's would.
# ruff: noqa: E402
from tests.support.needs import needs_module

needs_module("pydantic_ai", "needs the mcp-agent extra: pip install 'killpoint[mcp-agent]'")

from typer.testing import CliRunner

from killpoint.harness.campaign import jobs
from killpoint.harness.campaign.execute import Campaign, CampaignConfig
from killpoint.harness.campaign.plan import clean, network, singles
from killpoint.harness.catalogue import installed
from killpoint.harness.cli import app
from killpoint.harness.engines.registry import load_engine
from killpoint.harness.results import RunResult

ROOT = Path(__file__).parents[3]
EXAMPLE = Path("docs/examples/mcp_agent")
SCHEDULE = Path("docs/frameworks/schedules/mcp-agent-naive-lost-charge-response.json")


@pytest.fixture(autouse=True)
def from_the_repository(monkeypatch: pytest.MonkeyPatch) -> None:
    """The schedule names its engine file from the repository's root, and the engine files run
    `python3 agent.py`: this interpreter's, which has pydantic-ai."""
    monkeypatch.chdir(ROOT)
    here = str(Path(sys.executable).parent)
    monkeypatch.setenv("PATH", here + os.pathsep + os.environ.get("PATH", ""))


def test_one_lost_charge_response_charges_the_naive_agent_twice(tmp_path: Path) -> None:
    schedule = json.loads((ROOT / SCHEDULE).read_text())
    assert schedule["engine"] == str(EXAMPLE / "naive.toml") and not schedule["crashes"]
    (rule,) = schedule["network"]["rules"]  # one fault, at the MCP call of the charge
    assert (rule["operation"], rule["mode"], rule["occurrence"]) == (
        "create_charge",
        "lost_response",
        1,
    )
    history = tmp_path / "history.json"
    result = CliRunner(env={"KILLPOINT_DATABASE_URL": None}).invoke(
        app,
        ["replay", str(SCHEDULE), "--workdir", str(tmp_path), "--history", str(history)],
        catch_exceptions=False,
    )
    assert result.exit_code == 1, result.stdout
    assert re.search(
        r"single_effect +VIOLATION payments\.create_charge .* took effect 2 times", result.stdout
    )
    journal = json.loads(history.read_text())
    charges = [r for r in journal["requests"] if r["operation"] == "create_charge"]
    # the services applied the charge whose response was lost, then the agent's retry: the same
    # request (one fingerprint, no key to tell them apart), two charges
    assert [(r["outcome"], r["idempotency_key"]) for r in charges] == [("applied", None)] * 2
    assert charges[0]["fingerprint"] == charges[1]["fingerprint"]
    applied = [a["resource_id"] for a in journal["applied"] if a["operation"] == "create_charge"]
    assert len(set(applied)) == 2
    first, second = _charge_calls(tmp_path)
    assert first["args"] == second["args"]
    # the agent heard of the first as an MCP tool error, handed back for another try
    assert first["outcome"] == "retried"
    assert json.loads(first["content"]) == {"outcome": "unknown", "status": None, "body": None}
    assert second["outcome"] == "success" and second["content"]["id"] == applied[1]


def _charge_calls(workdir: Path) -> list[dict[str, Any]]:
    """The agent's charge calls and their answers, from its last saved message history."""
    (saves,) = {p.parent for p in workdir.rglob("save-*.json")}
    messages = json.loads(max(saves.glob("save-*.json")).read_text())["messages"]
    calls: dict[str, dict[str, Any]] = {}
    for message in messages:
        for part in message["parts"]:
            if part.get("tool_name") != "payments_create_charge":
                continue
            if part["part_kind"] == "tool-call":
                calls[part["tool_call_id"]] = {"args": part["args"]}
            else:
                calls[part["tool_call_id"]] |= {k: part[k] for k in ("outcome", "content")}
    return list(calls.values())


def test_the_careful_agent_survives_every_single_crash_and_network_fault(
    tmp_path: Path,
) -> None:
    runs = _small_campaign(tmp_path)
    labels = {r.label for r in runs}
    # not vacuous: the two places one fault broke the naive agent were run
    assert {"w0 charge:transport.response_received", "payments.create_charge:lost_response"} <= (
        labels
    )
    assert {r.kind for r in runs} == {"clean", "single", "network"}
    assert sum(r.kind == "network" for r in runs) == 11  # 6 modes on the charge, 5 on the publish
    violated = [
        (r.label, v.checker, v.summary) for r in runs for v in r.verdicts if v.valid is False
    ]
    assert violated == []
    assert {(r.final_status, r.final_state) for r in runs} == {("completed", "delivered")}


def _small_campaign(tmp_path: Path) -> list[RunResult]:
    """What `killpoint run --no-double --no-named …` plans for order_saga, on two processes:
    every network fault and every single crash, but the repeats of the recording's
    verification loop (its second and later reads, each ~2 s of worker start to run)."""
    config = CampaignConfig(
        scenarios=[installed().scenarios["order_saga"]],
        workdir=tmp_path,
        engine=load_engine(str(EXAMPLE / "careful.toml")),
        real_pass=False,
    )
    (scenario,) = config.scenarios
    with Campaign(replace(config, workdir=tmp_path / "recording")) as campaign:
        recorded, recording = campaign.judge(scenario, clean(scenario).schedule, "clean")
    planned = [
        run
        for run in singles(scenario, recording)
        if run.hit is None or run.hit.step != "verify_shipment" or run.hit.occurrence == 1
    ]
    planned += network(scenario, recording)

    def share(i: int) -> Callable[[object], list[RunResult]]:
        def task(report: object) -> list[RunResult]:
            with Campaign(replace(config, workdir=tmp_path / f"part-{i}")) as campaign:
                return [campaign.execute_planned(run)[0] for run in planned[i::2]]

        return task

    return [recorded, *(r for part in jobs.in_processes([share(0), share(1)]) for r in part)]
