"""The catalogue's recovery objectives, by how much a crash may cost (seed 000: "A high-impact
financial agent may need an intent record before every mutation and near-immediate
reconciliation. A low-risk research agent may accept larger semantic intervals.").

Every profile allows one step redone: a crash inside a step loses that step's attempt, which
its effect record makes safe to repeat; more means an engine that starts over. The RTO is the
injected clock from the crash to a resumed worker or a stop for a person: the campaign's
downtime (60 s between workers by default) and a lease left by the dead worker (up to its TTL)
count, as they would in production.
"""

from __future__ import annotations

from killpoint.harness.objectives import RecoveryObjectives

# money, messages, files: back within five minutes, one step redone at most
HIGH_IMPACT = RecoveryObjectives(rpo_steps=1, rto_s=300.0)
# batch work and agents handing work on: ten minutes
ROUTINE = RecoveryObjectives(rpo_steps=1, rto_s=600.0)
# research and drafting: a step more may be redone, a quarter of an hour to come back
LOW_RISK = RecoveryObjectives(rpo_steps=2, rto_s=900.0)
