"""The contract between the harness and every engine under test: the vocabulary both speak.

A scenario's workflow (`workflow`), what a step sees (`context`), the intents, receipts, ledger
and approval records and statuses (`records`), the service adapter (`adapters`), the errors a
service's answer maps to (`errors`), the injected clock (`clock`), the boundary hook
(`boundaries`) and content-addressed artifacts (`artifacts`). The reference engine stands on
it and nothing else of the harness; so can a team's own engine.
"""

if __name__ != "killpoint.contract":  # a checkout's folder, imported by its bare name
    raise ImportError(
        "import killpoint.contract, not contract: the folder installs under killpoint, "
        "and a second name would load a second copy of every module"
    )
