"""The harness: crash campaigns, the kill-switch, the oracle and the engine protocol.

`killpoint.harness.contract` is the vocabulary every engine and scenario shares,
`killpoint.harness.engine` the reference engine, `killpoint.harness.engines` the adapters that
put an engine (the reference one among them) behind the protocol. A user imports `killpoint`.
"""

if __name__ != "killpoint.harness":  # a checkout's folder, imported by its bare name
    raise ImportError(
        "import killpoint.harness, not harness: the folder installs under killpoint, "
        "and a second name would load a second copy of every module"
    )
