"""The registry of reproductions: every published cell answered, no exact match lost.

``tests/snapshots/reproduction_status.csv`` records the status of every published cell at the
papers' settings (``tools/reproduction_status.py write`` makes it from a ledger). The tests:

* every cell of ``data/published`` (the attribute groupings excepted: they are lists, not
  numbers) appears once in the ledger, and nothing else does;
* the deterministic, quick tables are recomputed here at the papers' settings and must give
  exactly the recorded statuses;
* every table, heavy ones included, is checked in the ledger that ``make test``'s strict book
  build computed at the papers' settings: no cell may fall below its recorded status (a cell
  that improves is reported, so the record can be updated), and the ledger page's counts
  agree with that ledger.
"""

from __future__ import annotations

import dataclasses
import re
import warnings
from pathlib import Path

import pandas as pd
import pytest

from microagg import published, reproductions
from microagg._cli import main
from microagg.reproductions._compare import STATUSES
from microagg.reproductions._entries import ENTRIES

pytestmark = pytest.mark.data

ROOT = Path(__file__).resolve().parents[1]
EXPECTED = ROOT / "tests" / "snapshots" / "reproduction_status.csv"
KEYS = ["reproduction", "dataset", "method", "k", "parameters", "metric"]
#: How good a status is, for the record check (lower is better): a cell on re-created data
#: inside our spread, or consistent with our runs, ranks with close.
RANK = {"exact": 0, "input": 0, "close": 1, "consistent": 1, "recreated data, inside": 1,
        "recreated data, outside": 2, "differs": 2}
#: Tables cheap enough to recompute here at the papers' settings (deterministic).
QUICK_TABLES = ["ivmdav-table1", "vmdav-table1", "genetic-table1"]


def _keyed(frame: pd.DataFrame) -> pd.DataFrame:
    frame = frame.copy()
    frame["k"] = pd.to_numeric(frame["k"], errors="coerce").astype("Int64")
    frame["parameters"] = frame["parameters"].fillna("").astype(str)
    return frame.set_index(KEYS)


@pytest.fixture(scope="module")
def expected() -> pd.DataFrame:
    return _keyed(pd.read_csv(EXPECTED, keep_default_na=False, na_values=[""]))


@pytest.fixture(scope="module")
def quick_ledger() -> pd.DataFrame:
    return reproductions.ledger(quick=True, progress=False)


def test_every_published_cell_is_in_the_ledger_once(quick_ledger):
    total = 0
    for paper in published.PAPERS:
        total += len(published.table(paper))
    assert len(quick_ledger) == total
    assert not quick_ledger.duplicated(KEYS).any()
    counts = quick_ledger.groupby("reproduction").size()
    for name, entry in ENTRIES.items():
        want = len(published.table(entry.paper, list(entry.tables))) if entry.tables else 0
        assert counts.get(name, 0) == want, name


def test_the_record_lists_every_cell(quick_ledger, expected):
    assert set(_keyed(quick_ledger).index) == set(expected.index)
    assert set(expected["status"]) <= set(STATUSES)
    assert set(RANK) == set(STATUSES)  # the record check ranks the whole vocabulary


def test_quick_mode_is_the_only_switch(monkeypatch):
    monkeypatch.delenv("MICROAGG_QUICK", raising=False)
    assert not reproductions.quick_mode()
    for entry in ENTRIES.values():
        assert entry.settings() == entry.paper_settings
    monkeypatch.setenv("MICROAGG_QUICK", "1")
    assert reproductions.quick_mode()
    assert ENTRIES["genetic-table2"].settings()["iterations"] < 10_000


def test_settings_are_those_a_run_uses(monkeypatch):
    """``reproductions.settings(name)``: the public view of an entry's settings."""
    monkeypatch.delenv("MICROAGG_QUICK", raising=False)
    for entry in ENTRIES.values():
        assert reproductions.settings(entry.name) == entry.paper_settings
        assert reproductions.settings(entry.name, quick=True) == entry.settings(quick=True)
    got = reproductions.settings("genetic-table2")
    got["seeds"] = ()  # (a copy: the registry is unchanged)
    assert reproductions.settings("genetic-table2")["seeds"]
    with pytest.raises(ValueError, match="unknown reproduction 'nope'; choose one of"):
        reproductions.settings("nope")
    with pytest.raises(TypeError, match="quick must be True or False"):
        reproductions.settings("genetic-table2", quick="no")


def test_the_gomm_runs_warn_without_numba_before_running(monkeypatch):
    """The GOMM chapter's first heavy cell computes the runs behind its explorers (the
    tables reuse them): it warns as the tables do, before any run starts."""
    from microagg.reproductions import _entries, _registry

    monkeypatch.delenv("MICROAGG_QUICK", raising=False)
    monkeypatch.setattr(_registry, "numba_enabled", lambda: False)
    started = []
    monkeypatch.setattr(_entries, "_run", lambda settings, seed: started.append(seed))
    with pytest.warns(RuntimeWarning, match="gomm-tables1-2 at the papers' settings takes "
                      "hours"):
        reproductions.gomm_reproduction()
    assert started == [None]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        reproductions.gomm_reproduction(quick=True)


def test_gomm_reproduction_warns_only_before_computing(monkeypatch):
    """Once the runs are held (the GOMM chapter computes every seed's in its first heavy
    cell, which warns), asking for them again computes nothing and says nothing."""
    from microagg.reproductions import _entries, _gomm, _registry

    monkeypatch.delenv("MICROAGG_QUICK", raising=False)
    monkeypatch.setattr(_registry, "numba_enabled", lambda: False)
    settings = _entries.ENTRIES["gomm-tables1-2"].settings(False)
    held = object()
    monkeypatch.setitem(_gomm._RUNS, _gomm._key(_gomm._kwargs(settings, 0)), held)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert reproductions.gomm_reproduction() is held
    with pytest.warns(RuntimeWarning, match="takes hours"):  # seed 1 is not held
        monkeypatch.setattr(_entries, "_run", lambda settings, seed: None)
        reproductions.gomm_reproduction(seed=1)


def test_heavy_tables_warn_without_numba_before_running(monkeypatch):
    """A reader on a plain install (no numba) who runs the GOMM or genetic chapter is told
    at once that the papers' settings take hours, why numba is off and how to reduce them;
    light tables, quick mode and numba runs say nothing."""
    from microagg import _jit
    from microagg.reproductions import _registry

    ran = []

    def computed(**settings):
        ran.append(settings)
        return pd.DataFrame(columns=[*_registry.KEYS, "ours"])

    heavy = dataclasses.replace(ENTRIES["genetic-table2"], compute=computed)
    light = dataclasses.replace(ENTRIES["ivmdav-table1"], compute=computed)
    monkeypatch.delenv("MICROAGG_QUICK", raising=False)
    monkeypatch.delenv(_registry.CACHE_ENV, raising=False)
    monkeypatch.setattr(_registry, "numba_enabled", lambda: False)
    monkeypatch.setattr(_jit, "HAVE_NUMBA", False)
    monkeypatch.setenv("MICROAGG_DISABLE_NUMBA", "1")
    with pytest.warns(RuntimeWarning, match=r"genetic-table2 at the papers' settings takes "
                      r"hours.*MICROAGG_QUICK=1\. Why numba is off: switched off by "
                      r"MICROAGG_DISABLE_NUMBA=1"):
        _registry.run_entry(heavy, progress=False)
    assert ran[-1]["iterations"] == 10_000  # it still runs, at the papers' settings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _registry.run_entry(heavy, quick=True, progress=False)
        _registry.run_entry(light, progress=False)
        monkeypatch.setattr(_registry, "numba_enabled", lambda: True)
        _registry.run_entry(heavy, progress=False)


def test_the_cache_never_serves_a_table_the_old_code_computed(monkeypatch, tmp_path):
    """A table cached in ``MICROAGG_REPRODUCTION_CACHE`` is read back only by the same
    code: the key holds a digest of the package (it held the name and settings only, so an
    edited package, or a hand-edited file, was served as ours)."""
    from microagg.reproductions import _registry

    ran = []

    def computed(**settings):
        ran.append(settings)
        return pd.DataFrame({**{c: ["x"] for c in _registry.KEYS}, "ours": [float(len(ran))]})

    entry = dataclasses.replace(ENTRIES["ivmdav-table1"], compute=computed)
    monkeypatch.setenv(_registry.CACHE_ENV, str(tmp_path))
    first = _registry.run_entry(entry, progress=False)
    assert _registry.run_entry(entry, progress=False)["ours"].tolist() == [1.0]  # cached
    assert len(ran) == 1 and first["ours"].tolist() == [1.0]
    monkeypatch.setattr(_registry, "code_digest", lambda: "another version of the code")
    assert _registry.run_entry(entry, progress=False)["ours"].tolist() == [2.0]
    assert len(ran) == 2 and len(list(tmp_path.glob("ivmdav-table1-*.csv"))) == 2


@pytest.mark.parametrize("name", QUICK_TABLES)
def test_quick_tables_reproduce_their_recorded_statuses(name, expected, monkeypatch):
    monkeypatch.delenv("MICROAGG_QUICK", raising=False)
    got = _keyed(reproductions.compare(name, progress=False))["status"]
    want = expected.loc[got.index, "status"]
    changed = got[got != want]
    assert changed.empty, f"{name}: statuses changed:\n" + "\n".join(
        f"{key}: {want[key]} -> {got[key]}" for key in changed.index)


@pytest.fixture(scope="module")
def build_ledger(built_ledger) -> pd.DataFrame:
    return _keyed(built_ledger)


@pytest.mark.after_build
@pytest.mark.parametrize("name", [n for n, e in ENTRIES.items() if e.tables])
def test_no_cell_falls_below_its_recorded_status(name, build_ledger, expected, capsys):
    got = build_ledger.xs(name, level="reproduction", drop_level=False)["status"]
    want = expected.loc[got.index, "status"]
    worse = [key for key in got.index if RANK[got[key]] > RANK[want[key]]]
    better = [key for key in got.index if RANK[got[key]] < RANK[want[key]]]
    assert not worse, f"{name}: cells lost their status:\n" + "\n".join(
        f"{key}: {want[key]} -> {got[key]}" for key in worse)
    if better:
        with capsys.disabled():
            print(f"\n{name}: {len(better)} cells improved; update the record "
                  "(python tools/reproduction_status.py write)")


@pytest.mark.after_build
def test_ledger_page_counts_agree_with_the_ledger(build_ledger):
    page = ROOT / "_build" / "html" / "chapters" / "ledger.html"
    text = re.sub(r"<[^>]+>", "", page.read_text(encoding="utf-8"))
    counts = reproductions.ledger_counts(build_ledger.reset_index())
    results = counts["cells"] - counts["input"]
    assert reproductions.ledger_summary(build_ledger.reset_index()) in text
    assert (f"{counts['exact']} of {results} published results are exact, {counts['close']} "
            f"close, {counts['consistent']} consistent") in text
    # a reproduction that runs fewer times than a status needs says so on the page
    for short in reproductions.ledger_shortfalls(build_ledger.reset_index()):
        assert short in text, short


# -- the command line reads the same registry -------------------------------------------------

def test_cli_reproduce_all_writes_the_ledger(quick_ledger, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("MICROAGG_QUICK", "1")
    out = tmp_path / "ledger.csv"
    assert main(["reproduce", "all", "--csv", str(out)]) == 0
    written = pd.read_csv(out, keep_default_na=False, na_values=[""])
    assert len(written) == len(quick_ledger) == sum(len(published.table(p))
                                                   for p in published.PAPERS)
    assert {"published", "ours", "status", "reason"} <= set(written.columns)
    got, want = _keyed(written), _keyed(quick_ledger)
    assert got["status"].equals(want.loc[got.index, "status"])
    assert (got.loc[got["status"] == "differs", "reason"].str.len() > 0).all()
    err = capsys.readouterr().err
    shortfalls = reproductions.ledger_shortfalls(written)
    assert shortfalls and all(f"microagg: {short}: " in err for short in shortfalls), err
    assert "[reduced settings: MICROAGG_QUICK=1]" in err
    # an existing file is kept unless --force
    out.write_text("keep me")
    assert main(["reproduce", "all", "--csv", str(out)]) == 2
    assert out.read_text() == "keep me"
    assert "--force" in capsys.readouterr().err


def test_cli_reproduce_prints_one_table_with_its_settings(monkeypatch, capsys, expected):
    monkeypatch.delenv("MICROAGG_QUICK", raising=False)
    assert main(["reproduce", "ivmdav-table1"]) == 0
    captured = capsys.readouterr()
    want = expected.xs("ivmdav-table1", level="reproduction")["status"].value_counts()
    assert len(captured.out.splitlines()) > want.sum()  # header, one line per cell, reasons
    results = want.sum() - want.get("input", 0)
    assert (f"{want.get('exact', 0)} of {results} published results are exact, "
            f"{want.get('close', 0)} close") in captured.err
    assert f"and {want.get('differs', 0)} differ" in captured.err
    assert main(["reproduce", "vmdav-example1"]) == 0  # a figure: no published numbers
    assert "no published numbers" in capsys.readouterr().err


def test_cli_reproduce_choices_are_the_registry(capsys):
    with pytest.raises(SystemExit):
        main(["reproduce", "no-such-table"])
    err = capsys.readouterr().err
    for name in ENTRIES:
        assert name in err
    assert "'all'" in err


# -- repeated runs: the seeds beyond the first share what does not depend on the seed --------

def test_gomm_seeds_after_the_first_give_the_same_tables_with_a_shared_cache():
    from microagg.reproductions import reproduce_gomm

    tiny = {"population": 12, "generations": 3, "crossovers": 3, "mutations_per_operator": 1,
            "ks": (5, 25), "datasets": ("water-treatment",), "seed": 1, "progress": False,
            "analysis_k": 5}
    alone = reproduce_gomm(**tiny)
    shared = [reproduce_gomm(**tiny, dgomm=False, shared_cache=True) for _ in range(2)]
    for rep in shared:  # the second run finds every attribute group in the cache
        for table in ("table1", "table5"):
            pd.testing.assert_frame_equal(getattr(rep, table), getattr(alone, table))
        assert rep.timing.empty and not alone.timing.empty


def test_gomm_seeds_run_in_a_process_pool_give_the_sequential_tables(monkeypatch):
    from microagg.reproductions import _gomm, reproduce_gomm

    tiny = {"population": 8, "generations": 2, "crossovers": 2, "mutations_per_operator": 1,
            "patience": 5, "seeds": (0, 1, 2), "ks": (5, 25), "datasets": ("water-treatment",)}
    monkeypatch.setattr(_gomm, "_RUNS", {})
    monkeypatch.setattr(_gomm.os, "cpu_count", lambda: 2)  # a pool even on one core
    pooled = _gomm._over_seeds(tiny, lambda rep: rep.table1.assign(method="gomm"),
                               ("IL", "ID", "DLD", "score", "groups"))
    assert len(_gomm._RUNS) == 3 and (pooled["runs"] == 3).all()
    for seed in tiny["seeds"]:  # each seed's values are those of a plain run in this process
        alone = reproduce_gomm(**{k: tiny[k] for k in (*_gomm._SETTINGS, "ks", "datasets")},
                               seed=seed, progress=False, dgomm=False)
        for _, row in alone.table1.iterrows():
            got = pooled[pooled.k == row["k"]].set_index("metric")["ours_runs"]
            for metric in ("IL", "ID", "DLD", "score", "groups"):
                assert reproductions.run_values(got[metric])[seed] == row[metric]
