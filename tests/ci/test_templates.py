"""The CI templates users copy (.github/, .gitlab/, shown in docs/ci.md): valid for their CI,
calling the real CLI, covering every shard, and letting the merge, not a shard, fail on a
violation.

Each YAML is validated against its CI's schema (check-jsonschema's vendored copies: nothing is
downloaded), and its shell scripts run with a stand-in `killpoint` whose calls are parsed by the
real CLI (tests/support/commands.py).
"""

from __future__ import annotations

import subprocess
import sys
from fnmatch import fnmatch
from pathlib import Path
from typing import Any

import pytest

from tests.support.blocks import ROOT, read_blocks
from tests.support.ci_templates import (
    ACTION,
    GITLAB,
    WORKFLOW,
    load,
    problems,
    resolve,
    run_script,
    step,
)


@pytest.mark.parametrize(
    ("path", "schema"),
    [
        (ACTION, "vendor.github-actions"),
        (WORKFLOW, "vendor.github-workflows"),
        (GITLAB, "vendor.gitlab-ci"),
    ],
    ids=["action", "workflow", "gitlab"],
)
def test_each_template_is_valid_against_its_ci_schema(path: Path, schema: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--builtin-schema", schema, str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def _action_env(shard: int) -> dict[str, str]:
    """The environment of the action's campaign step in the workflow's job for `shard`."""
    workflow, action = load(WORKFLOW), load(ACTION)
    job = workflow["jobs"]["shard"]
    context = {
        "matrix.shard": str(shard),
        "strategy.job-total": str(len(job["strategy"]["matrix"]["shard"])),
        **{f"env.{k}": str(v) for k, v in workflow["env"].items()},
    }
    (uses,) = [s for s in job["steps"] if s.get("uses", "").endswith("killpoint-campaign")]
    assert (WORKFLOW.parents[2] / uses["uses"]).resolve() == ACTION.parent
    assert set(uses["with"]) <= set(action["inputs"]), "an input the action does not declare"
    inputs = {k: str(v.get("default", "")) for k, v in action["inputs"].items()}
    inputs |= {k: resolve(v, context) for k, v in uses["with"].items()}
    campaign = step(action["runs"]["steps"], "run")
    return {
        k: resolve(v, {f"inputs.{n}": x for n, x in inputs.items()})
        for k, v in campaign["env"].items()
    }


def _action_script() -> str:
    return str(step(load(ACTION)["runs"]["steps"], "run")["run"])


def test_the_workflow_runs_each_shard_once_with_flags_the_cli_accepts(tmp_path: Path) -> None:
    shards = load(WORKFLOW)["jobs"]["shard"]["strategy"]["matrix"]["shard"]
    assert sorted(shards) == list(range(1, len(shards) + 1))
    calls = []
    for shard in shards:
        ran = run_script(_action_script(), _action_env(shard), tmp_path)
        assert ran.status == 0
        calls += ran.calls
    assert problems(calls) == []
    assert sorted(c[c.index("--shard") + 1] for c in calls) == [
        f"{i}/{len(shards)}" for i in range(1, len(shards) + 1)
    ]
    assert all(c[c.index("--db") + 1].startswith("postgresql+psycopg://") for c in calls)


@pytest.mark.parametrize(
    ("killpoint_exit", "fail_on_violation", "step_exit"),
    [(0, "false", 0), (1, "false", 0), (1, "true", 1), (2, "false", 2)],
)
def test_a_shard_lets_a_violation_through_to_the_merge_but_not_a_broken_run(
    tmp_path: Path, killpoint_exit: int, fail_on_violation: str, step_exit: int
) -> None:
    env = _action_env(1) | {"FAIL_ON_VIOLATION": fail_on_violation}
    ran = run_script(_action_script(), env, tmp_path, killpoint_exit)
    assert ran.status == step_exit
    assert f"status={killpoint_exit}\n" in ran.output
    assert "result=killpoint-out/result-1.json\n" in ran.output


@pytest.mark.parametrize(
    ("scenarios", "args", "found"),
    [
        ("email order_saga", "--explore 30s --no-real-pass", []),
        ("email nope", "", ["no scenario 'nope'"]),
        ("", "--no-such-flag", ["No such option"]),
    ],
)
def test_the_action_passes_each_scenario_and_extra_flag_to_the_cli(
    tmp_path: Path, scenarios: str, args: str, found: list[str]
) -> None:
    env = _action_env(2) | {"SCENARIOS": scenarios, "ARGS": args}
    (call,) = run_script(_action_script(), env, tmp_path).calls
    named = [call[i + 1] for i, word in enumerate(call) if word == "--scenario"]
    assert named == scenarios.split()
    assert all(word in call for word in args.split())
    seen = problems([call])
    assert [f for f in found if not any(f in p for p in seen)] == [] and len(seen) == len(found)


def _results(folder: Path, shards: int) -> list[str]:
    """Shard results as the artifacts bring them into the merge job's `killpoint-out/`."""
    (folder / "killpoint-out").mkdir()
    names = [f"killpoint-out/result-{i}.json" for i in range(1, shards + 1)]
    for name in names:
        (folder / name).write_text("{}")
    return names


def _merged(calls: list[list[str]]) -> list[str]:
    ((command, *args),) = calls
    assert command == "merge"
    return [a for a in args if a.endswith(".json") and "/result-" in a]


def test_the_workflow_merges_every_shards_artifact_and_summarises_it(tmp_path: Path) -> None:
    workflow = load(WORKFLOW)
    shards = len(workflow["jobs"]["shard"]["strategy"]["matrix"]["shard"])
    merge = workflow["jobs"]["merge"]
    assert merge["needs"] == "shard" and "if" not in merge  # only after every shard completed
    assert workflow["jobs"]["shard"]["strategy"]["fail-fast"] is False
    upload = next(
        s for s in load(ACTION)["runs"]["steps"] if "upload-artifact" in s.get("uses", "")
    )
    download = next(s for s in merge["steps"] if "download-artifact" in s.get("uses", ""))
    name = resolve(upload["with"]["name"], {"steps.campaign.outputs.index": "3"})
    assert fnmatch(name, download["with"]["pattern"])
    results = _results(tmp_path, shards)
    ran = run_script(step(merge["steps"], "merge")["run"], {}, tmp_path)
    assert ran.status == 0 and problems(ran.calls) == []
    assert _merged(ran.calls) == results
    summary = ran.calls[0][ran.calls[0].index("--summary-md") + 1]
    summarising = next(s for s in merge["steps"] if "GITHUB_STEP_SUMMARY" in s.get("run", ""))
    assert summary in summarising["run"] and summarising["if"] == "always()"


def _gitlab_job(name: str) -> tuple[dict[str, Any], dict[str, str]]:
    """A job of the GitLab template and the variables its script sees."""
    pipeline = load(GITLAB)
    job = pipeline[name]
    variables = pipeline["variables"] | job.get("variables", {})
    return job, {k: str(v) for k, v in variables.items()}


def test_the_gitlab_pipeline_runs_each_node_as_a_shard_with_flags_the_cli_accepts(
    tmp_path: Path,
) -> None:
    job, variables = _gitlab_job("killpoint-shard")
    total = job["parallel"]
    calls = []
    for index in range(1, total + 1):
        env = variables | {"CI_NODE_INDEX": str(index), "CI_NODE_TOTAL": str(total)}
        ran = run_script("\n".join(job["script"]), env, tmp_path)
        assert ran.status == 0
        calls += ran.calls
    assert problems(calls) == []
    assert sorted(c[c.index("--shard") + 1] for c in calls) == [
        f"{i}/{total}" for i in range(1, total + 1)
    ]


@pytest.mark.parametrize(("killpoint_exit", "allowed"), [(1, True), (2, False)])
def test_a_gitlab_shard_is_allowed_to_fail_on_a_violation_only(
    tmp_path: Path, killpoint_exit: int, allowed: bool
) -> None:
    job, variables = _gitlab_job("killpoint-shard")
    env = variables | {"CI_NODE_INDEX": "1", "CI_NODE_TOTAL": str(job["parallel"])}
    ran = run_script("\n".join(job["script"]), env, tmp_path, killpoint_exit)
    assert ran.status == killpoint_exit
    assert (ran.status in job["allow_failure"]["exit_codes"]) is allowed


def test_the_gitlab_merge_needs_every_shard_and_reports_its_junit(tmp_path: Path) -> None:
    job, variables = _gitlab_job("killpoint-merge")
    shard, _ = _gitlab_job("killpoint-shard")
    assert job["needs"] == [{"job": "killpoint-shard", "artifacts": True}]
    assert "killpoint-out/*/schedules/" in shard["artifacts"]["paths"]
    results = _results(tmp_path, shard["parallel"])
    ran = run_script("\n".join(job["script"]), variables, tmp_path)
    assert ran.status == 0 and problems(ran.calls) == []
    assert _merged(ran.calls) == results
    junit = ran.calls[0][ran.calls[0].index("--junit") + 1]
    assert job["artifacts"]["reports"]["junit"] == junit


@pytest.mark.parametrize(
    ("example", "template"),
    [("ci-github-shard-job", WORKFLOW), ("ci-gitlab-shard-job", GITLAB)],
)
def test_the_docs_show_the_templates_as_they_are(example: str, template: Path) -> None:
    """docs/ci.md's excerpts are parts of the templates, verbatim:
    <!-- example: ci-github-shard-job -->
    <!-- example: ci-gitlab-shard-job -->
    """
    (block,) = [b for b in read_blocks(ROOT / "docs/ci.md") if b.marker.get("example") == example]
    assert block.text in template.read_text()
