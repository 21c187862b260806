"""``engine="auto"``: one measured rule per MDAV-family method, applied the same everywhere.

The rule (:data:`microagg._mdav.dispatch.AUTO_RULES`) is a table of break-even sizes
measured with ``tests/benchmarks/bench_scale.py --breakeven``. These tests check that
:func:`~microagg._mdav.dispatch.choose_engine` switches exactly at the table's sizes for
each method, that GOMM's direct call of MDAV's loops (``microagg._gomm_eval``) asks the
same question, and that auto's labels are the forced engines' labels at the switch.
"""

from __future__ import annotations

import numpy as np
import pytest

import microagg as ma
from microagg._gomm_eval import _GroupCache
from microagg._jit import HAVE_NUMBA
from microagg._mdav.dispatch import (
    AUTO_RULES,
    ENGINES,
    AutoRule,
    AutoRules,
    auto_picks_indexed,
    choose_engine,
)
from microagg._methods import MDAV_FAMILY, get_method

needs_numba = pytest.mark.skipif(not HAVE_NUMBA, reason="auto runs the numpy engine without numba")


def _shape(n: int, p: int) -> np.ndarray:
    """An ``(n, p)`` array of zeros without allocating it (choose_engine reads max/min)."""
    return np.broadcast_to(np.zeros(1), (n, p))


def test_every_mdav_family_method_has_a_rule():
    assert set(AutoRules._fields) == set(MDAV_FAMILY)
    for name in MDAV_FAMILY:
        rule = getattr(AUTO_RULES, name)
        assert isinstance(rule, AutoRule)
        ps = [p for p, _ in rule.break_even]
        assert ps == sorted(set(ps)), name  # increasing p, each once
        assert all(n >= 1 for _, n in rule.break_even), name


@needs_numba
@pytest.mark.parametrize("name", MDAV_FAMILY)
def test_auto_switches_at_the_measured_break_even(name):
    rule = getattr(AUTO_RULES, name)
    for p, n in rule.break_even:
        assert choose_engine("auto", _shape(n - 1, p), method=name) == "loops", (p, n)
        assert choose_engine("auto", _shape(n, p), method=name) == "indexed", (p, n)
    last = rule.break_even[-1][0] if rule.break_even else 0
    # beyond the largest p measured (or with no p where the indexed engine wins): the loops
    assert choose_engine("auto", _shape(10**7, last + 1), method=name) == "loops"
    # data the indexed engine's rounding analysis does not cover: the loops, whatever n
    huge = np.broadcast_to(np.full(1, 1e200), (10**7, 2))
    assert choose_engine("auto", huge, method=name) == "loops"


def test_threshold_interpolates_between_measured_p():
    rule = AutoRule(((2, 1000), (10, 25_000), (20, 25_000)))
    assert rule.threshold(1) == 1000  # below the first p: the first's
    assert rule.threshold(2) == 1000 and rule.threshold(10) == 25_000
    assert 1000 < rule.threshold(5) < 25_000
    # geometric on log-log scales: 2 -> 10 multiplies p by 5 and n by 25, i.e. n ~ p^2
    assert rule.threshold(4) == pytest.approx(4000, abs=1)
    assert rule.threshold(15) == 25_000
    assert rule.threshold(21) == float("inf")
    assert AutoRule(()).threshold(1) == float("inf")  # loops everywhere


@pytest.mark.parametrize("name", MDAV_FAMILY)
def test_forced_engines_are_not_second_guessed(name):
    small = _shape(10, 2)
    for forced in ENGINES:  # every engine the package has
        assert choose_engine(forced, small, method=name) == forced


def test_method_and_engine_are_checked():
    X = _shape(10, 2)
    for bad in ("hybrid", "MDAV", "", None):
        with pytest.raises(ValueError, match="method must be one of 'mdav', 'mdav_single'"):
            choose_engine("auto", X, method=bad)
        with pytest.raises(ValueError, match="method must be one of"):
            auto_picks_indexed(bad, 10, 2)
    with pytest.raises(ValueError, match="engine must be one of 'auto'"):
        choose_engine("fast", X, method="mdav")


@needs_numba
def test_gomm_asks_the_same_question_as_mdav():
    """``_GroupCache._runs_loops`` (GOMM calls MDAV's loops directly) agrees with auto."""
    rule = AUTO_RULES.mdav
    sizes = sorted({max(n + d, 2) for _, n in rule.break_even for d in (-1, 0)} | {500, 10**5})
    width = max([p for p, _ in rule.break_even], default=3) + 1
    for n in sizes:
        Z = np.zeros((n, width))
        cache = _GroupCache(Z, 3, "mdav", ma.mdav)
        for w in range(1, width + 1):
            cols = tuple(range(w))
            auto = choose_engine("auto", Z[:, list(cols)], method="mdav")
            assert cache._runs_loops(cols) == (auto == "loops"), (n, w)


@needs_numba
def test_gomm_runs_the_loops_only_on_groups_mdav_leaves_unscaled():
    """A group whose largest value mdav must rescale (beyond ``2**±SAFE_EXPONENT``) goes
    through ``mdav`` itself; a tiny column beside an ordinary one does not make its group
    rescaled, alone it does; the labels are mdav's either way."""
    rng = np.random.default_rng(3)
    Z = rng.normal(size=(40, 4)) * np.array([1.0, 1e-40, 1e200, 1.0])
    cache = _GroupCache(Z, 3, "mdav", ma.mdav)
    assert not cache.unscaled
    expect = {(0,): True, (1,): False, (2,): False, (0, 1): True, (1, 2): False,
              (0, 3): True, (0, 1, 3): True, (0, 2): False}
    for cols, loops in expect.items():
        assert cache._runs_loops(cols) == loops, cols
        np.testing.assert_array_equal(cache.get(cols).labels, ma.mdav(Z[:, list(cols)], 3))
    assert _GroupCache(Z[:, [0, 3]], 3, "mdav", ma.mdav).unscaled


@needs_numba
@pytest.mark.parametrize("name", MDAV_FAMILY)
def test_auto_labels_equal_both_engines_on_each_side_of_the_switch(name):
    """At p = 2, just below and at the break-even size: auto's labels are both engines'."""
    rule = getattr(AUTO_RULES, name)
    p = 2
    n = int(rule.threshold(p))
    if n > 20_000:
        pytest.skip(f"{name}: the loops win up to {n} records at p = 2")
    f = get_method(name).function
    rng = np.random.default_rng(5)
    for size, engine in ((n - 1, "loops"), (n, "indexed")):
        X = rng.normal(size=(size, p))
        assert choose_engine("auto", X, method=name) == engine
        auto = f(X, 3)
        assert np.array_equal(auto, f(X, 3, engine="loops")), (name, size)
        assert np.array_equal(auto, f(X, 3, engine="indexed")), (name, size)


@needs_numba
def test_the_measured_choices():
    """Sizes on both sides of the measured break-evens (k = 3, Gaussian data), written out."""

    def auto(method, n, p):
        return choose_engine("auto", _shape(n, p), method=method)

    # MDAV's loops (columns.py) caught up: about as fast as the indexed engine at 20,000 x 10
    assert auto("mdav", 2000, 2) == "loops" and auto("mdav", 8000, 2) == "indexed"
    assert auto("mdav", 16_000, 10) == "loops" and auto("mdav", 32_000, 10) == "indexed"
    assert auto("mdav", 10**7, 20) == "loops" and auto("mdav", 10**7, 40) == "loops"
    assert auto("mdav_single", 1000, 10) == "loops" and auto("mdav_single", 4000, 10) == "indexed"
    assert auto("mdav_single", 2000, 40) == "loops" and auto("mdav_single", 8000, 40) == "indexed"
    assert auto("vmdav", 500, 2) == "loops" and auto("vmdav", 1000, 2) == "indexed"
    assert auto("vmdav", 8000, 20) == "loops" and auto("vmdav", 16_000, 20) == "indexed"
    assert auto("ivmdav", 1000, 20) == "loops" and auto("ivmdav", 4000, 20) == "indexed"
    # the standardised reference sets: EIA (4,092 x 11) and Census (1,080 x 13)
    assert auto("mdav", 4092, 11) == "loops" and auto("ivmdav", 4092, 11) == "indexed"
    assert auto("vmdav", 1080, 13) == "loops"
