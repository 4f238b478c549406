"""What `benchmarks/mutation.py` mutates, against which tests, and the survivors shown equivalent.

The operators are cosmic-ray's, a chosen few: each comparison flipped to its negation and moved
across its boundary, `+`/`-` and `*`/`/` swapped, `|`/`&` swapped (set union and intersection,
the oracle's daily bread), `True`/`False`, `and`/`or`, a `not` added or removed, numbers moved by
one, a loop made to run zero times, `break`/`continue` swapped, an `except` that catches nothing.
The other forty comparison and binary replacements mostly repeat these (`<` → `is`) and would
quadruple the run.
"""

from __future__ import annotations

_COMPARISONS = (
    "Eq_NotEq",
    "NotEq_Eq",
    "Lt_GtE",
    "LtE_Gt",
    "Gt_LtE",
    "GtE_Lt",
    "Lt_LtE",
    "LtE_Lt",
    "Gt_GtE",
    "GtE_Gt",
    "Is_IsNot",
    "IsNot_Is",
)
_BINARY = ("Add_Sub", "Sub_Add", "Mul_Div", "Div_Mul", "BitOr_BitAnd", "BitAnd_BitOr")

OPERATORS: tuple[str, ...] = (
    *(f"core/ReplaceComparisonOperator_{pair}" for pair in _COMPARISONS),
    *(f"core/ReplaceBinaryOperator_{pair}" for pair in _BINARY),
    "core/ReplaceUnaryOperator_Delete_Not",
    "core/ReplaceUnaryOperator_USub_UAdd",
    "core/AddNot",
    "core/ReplaceTrueWithFalse",
    "core/ReplaceFalseWithTrue",
    "core/ReplaceAndWithOr",
    "core/ReplaceOrWithAnd",
    "core/ReplaceBreakWithContinue",
    "core/ReplaceContinueWithBreak",
    "core/NumberReplacer",
    "core/ZeroIterationForLoop",
    "core/ExceptionReplacer",
)

# A module's mutants run against its mirrored tests (tests/<folder>/test_<module>.py) unless
# named here: the modules every checker shares run against the oracle's whole folder.
_ORACLE = ("tests/harness/checkers",)
SUITES: dict[str, tuple[str, ...]] = {
    "harness/checkers/__init__.py": _ORACLE,
    "harness/checkers/_common.py": _ORACLE,
    "harness/checkers/expectation.py": _ORACLE,
    "harness/checkers/measures.py": _ORACLE,
    "harness/checkers/ground_truth.py": _ORACLE,
    "harness/checkers/deploy.py": (*_ORACLE, "tests/harness/campaign/test_deploys.py"),
    "harness/checkers/deploy_outcome.py": (*_ORACLE, "tests/harness/campaign/test_deploys.py"),
    # The ledger's own file holds its pure functions; the executor runs inside the dispatcher.
    # It writes through the store alone, so SQLite is enough (a suite is pytest's arguments).
    "reference/ledger.py": (
        "-m",
        "not postgres",
        "tests/reference/test_ledger.py",
        "tests/reference/test_dispatcher.py",
        "tests/reference/test_budget.py",
    ),
    "reference/lease.py": (
        "tests/reference/test_store.py",
        "tests/reference/test_controls_fencing.py",
    ),
    "reference/idempotency.py": ("tests/reference/test_ledger.py",),
}

# Survivors no test can kill, because the mutant behaves as the original does: keyed by
# (module, the original line stripped, operator), with the reason.
_FIRST_REQUEST = (
    "the first request can be no copy whatever `previous` starts at: `copied` needs an "
    "`original`, and there is none before it"
)
_ONCE_IS_NO_DUPLICATE = (
    "`n > 1` as `n >= 1` or `n > 0`: a Counter's counts are at least one, and an effect applied "
    "once adds n - 1 = 0 to the duplicates whether it is summed or left out (the other "
    "NumberReplacer mutants of the line, `n - 2`, `n - 0`, `n > 2`, are killed)"
)
EQUIVALENT: dict[tuple[str, str, str], str] = {
    ("harness/checkers/attempts.py", "previous = 0", "core/NumberReplacer"): _FIRST_REQUEST,
    (
        "harness/checkers/progress.py",
        "last_fault = max((w.worker for w in history.deaths), default=-1)",
        "core/NumberReplacer",
    ): "workers are numbered from 0 (`Worker` is ge=0): below -1 or at -1, every one is after",
    ("harness/checkers/isolation.py", "@dataclass(frozen=True)", "core/ReplaceTrueWithFalse"): (
        "nothing assigns to a Party or hashes one (they are told apart by `is` and `id`)"
    ),
    (
        "harness/checkers/isolation.py",
        "if maker is None or maker[0] is party or where in own:",
        "core/NumberReplacer",
    ): (
        "`maker[0] is party` is implied by `where in own` (the maker applied that resource), "
        "so the clause that the mutant makes always false was never needed"
    ),
    (
        "harness/checkers/measures.py",
        "duplicate_effects=sum(n - 1 for n in groups.values() if n > 1),",
        "core/ReplaceComparisonOperator_Gt_GtE",
    ): _ONCE_IS_NO_DUPLICATE,
    (
        "harness/checkers/measures.py",
        "duplicate_effects=sum(n - 1 for n in groups.values() if n > 1),",
        "core/NumberReplacer",
    ): _ONCE_IS_NO_DUPLICATE,
    (
        "harness/checkers/outcome.py",
        "max(w.ended_at for w in workers) - min(w.started_at for w in workers) if workers else 0",
        "core/NumberReplacer",
    ): "no worker as `else -1`: a time limit is above zero (`gt=0`), so 0 and -1 both fall short"
    " of it (`else 1` is killed)",
    (
        "harness/checkers/outcome.py",
        'if budget.get("steps_left", 1) <= 0 or budget.get("cost_left", 1) <= 0:',
        "core/NumberReplacer",
    ): "a budget that counts no steps or no cost defaulted to 2 instead of 1: either is above "
    "zero, so neither runs the budget out (the defaults of 0 and the bounds moved are killed)",
}
