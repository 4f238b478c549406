"""An engine with two mistakes that no one run needs both of, for `killpoint hunt --engine
tests.support.two_bugs:factory`: an effect in doubt is assumed not to have happened (sent
again: `single_effect`), and a run completes without its verification read
(`verified_completion`). Two classes of violation at least, each with a smallest schedule."""

from __future__ import annotations

from killpoint.contract.records import EffectIntent, EffectRecord, EffectStatus
from killpoint.reference.ledger import EffectExecutor
from killpoint.scenarios.mutants import steps
from killpoint.scenarios.mutants.build import mutant


class AssumeAbsent(EffectExecutor):
    """Never asks the service: an effect in doubt is taken for one that never happened."""

    def reconcile(self, intent: EffectIntent, record: EffectRecord) -> EffectRecord:
        doubt = (EffectStatus.STARTED, EffectStatus.UNKNOWN)
        return self.mark(record, EffectStatus.PREPARED, expect=doubt, reason="assumed absent")


factory = mutant(
    "two_bugs",
    "assumes an effect in doubt absent; completes without verifying",
    kinds=steps.CompletionWithoutVerification,
    executor=AssumeAbsent,
).factory
