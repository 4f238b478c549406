"""The canary scan alone catches an engine that keeps the sealing key in its checkpoints: judged
false with the scan, not false without it (every other checker passes it), the reference
passes the same schedule; and the harm is real: the key read from the store seals a forged
checkpoint that the engine accepts, where the reference's store gives an attacker nothing."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from killpoint.harness.campaign.execute import Campaign, CampaignConfig
from killpoint.harness.engines.reference import REFERENCE
from killpoint.harness.protocol import EngineSpec
from killpoint.harness.results import RunResult
from killpoint.harness.run.canary_scan import sqlite_path
from killpoint.harness.run.runner import Run, run_schedule
from killpoint.harness.run.world import World
from killpoint.harness.schedule import FaultSchedule, HitPoint, Tier
from killpoint.reference.integrity import canonical_json, seal
from killpoint.scenarios import CATALOGUE
from killpoint.scenarios.mutants import MUTANTS

MUTANT = MUTANTS["signing_key_in_checkpoint"]
SCENARIO = CATALOGUE["order_saga"]
SCHEDULE = FaultSchedule(
    scenario="order_saga",
    run_id="key-kept",
    crashes=(HitPoint(worker=0, step="ship", boundary="step.begin"),),
)


def _run(
    spec: EngineSpec,
    root: Path,
    *,
    canaries: bool = True,
    url: str | None = None,
    tier: Tier = "inprocess",
) -> RunResult:
    config = CampaignConfig(
        scenarios=[SCENARIO], workdir=root, engine=spec, canaries=canaries, store_url=url, tier=tier
    )
    with Campaign(config) as campaign:
        result, _ = campaign.execute(SCENARIO, SCHEDULE, "single")
    return result


def _verdicts(result: RunResult) -> dict[str, object]:
    return {v.checker: v.valid for v in result.verdicts}


def test_a_key_kept_in_the_checkpoints_is_caught_by_the_canary_scan_alone(tmp_path: Path) -> None:
    caught = _run(MUTANT, tmp_path / "caught")
    verdicts = _verdicts(caught)
    assert verdicts.pop("secrets_kept") is False
    assert all(v is True for v in verdicts.values()), caught.verdicts  # nothing else objects
    kept = next(v for v in caught.verdicts if v.checker == "secrets_kept")
    assert kept.summary == "the engine stored the world's checkpoint_key: found in store file " + (
        "store.sqlite-wal"
    )
    unscanned = _run(MUTANT, tmp_path / "unscanned", canaries=False)
    assert unscanned.valid is not False, unscanned.verdicts
    assert _verdicts(unscanned)["secrets_kept"] == "unknown"
    reference = _run(REFERENCE, tmp_path / "reference")
    assert all(v.valid is True for v in reference.verdicts), reference.verdicts


def test_in_the_real_tier_forked_workers_are_handed_the_same_key_and_keep_it(
    tmp_path: Path,
) -> None:
    """A forked worker finds the key where an in-process one does (the environment it
    inherits); the parent scans what it left."""
    caught = _run(MUTANT, tmp_path / "caught", tier="real")
    assert caught.schedule.tier == "real"
    assert _verdicts(caught)["secrets_kept"] is False
    reference = _run(REFERENCE, tmp_path / "reference", tier="real")
    assert _verdicts(reference)["secrets_kept"] is True


@pytest.mark.postgres
def test_on_postgres_the_key_is_found_in_the_store_s_rows(
    postgres_url: str, tmp_path: Path
) -> None:
    caught = _run(MUTANT, tmp_path / "caught", url=postgres_url)
    kept = next(v for v in caught.verdicts if v.checker == "secrets_kept")
    assert kept.valid is False
    assert kept.evidence == ["checkpoint_key (raw) in store rows checkpoints"]
    reference = _run(REFERENCE, tmp_path / "reference", url=postgres_url)
    assert _verdicts(reference)["secrets_kept"] is True


def _stolen_key(database: Path) -> str | None:
    """What someone who can read the store finds: a key carried in a checkpoint, if any."""
    with sqlite3.connect(database) as conn:
        bodies = [json.loads(row[0]) for row in conn.execute("SELECT body FROM checkpoints")]
    carried = [ref for body in bodies for ref in body.get("secret_refs", []) if len(ref) >= 32]
    return carried[0] if carried else None


def _forge_completed(database: Path, key: str) -> None:
    """The latest checkpoint, rewritten to say the run completed, and sealed with `key`."""
    with sqlite3.connect(database) as conn:
        workflow, sequence, tenant, body = conn.execute(
            "SELECT workflow_id, sequence, tenant, body FROM checkpoints "
            "ORDER BY sequence DESC LIMIT 1"
        ).fetchone()
        doc = json.loads(body)
        doc["status"] = "completed"
        forged = canonical_json(doc)
        conn.execute(
            "UPDATE checkpoints SET body = ?, tag = ? WHERE workflow_id = ? AND sequence = ?",
            (forged, seal(forged, tenant, key.encode()), workflow, sequence),
        )


@pytest.mark.parametrize("engine", ["signing_key_in_checkpoint", "reference"])
def test_the_key_read_from_the_store_forges_a_checkpoint_the_engine_accepts(
    engine: str, tmp_path: Path
) -> None:
    spec = REFERENCE if engine == "reference" else MUTANTS[engine]
    stopped = SCHEDULE.model_copy(update={"max_workers": 1})  # the crash leaves it mid-run
    with World.open(tmp_path) as world:
        first = run_schedule(world, SCENARIO, stopped, spec)
        database = sqlite_path(world.store.url)
        assert database is not None and first.final_status == "running"
        key = _stolen_key(database)
        if engine == "reference":
            assert key is None  # the store names its key's reference, never the key
            key = "a-guess-" + "0" * 32  # all an attacker can seal with
        else:
            assert key == world.canaries.secrets.checkpoint_key
        _forge_completed(database, key)
        run = Run(world, SCENARIO, stopped, spec)
        worker, http, _ = run.build(1)
        with http:
            outcome = worker.resume(run.workflow_id)
        sent = world.services.journal.requests()
    # the mutant accepts a run that never shipped as completed; the reference refuses it
    wanted = "quarantined" if engine == "reference" else "completed"
    assert outcome.status.value == wanted, outcome
    assert [r for r in sent if r.service == "publisher"] == []
