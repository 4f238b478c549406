"""The harness: crash campaigns, the kill-switch, the oracle and the engine protocol.

Its public model sits at the top (the protocol, scenarios, schedules, histories, results,
options); its rooms below, each importing only the rooms under it: `cli` and `pytest_plugin`
(the front doors), `campaign` (plans, exploration, hunts, shards), `engines` (the adapters
that put an engine, the reference one among them, behind the protocol), `run` (one run: the
world, the kill-switch, the runner and the real tier) and `checkers` (the oracle). A user
imports `killpoint`.
"""

if __name__ != "killpoint.harness":  # a checkout's folder, imported by its bare name
    raise ImportError(
        "import killpoint.harness, not harness: the folder installs under killpoint, "
        "and a second name would load a second copy of every module"
    )
