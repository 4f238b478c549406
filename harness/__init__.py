"""The harness: crash campaigns, the kill-switch, the oracle and the engine protocol.

`killpoint.harness.contract` is the vocabulary every engine and scenario shares,
`killpoint.harness.engine` the reference engine, `killpoint.harness.engines` the adapters that
put an engine (the reference one among them) behind the protocol. A user imports `killpoint`.
"""
