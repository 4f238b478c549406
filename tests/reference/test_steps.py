"""The steps object: one public method per kind of step, and an engine runs the one it is given."""

from __future__ import annotations

from pathlib import Path

from killpoint.contract.artifacts import FolderArtifacts
from killpoint.contract.clock import FakeClock
from killpoint.contract.records import RunStatus
from killpoint.contract.workflow import StepKind, Transition
from killpoint.harness.engines.reference import StoreReader
from killpoint.reference.checkpoint import Checkpoint
from killpoint.reference.dispatcher import Engine
from killpoint.reference.fold import Change
from killpoint.reference.ledger import Session
from killpoint.reference.steps import Steps
from killpoint.reference.store import Store
from tests.support.flows import VERSIONS, pure_flow


def test_every_kind_of_step_has_its_method_named_for_it() -> None:
    assert {k.value for k in StepKind} <= {n for n in dir(Steps) if callable(getattr(Steps, n))}


class Doubled(Steps):
    """Pure steps whose outputs are twice what they computed; every other kind unchanged."""

    def pure(self, session: Session, cp: Checkpoint, transition: Transition) -> Change:
        change = super().pure(session, cp, transition)
        change.outputs = {k: 2 * v for k, v in change.outputs.items()}  # type: ignore[operator]
        return change


def test_an_engine_runs_each_step_through_the_steps_it_is_given(
    store: Store, clock: FakeClock, tmp_path: Path, checkpoint_key: bytes
) -> None:
    def engine(steps: type[Steps]) -> Engine:
        artifacts = FolderArtifacts(tmp_path / "artifacts")
        return Engine(
            store,
            [pure_flow()],
            {},
            artifacts=artifacts,
            clock=clock,
            versions=VERSIONS,
            steps=steps,
        )

    assert engine(Doubled).run("pure", "wf-doubled", {}).status is RunStatus.COMPLETED
    assert engine(Steps).run("pure", "wf-plain", {}).status is RunStatus.COMPLETED
    reader = StoreReader(store, "default")
    assert reader.checkpoints("wf-doubled")[-1].outputs == {"plan": 2, "finish": 4}
    assert reader.checkpoints("wf-plain")[-1].outputs == {"plan": 1, "finish": 2}
