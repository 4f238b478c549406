"""The tamper table and the reference's hook: every kind is one the hook stages as its row says
(sealed kinds stay validly sealed, a legacy kind lacks exactly one security field, artifact
damage is of the kind named), declines where there is nothing to alter, and a schedule names
only kinds of the table."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field, replace
from pathlib import Path

import pytest

from killpoint.contract.errors import KillpointError
from killpoint.harness.campaign.execute import Campaign, CampaignConfig
from killpoint.harness.engines.reference import REFERENCE, artifacts_of, open_store
from killpoint.harness.engines.reference import tamper as reference_tamper
from killpoint.harness.protocol import StoreHandle
from killpoint.harness.schedule import FaultSchedule, Tamper, load_schedule
from killpoint.harness.tampering import TAMPER_KINDS, TamperKind, register, tamper_kind
from killpoint.reference.checkpoint import StoredCheckpoint
from killpoint.reference.integrity import verify_seal
from killpoint.reference.tamper import KINDS
from killpoint.reference.tamper_sealed import OTHER_TENANT
from killpoint.scenarios import CATALOGUE


@dataclass
class Staged:
    """What the store held just before and just after the reference's hook ran."""

    sequence: int | None = None
    before: list[StoredCheckpoint] = field(default_factory=list)
    after: list[StoredCheckpoint] = field(default_factory=list)
    files_before: dict[str, bytes] = field(default_factory=dict)
    files_after: dict[str, bytes] = field(default_factory=dict)
    ledger_after: dict[str, tuple[str, str]] = field(default_factory=dict)  # row's, log's status


def _files(handle: StoreHandle) -> dict[str, bytes]:
    root = artifacts_of(handle).root
    return {p.name: p.read_bytes() for p in root.rglob("*") if p.is_file() and "." not in p.name}


def _stage(tmp_path: Path, scenario: str, step: str, boundary: str, kind: str) -> Staged:
    seen = Staged()

    def hook(handle: StoreHandle, workflow_id: str, name: str) -> int | None:
        store = open_store(handle)
        seen.before, seen.files_before = store.checkpoints(workflow_id), _files(handle)
        seen.sequence = reference_tamper(handle, workflow_id, name)
        seen.after, seen.files_after = store.checkpoints(workflow_id), _files(handle)
        logged = {row.operation_id: row.status.value for row in store.effect_log(workflow_id)}
        seen.ledger_after = {
            e.operation_id: (e.status.value, logged[e.operation_id])
            for e in store.effects(workflow_id)
        }
        return seen.sequence

    schedule = FaultSchedule.model_validate(
        {
            "scenario": scenario,
            "run_id": f"stage-{kind}".replace("_", "-"),
            "crashes": [{"worker": 0, "step": step, "boundary": boundary}],
            "tamper": [{"after_worker": 0, "kind": kind}],
        }
    )
    config = CampaignConfig(
        scenarios=[CATALOGUE[scenario]], workdir=tmp_path, engine=replace(REFERENCE, tamper=hook)
    )
    with Campaign(config) as campaign:
        campaign.execute(CATALOGUE[scenario], schedule, "single")
    return seen


def test_the_table_and_the_reference_s_hook_know_the_same_kinds() -> None:
    assert set(TAMPER_KINDS) == set(KINDS)
    for kind in TAMPER_KINDS.values():
        assert kind.what and kind.target in ("checkpoint", "outputs", "artifact", "ledger")
        assert kind.refused or kind.stops or kind.name in ("legacy_v2", "legacy_v1")


def test_a_schedule_names_only_a_kind_of_the_table(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"unknown tamper kind 'scrambled'; known: .*rollback"):
        Tamper(after_worker=0, kind="scrambled")
    path = tmp_path / "bad.json"
    path.write_text(
        json.dumps(
            {"scenario": "order_saga", "run_id": "r", "tamper": [{"after_worker": 0, "kind": "x"}]}
        )
    )
    with pytest.raises(KillpointError, match="unknown tamper kind 'x'"):
        load_schedule(path)


def test_a_registered_kind_is_one_a_schedule_may_name_and_the_reference_declines(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    kind = TamperKind("index_dropped", "checkpoint", "a team's own kind", refused=True)
    monkeypatch.setitem(TAMPER_KINDS, kind.name, register(kind))  # removed again afterwards
    assert Tamper(after_worker=0, kind="index_dropped").kind == "index_dropped"
    assert tamper_kind("index_dropped").explains("quarantined")
    staged = _stage(tmp_path, "order_saga", "ship", "step.begin", "index_dropped")
    assert staged.sequence is None and staged.after == staged.before


def test_another_tenant_s_checkpoint_is_validly_sealed_for_that_tenant(
    tmp_path: Path, checkpoint_key: bytes
) -> None:
    staged = _stage(tmp_path, "order_saga", "ship", "step.begin", "foreign_tenant")
    row = staged.after[-1]
    assert staged.sequence == row.sequence and row.tenant == OTHER_TENANT
    verify_seal(row.body, OTHER_TENANT, row.tag, checkpoint_key)
    assert json.loads(row.body)["tenant"] == OTHER_TENANT


def test_another_workflow_s_checkpoint_is_validly_sealed_for_this_tenant(
    tmp_path: Path, checkpoint_key: bytes
) -> None:
    staged = _stage(tmp_path, "order_saga", "ship", "step.begin", "foreign_workflow")
    row, was = staged.after[-1], staged.before[-1]
    assert row.tenant == was.tenant and row.body != was.body
    verify_seal(row.body, row.tenant, row.tag, checkpoint_key)
    body = json.loads(row.body)
    assert body["workflow_id"] != row.workflow_id and body["sequence"] == row.sequence


def test_a_rollback_puts_the_previous_sealed_checkpoint_in_the_latest_s_place(
    tmp_path: Path, checkpoint_key: bytes
) -> None:
    staged = _stage(tmp_path, "order_saga", "ship", "step.begin", "rollback")
    row, older = staged.after[-1], staged.before[-2]
    assert (row.body, row.tag) == (older.body, older.tag)
    verify_seal(row.body, row.tenant, row.tag, checkpoint_key)
    assert json.loads(row.body)["sequence"] == row.sequence - 1


@pytest.mark.parametrize(
    ("kind", "missing", "kept"),
    [
        ("legacy_unsafe", "owner_tenant", "limits"),
        ("legacy_no_limits", "limits", "owner_tenant"),
        ("legacy_no_approval_expiry", "approval_expires_at", "approval_gate"),
    ],
)
def test_a_legacy_kind_lacks_one_security_field_and_keeps_the_others(
    kind: str, missing: str, kept: str, tmp_path: Path
) -> None:
    staged = _stage(tmp_path, "approval_refund", "refund", "step.begin", kind)
    doc = json.loads(staged.after[-1].body)
    assert doc["schema_version"] == 1
    assert doc.get(missing) is None and doc.get(kept) is not None


def test_a_kind_with_nothing_to_alter_is_declined(tmp_path: Path) -> None:
    for kind in ("legacy_no_approval_expiry", "artifact_bitflip"):  # no approval, no artifact
        staged = _stage(tmp_path / kind, "order_saga", "ship", "step.begin", kind)
        assert staged.sequence is None and staged.after == staged.before, kind


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_a_bit_flip_keeps_the_size_and_a_truncation_keeps_a_prefix(tmp_path: Path) -> None:
    flipped = _stage(tmp_path / "f", "research_publish", "draft", "step.begin", "artifact_bitflip")
    for sha, data in flipped.files_before.items():
        after = flipped.files_after[sha]
        assert len(after) == len(data) and after != data
        assert sum(bin(a ^ b).count("1") for a, b in zip(after, data, strict=True)) == 1
    cut = _stage(tmp_path / "t", "research_publish", "draft", "step.begin", "artifact_truncated")
    for sha, data in cut.files_before.items():
        assert data.startswith(cut.files_after[sha]) and len(cut.files_after[sha]) < len(data)


def test_a_swap_leaves_each_file_holding_bytes_that_hash_to_another_artifact(
    tmp_path: Path,
) -> None:
    staged = _stage(tmp_path, "handoff", "publish", "step.begin", "artifact_swapped")
    assert len(staged.files_before) == 2
    for sha in staged.files_before:
        held = _sha(staged.files_after[sha])
        assert held != sha and held in staged.files_before


def test_a_ledger_rollback_leaves_the_row_behind_its_append_only_log(tmp_path: Path) -> None:
    staged = _stage(tmp_path, "email", "notify", "effect.receipt_committed", "ledger_rolled_back")
    assert staged.ledger_after == {"notify/send": ("prepared", "committed")}
    assert staged.after == staged.before  # no checkpoint altered
