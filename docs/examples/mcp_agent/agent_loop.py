"""The agent proper: a pydantic-ai `Agent` whose tools are the MCP server at KILLPOINT_MCP_URL.

It runs node by node (`Agent.iter`) and saves its message history after each node that added
to it: the model's answer (which tool it chose), then the tools' answers. A worker that starts
on a saved history continues the run the way pydantic-ai documents: `message_history=` and no
new prompt, which executes the calls a history ends with before asking the model again. The
careful agent first closes such calls out (`repair_messages`): a call whose answer was never
saved may have been applied, so its model looks it up instead of sending it again.

The harness hears of three boundaries here, each on the saga step a call's id names: before
every MCP call, `step.begin` (a worker's first call in a step) or `tool.call` (the others);
after every save of answers (the prompt, the tools' answers, the final answer),
`checkpoint.committed` (the first, of the start message: `start.taken`, until which each
worker is handed the message again). The MCP calls' requests are boundaries of their own at the
harness's door (`transport.response_received`, `transport.read_returned`).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

import httpx
from agent_saves import Outcome, Saves
from agent_script import WAIT, Turn, prompt_for, read_turn, scripted, state_of
from pydantic_ai import Agent, RunContext, Tool
from pydantic_ai.mcp import CallToolFunc, MCPToolset, ToolResult
from pydantic_ai.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    TextPart,
    UserPromptPart,
    repair_messages,
)
from pydantic_ai.models.function import FunctionModel


@dataclass
class Door:
    """The harness's hook and clock, over HTTP."""

    http: httpx.AsyncClient
    hook_url: str
    clock_url: str

    async def hook(self, boundary: str, step: str) -> None:
        """Report a boundary; the answer comes when the worker may go on (or never: SIGKILL)."""
        response = await self.http.post(self.hook_url, json={"boundary": boundary, "step": step})
        response.raise_for_status()

    async def now(self) -> float:
        now: float = (await self.http.get(self.clock_url)).json()["now"]
        return now

    async def sleep(self, seconds: float) -> float:
        now: float = (await self.http.post(self.clock_url, json={"sleep": seconds})).json()["now"]
        return now


def build_agent(variant: str, workflow_id: str, door: Door) -> Agent[None, str]:
    steps: list[str] = []  # the saga steps this worker has made calls in

    async def before_each_call(
        ctx: RunContext[Any], call_tool: CallToolFunc, name: str, args: dict[str, Any]
    ) -> ToolResult:
        step = step_of(ctx.tool_call_id)
        if not steps or steps[-1] != step:  # a step begins, or resumes in a new worker
            steps.append(step)
            await door.hook("step.begin", step)  # before its first call: one place, one name
        else:
            await door.hook("tool.call", step)
        return await call_tool(name, args)

    async def wait(seconds: float) -> dict[str, float]:
        """Wait this many seconds (on the harness's clock) before asking again."""
        return {"now": await door.sleep(seconds)}

    tools = MCPToolset(
        os.environ["KILLPOINT_MCP_URL"],
        process_tool_call=before_each_call,
        max_retries=20,  # a tool error goes back to the model, whose script bounds its own tries
    )
    model = FunctionModel(scripted(workflow_id, careful=variant == "careful"))
    return Agent(model, output_type=str, toolsets=[tools], tools=[Tool(wait, name=WAIT)])


def step_of(tool_call_id: str | None) -> str:
    return (tool_call_id or "").rpartition("-")[0] or "unknown"


async def run(variant: str, saves: Saves, workflow_id: str, door: Door) -> Outcome:
    messages = await _history(saves, door)
    if _finished(messages):
        return _outcome(messages, saves.sequence)
    if variant == "careful":
        messages = repair_messages(messages)  # an unanswered call: look, never resend
    agent = build_agent(variant, workflow_id, door)
    saved = len(messages)
    async with agent, agent.iter(None, message_history=messages) as agent_run:
        node = agent_run.next_node
        while not Agent.is_end_node(node):
            node = await agent_run.next(node)
            now = agent_run.all_messages()
            if Agent.is_model_request_node(node):
                now = [*now, node.request]  # the tools' answers, about to go to the model
            if len(now) > saved:
                await _save(saves, now, door)
                saved = len(now)
    return _outcome(agent_run.all_messages(), saves.sequence)


async def _history(saves: Saves, door: Door) -> list[ModelMessage]:
    """The saved history, or a new one of the start message, saved before anything else."""
    latest = saves.latest()
    if latest is not None:
        return ModelMessagesTypeAdapter.validate_python(latest["messages"])
    with open(os.environ["KILLPOINT_INPUT"]) as given:
        order = json.load(given)
    messages: list[ModelMessage] = [ModelRequest(parts=[UserPromptPart(prompt_for(order))])]
    await _save(saves, messages, door, boundary="start.taken")  # the harness may stop resending
    return messages


async def _save(
    saves: Saves,
    messages: list[ModelMessage],
    door: Door,
    boundary: str = "checkpoint.committed",
) -> None:
    turn = read_turn(messages)
    final = _final_text(messages)
    status, reason = ("running", "") if final is None else _status(final)
    saves.save(
        ModelMessagesTypeAdapter.dump_python(messages, mode="json"),
        state=state_of(turn),
        status=status,
        reason=reason,
        created_at=await door.now(),
    )
    if final is not None or isinstance(messages[-1], ModelRequest):
        # after the model's choice of a call, the next boundary is that call's `tool.call`,
        # at the same durable state: reported once, there
        await door.hook(boundary, _last_step(turn, final))


def _last_step(turn: Turn, final: str | None) -> str:
    if final is not None:
        return "answer"
    return turn.calls[-1].step if turn.calls else "start"


def _final_text(messages: list[ModelMessage]) -> str | None:
    last = messages[-1] if messages else None
    if not isinstance(last, ModelResponse) or last.tool_calls:
        return None
    return "".join(p.content for p in last.parts if isinstance(p, TextPart))


def _finished(messages: list[ModelMessage]) -> bool:
    return _final_text(messages) is not None


def _status(text: str) -> tuple[str, str]:
    """(status, reason) of the model's final answer."""
    kind, _, why = text.partition(":")
    if kind in ("needs_review", "failed"):
        return kind, why.strip()
    return "completed", ""


def _outcome(messages: list[ModelMessage], sequence: int) -> Outcome:
    text = _final_text(messages) or "failed: the run ended without an answer"
    status, reason = _status(text)
    return Outcome(status, state_of(read_turn(messages)), sequence, reason)
