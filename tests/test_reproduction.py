"""The IV-MDAV paper's Table 1, regenerated and checked against data/published.

These are the acceptance criteria of the MDAV-family reproduction, and the
matches chapter 4 (``chapters/ivmdav.md``) calls exact: if an algorithm or a
transcribed number changes, a cell that used to match stops matching and this
file fails. The table is computed once per module (about 10 s of CPU).
"""

from __future__ import annotations

import pytest

import microagg as ma
from microagg import (
    datasets,
    published,
    reproductions,
    sse,
    teaching,
)
from microagg._methods import MDAV_FAMILY

pytestmark = pytest.mark.data

#: Relative tolerance (percent) under which a cell counts as exact.
EXACT_PCT = 0.01

#: The V-MDAV and IV-MDAV cells chapter 4 calls exact (SSE within 0.01 %).
EXACT_VARIABLE = {
    ("census", "vmdav", 3), ("census", "vmdav", 4), ("census", "vmdav", 5),
    ("census", "vmdav", 10), ("tarragona", "vmdav", 4),
    ("tarragona", "ivmdav", 3), ("tarragona", "ivmdav", 4), ("tarragona", "ivmdav", 5),
    ("tarragona", "ivmdav", 10), ("census", "ivmdav", 3), ("census", "ivmdav", 5),
    ("census", "ivmdav", 10), ("eia", "ivmdav", 10),
}


@pytest.fixture(scope="module")
def table1():
    return reproductions.ivmdav_table1()


@pytest.fixture(scope="module")
def sse_cells(table1):
    t = table1[table1.metric == "SSE"]
    return {(r.dataset, r.method, int(r.k)): r for r in t.itertuples()}


def test_table_is_complete(table1):
    # 3 data sets x 4 methods x 4 values of k x 2 metrics, every cell computed
    assert len(table1) == 96
    assert table1["ours"].notna().all()
    assert table1["published"].notna().all()


@pytest.mark.parametrize("method", ["mdav", "mdav_single"])
def test_fixed_size_methods_reproduce_every_cell(sse_cells, method):
    cells = [r for (_, m, _), r in sse_cells.items() if m == method]
    assert len(cells) == 12
    worst = max(abs(r.rel_diff_pct) for r in cells)
    assert worst <= EXACT_PCT, f"{method}: worst SSE cell off by {worst:.4f} %"


def test_variable_size_methods_acceptance(sse_cells):
    cells = [r for (_, m, _), r in sse_cells.items() if m in ("vmdav", "ivmdav")]
    assert len(cells) == 24
    rel = [abs(r.rel_diff_pct) for r in cells]
    assert sum(d <= EXACT_PCT for d in rel) >= 12
    assert sum(d <= 2.0 for d in rel) >= 20
    assert max(rel) <= 5.0


def test_cells_called_exact_are_exact(sse_cells):
    off = {key: round(sse_cells[key].rel_diff_pct, 4) for key in EXACT_VARIABLE
           if abs(sse_cells[key].rel_diff_pct) > EXACT_PCT}
    assert not off, f"cells the chapter calls exact no longer match: {off}"


def test_exactly_the_claimed_variable_cells_match(sse_cells):
    # the chapter lists the exact cells; a new match (or a lost one) means the prose is stale
    matched = {key for key, r in sse_cells.items()
               if key[1] in ("vmdav", "ivmdav") and abs(r.rel_diff_pct) <= EXACT_PCT}
    assert matched == EXACT_VARIABLE


def test_chapter_claims_about_mismatches(sse_cells):
    # V-MDAV: every mismatch is below the published SSE and within 0.3 %
    vm = [r for (_, m, _), r in sse_cells.items()
          if m == "vmdav" and abs(r.rel_diff_pct) > EXACT_PCT]
    assert vm and all(-0.3 < r.rel_diff_pct < 0 for r in vm)
    # IV-MDAV: the two largest gaps are EIA k=3 and k=4, where ours is worse
    iv = sorted(((abs(r.rel_diff_pct), key) for key, r in sse_cells.items()
                 if key[1] == "ivmdav"), reverse=True)
    assert {iv[0][1], iv[1][1]} == {("eia", "ivmdav", 3), ("eia", "ivmdav", 4)}
    assert sse_cells[("eia", "ivmdav", 3)].rel_diff_pct > 1.0
    assert sse_cells[("eia", "ivmdav", 4)].rel_diff_pct > 3.0


def test_il_column_agrees_with_sse(table1):
    # IL = 100 SSE / (n p): the IL cells match wherever the SSE cells do
    wide = table1.pivot_table(index=["dataset", "method", "k"], columns="metric",
                              values="match")
    assert (wide["IL"] == wide["SSE"]).all()


@pytest.mark.parametrize("name,K", [(d, K) for d in ("census", "eia")
                                    for K in ("K=12", "K=18", "K=27")])
def test_genetic_table2_mdav_baselines(sse_cells, name, K):
    # the genetic paper prints the MDAV SSE rounded to an integer at k = 3
    ours = sse_cells[(name, "mdav", 3)].ours
    pub = published.value("genetic", 2, name, "mdav", 3, "SSE", parameters=K)
    assert round(ours) == pub


def test_self_neighbour_false_is_far_off_on_eia():
    # the reading the chapter rejects: y_j not its own neighbour doubles the EIA SSE at k = 4
    Z = datasets.standardized("eia")
    ours = sse(Z, ma.ivmdav(Z, 4, gamma=1.16, self_neighbour=False))
    pub = published.value("ivmdav", 1, "eia", "ivmdav", 4, "SSE")
    assert ours / pub - 1 > 1.0


def test_chapter_claims_about_the_four_heuristics(sse_cells):
    # MDAV-single vs MDAV: better on Census at every k, worse on Tarragona at every k,
    # better on EIA at three of the four k
    def better(name, k):
        return sse_cells[(name, "mdav_single", k)].ours < sse_cells[(name, "mdav", k)].ours

    ks = (3, 4, 5, 10)
    assert all(better("census", k) for k in ks)
    assert not any(better("tarragona", k) for k in ks)
    assert sum(better("eia", k) for k in ks) == 3
    # lowest SSE: IV-MDAV on Census, MDAV on Tarragona, IV-MDAV on EIA except V-MDAV at k=10
    methods = MDAV_FAMILY

    def best(name, k):
        return min(methods, key=lambda m: sse_cells[(name, m, k)].ours)

    assert [best("census", k) for k in ks] == ["ivmdav"] * 4
    assert [best("tarragona", k) for k in ks] == ["mdav"] * 4
    assert [best("eia", k) for k in ks] == ["ivmdav"] * 3 + ["vmdav"]
    # IV-MDAV beats V-MDAV in 9 of the 12 cells
    wins = sum(sse_cells[(d, "ivmdav", k)].ours < sse_cells[(d, "vmdav", k)].ours
               for d in ("tarragona", "census", "eia") for k in ks)
    assert wins == 9


@pytest.mark.parametrize("name", ["census", "eia"])
def test_paper_gamma_is_best_of_the_chapter_grid(name):
    Z = datasets.standardized(name)
    sweep = teaching.gamma_sweep(Z, 3, [1.0, 1.1, 1.16, 1.25, 1.6], method="ivmdav")
    assert float(sweep.loc[sweep.IL.idxmin(), "gamma"]) == 1.16


def test_three_k_candidates_not_uniformly_better():
    # chapter 4: on Census, 3k candidates is worse at k = 3 and better at k = 5
    Z = datasets.standardized("census")
    ivmdav = ma.ivmdav
    for k, sign in ((3, 1), (5, -1)):
        two, three = sse(Z, ivmdav(Z, k)), sse(Z, ivmdav(Z, k, candidates=3 * k))
        assert sign * (three - two) > 0
