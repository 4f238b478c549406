"""Engines behind the harness's protocol: one adapter module per engine, and the registry.

`reference` adapts killpoint's own engine; `registry.load_engine` finds an engine by name
("reference", "mutant:NAME", an installed engine's `killpoint.engines` entry point such as
"langgraph:naive") or as `module:factory` of a team's own; `spec.framework_spec` is the spec
every adapter, killpoint's or a team's plug-in, is built with.
"""
