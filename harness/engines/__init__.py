"""Engines behind the harness's protocol: one adapter module per engine, and the registry.

`reference` adapts killpoint's own engine; `registry.load_engine` finds an engine by name
("reference", "mutant:NAME") or as `module:factory` of a team's own.
"""
