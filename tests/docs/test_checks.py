"""The documentation's checks can fail: an unmarked block, a flag the CLI lacks, a bad value, an
unknown scenario, a missing file or extra, a program no rule knows and an output that does not
show its sample are each reported, so test_docs.py passing means something."""

from __future__ import annotations

from tests.support.blocks import ROOT, output_shown, problem, read_blocks
from tests.support.commands import Command, check, commands

DOC = ROOT / "docs" / "example.md"


def problems_of(markdown: str) -> list[str | None]:
    blocks = read_blocks(DOC, markdown)
    return [problem(b, a) for a, b in zip([None, *blocks], blocks, strict=False)]


def test_an_unmarked_block_is_refused_and_a_marked_one_or_a_text_sample_is_not() -> None:
    found = problems_of(
        "```python\nprint(1)\n```\n<!-- run -->\n```python\nprint(1)\n```\n"
        "```text\n1\n```\n<!-- parse only -->\n```sh\nkillpoint run\n```\n"
        "<!-- output -->\n```text\n1\n```\n<!-- sideways -->\n```sh\nls\n```\n"
    )
    assert found[0] is not None and "unmarked ```python" in found[0]
    assert found[1:3] == [None, None]
    assert found[3] is not None and "say why" in found[3]
    assert found[4] is not None and "must follow a run block" in found[4]
    assert found[5] is not None and "unknown marker directive" in found[5]


def test_a_reason_may_hold_a_semicolon_and_a_run_may_follow_a_file() -> None:
    (block,) = read_blocks(DOC, "<!-- file: t.py; run: pytest t.py -->\n```python\n```\n")
    assert block.marker == {"file": "t.py", "run": "pytest t.py"}
    (block,) = read_blocks(DOC, "<!-- parse only: slow; very -->\n```sh\n```\n")
    assert block.marker == {"parse only": "slow; very"}


def test_a_killpoint_command_is_parsed_as_the_cli_parses_it() -> None:
    assert check(Command("killpoint run -s order_saga --no-double --jobs auto", 0)) == []
    assert "No such option: --bogus" in " ".join(check(Command("killpoint run --bogus", 0)))
    assert "--jobs" in " ".join(check(Command("killpoint run --jobs many", 0)))
    assert check(Command("killpoint run --tier weird", 0))
    assert check(Command("killpoint run -s no_such_scenario", 0)) == [
        "no scenario 'no_such_scenario'"
    ]
    assert check(Command("killpoint run -s mine", 0), {"mine"}) == []
    assert check(Command("killpoint run --engine mutant:no_such_mutant", 0))
    assert check(Command("killpoint run --engine langgraph:sloppy", 0))
    assert check(Command("killpoint replay docs/no/such/schedule.json", 0))
    assert check(Command("killpoint replay killpoint-out/campaign-1/s.json", 0)) == []
    assert check(Command("killpoint frobnicate", 0)) == ["killpoint has no command 'frobnicate'"]


def test_an_engine_file_must_be_in_the_repository_and_a_command_engine_is_taken() -> None:
    naive = "docs/examples/langgraph-ts/naive.toml"
    assert check(Command(f"killpoint run --engine {naive} -s order_saga", 0)) == []
    assert check(Command("killpoint run --engine docs/no/such/engine.toml", 0)) == [
        "no engine file docs/no/such/engine.toml"
    ]
    assert check(Command("killpoint run --engine 'cmd:node agent.js'", 0)) == []
    assert check(Command("killpoint run --engine docs/examples/mcp_agent/careful.toml", 0)) == []


def test_a_synopsis_is_checked_flag_by_flag() -> None:
    assert check(Command("killpoint run [-s SCENARIO ...] [--no-double]", 0)) == []
    assert check(Command("killpoint run [--no-such-flag]", 0)) == [
        "killpoint run has no --no-such-flag"
    ]
    assert check(Command("killpoint run ... | frobnicate ...", 0))


def test_other_programs_need_what_they_name_and_an_unknown_one_fails() -> None:
    assert check(Command("pip install -e '.[test,frameworks]'", 0)) == []
    assert check(Command("pip install 'killpoint[no-such-extra]'", 0)) == [
        "no extra 'no-such-extra'"
    ]
    assert check(Command(".venv/bin/pytest tests/no/such/test.py", 0))
    assert check(Command("bash .ci/run", 0)) == []
    assert check(Command("python benchmarks/bench.py [--no-such-flag]", 0))
    assert check(Command("cp docs/examples/none.py .", 0))
    assert check(Command("npm --prefix docs/examples/langgraph-ts ci", 0)) == []
    assert check(Command("npm --prefix docs/examples/langgraph-ts run build", 0)) == []
    assert check(Command("npm --prefix docs/examples/langgraph-ts run deploy", 0))
    assert check(Command("npm --prefix docs/examples ci", 0)) == [
        "docs/examples has no package.json"
    ]
    assert check(Command("npm publish", 0))
    assert check(Command("make all", 0)) == [
        "no rule checks 'make' (make all): add one to tests.support.commands.RULES"
    ]


def test_commands_join_their_lines_split_chains_and_read_the_exit_they_state() -> None:
    found = commands(
        "# a comment\nA=1 killpoint run \\\n  --no-double  # exit 1\nkillpoint run [--db URL]\n"
        "    [--json]\npip install -e . && killpoint demo\n"
    )
    assert [(c.text, c.exit) for c in found] == [
        ("A=1 killpoint run --no-double", 1),
        ("killpoint run [--db URL] [--json]", 0),
        ("pip install -e .", 0),
        ("killpoint demo", 0),
    ]
    assert found[0].argv == ["killpoint", "run", "--no-double"]


def test_an_output_must_show_its_sample_in_order() -> None:
    printed = "✗ checkout [single_effect] took effect\n2 times\n  replay: killpoint replay x.json"
    assert output_shown("[single_effect] took effect 2 times\nreplay: … x.json", printed) is None
    assert output_shown("took effect 3 times", printed) == "took effect 3 times"
    assert output_shown("replay: …\n[single_effect]", printed) == "[single_effect]"
