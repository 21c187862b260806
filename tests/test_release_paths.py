"""One release contract in every path (issue 20, acceptance): a hypothesis property.

Random tables (numbers, numbers as text in some rows, missing-value text, text, booleans,
dates, timedeltas, nested lists) with random strata, small ones included, go through the
API, the command line in memory, the command line streamed (``--jobs`` 1 and 2) and Dask on
a two-worker ``LocalCluster``. Every path refuses with the same error, or writes outputs
that pass the audit and equal each other. A column stored as the table's pandas index in the
Parquet file (numbers that are not the row numbers) is asked about in every path.

Cost: the command line runs in-process (its ``main``), Dask on the module's two-worker
cluster (the ``client`` fixture), and the ``--jobs 2`` runs send their units to two worker
processes started once for the module (:func:`workers`) instead of two new ones per
example (a spawned worker imports numpy, pandas, pyarrow and numba: seconds). Starting,
ending and interrupting a run's own workers is tested in ``test_cli_strata.py`` and
``test_release_files.py``. A modest number of examples by default, many more with
``MICROAGG_SLOW=1``.
"""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing
import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from cli_helpers import run
from helpers import letters
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from switches import examples

import microagg as ma
from microagg import _cli_strata

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")
import dask  # noqa: E402

import microagg.dask  # noqa: E402

KINDS = ["number", "text numbers", "missing text", "text", "bool", "date", "timedelta",
         "nested", "category"]


def _column(kind: str, n: int, rng: np.random.Generator) -> list | np.ndarray:
    if kind == "number":
        return rng.normal(size=n).round(4)
    if kind == "text numbers":
        values = rng.integers(0, 99, n)
        return [f"{int(v)}" if i % 3 == 0 else f"t{i}" for i, v in enumerate(values)]
    if kind == "missing text":
        return [f"{v:.2f}" if i % 2 else "n/a" for i, v in enumerate(rng.gamma(2.0, 9.0, n))]
    if kind == "text":
        return [letters("t", i % 4) for i in range(n)]
    if kind == "bool":
        return rng.integers(0, 2, n).astype(bool)
    if kind == "date":
        return pd.Timestamp("2020-01-01") + pd.to_timedelta(rng.integers(0, 99, n), unit="D")
    if kind == "timedelta":
        return pd.to_timedelta(rng.integers(0, 99, n), unit="h")
    if kind == "category":  # (text without digits, stored as a Parquet dictionary)
        return pd.Categorical([letters("k", v) for v in rng.integers(0, 3, n)])
    return [[float(v), 1.0] for v in rng.normal(size=n)]


@st.composite
def cases(draw):
    n = draw(st.integers(6, 24))
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    kinds = draw(st.lists(st.sampled_from(KINDS), max_size=3))
    n_strata = draw(st.integers(1, 3))
    df = pd.DataFrame({"id": [letters("r", i) for i in range(n)],  # (text without digits)
                       "s": [letters("s", v) for v in rng.integers(0, n_strata, n)],
                       "x": rng.normal(size=n).round(4)})
    for j, kind in enumerate(kinds):
        df[f"c{j}"] = _column(kind, n, rng)
    if draw(st.booleans()):  # the strata as a categorical column (a Parquet dictionary)
        df["s"] = df["s"].astype("category")
    keep = [c for c in df.columns[3:] if draw(st.booleans())]
    index = draw(st.booleans())  # written as a pandas index in the Parquet file
    return df, keep, index, draw(st.sampled_from([2, 3]))


def _outcome(fn):
    try:
        return "ok", fn()
    except (ValueError, TypeError) as err:
        return "error", " ".join(str(err).split())


def _cli(args, capsys, out):
    rc, _, err = run(args, capsys)
    if rc != 0:
        line = err.strip().splitlines()[-1]
        return "error", line.split("microagg: error: ", 1)[-1]
    return "ok", pd.read_parquet(out)


def _every_category_held(result: pd.DataFrame) -> None:
    """No categorical column lists a category no row holds (a merged small stratum's key
    would be one)."""
    for c in result.columns:
        if isinstance(result[c].dtype, pd.CategoricalDtype):
            unused = set(result[c].cat.categories) - set(result[c].dropna())
            assert not unused, (c, unused)


def _same(result: pd.DataFrame, expected: pd.DataFrame) -> None:
    got = result.set_index("id").loc[expected["id"]]
    want = expected.set_index("id")
    assert list(got.columns) == list(want.columns)
    for c in want.columns:
        assert [repr(v) for v in got[c].tolist()] == [repr(v) for v in want[c].tolist()], c


@pytest.fixture(scope="module")
def workers():
    """Two worker processes started as ``protect --jobs 2`` starts its own (spawned, with
    the same initializer), kept for the module."""
    pool = cf.ProcessPoolExecutor(max_workers=2, mp_context=multiprocessing.get_context("spawn"),
                                  initializer=_cli_strata.worker_start, initargs=(os.getpid(),))
    for future in [pool.submit(int) for _ in range(2)]:
        future.result()
    yield pool
    pool.shutdown()


class _Lent:
    """The module's :func:`workers`, lent to one ``--jobs 2`` run as its pool: the run
    submits its units to them and shuts its pool down at the end, which leaves them up."""

    def __init__(self, pool: cf.ProcessPoolExecutor):
        self.pool, self._processes = pool, pool._processes

    def submit(self, fn, /, *args, **kwargs) -> cf.Future:
        return self.pool.submit(fn, *args, **kwargs)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        pass


@settings(max_examples=examples(10, 200), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(case=cases())
def test_every_path_refuses_alike_or_releases_alike(case, client, workers, tmp_path_factory,
                                                    capsys, monkeypatch):
    df, keep, index, k = case
    lent = []

    def lend(*, max_workers, mp_context, initializer, initargs):
        assert (max_workers, mp_context.get_start_method(), initializer, initargs) == (
            2, "spawn", _cli_strata.worker_start, (os.getpid(),))
        lent.append(max_workers)
        return _Lent(workers)

    monkeypatch.setattr(_cli_strata.cf, "ProcessPoolExecutor", lend)
    tmp = tmp_path_factory.mktemp("paths")
    src = tmp / "in.parquet"
    (df.set_index("x") if index else df).to_parquet(src)
    frame = pq.read_table(src).to_pandas(ignore_metadata=True)  # as every path reads it
    kw = {"keep": keep or None}
    flags = ["--keep", ",".join(keep)] if keep else []
    if index:  # x, stored as the index (numbers, not the row numbers): every path asks
        asked = [_outcome(lambda: ma.microaggregate(pd.read_parquet(src), k, **kw)),
                 _cli(["protect", src, "-k", k, "-o", tmp / "mem.parquet", *flags], capsys,
                      tmp / "mem.parquet"),
                 _cli(["protect", src, "-k", k, "--strata", "s", "--small-strata", "merge",
                       "-o", tmp / "j1.parquet", *flags], capsys, tmp / "j1.parquet")]
        with dask.config.set({"dataframe.convert-string": False}):
            asked.append(_outcome(lambda: microagg.dask.microaggregate(  # (as read_parquet)
                dd.from_pandas(pd.read_parquet(src), npartitions=2, sort=False), k, strata="s",
                small_strata="merge", **kw).compute()))
        messages = [message for _, message in asked]
        assert all(outcome == "error" for outcome, _ in asked), messages
        assert (len(set(messages)) == 1  # another column refused first, alike
                or all("index" in m and "'x'" in m for m in messages)  # (worded per path)
                or all("no numeric column to protect" in m for m in messages)), messages
        return
    # without strata: the API and the command line in memory
    api = _outcome(lambda: ma.microaggregate(frame, k, **kw))
    cli = _cli(["protect", src, "-k", k, "-o", tmp / "mem.parquet", *flags], capsys,
               tmp / "mem.parquet")
    assert api[0] == cli[0] and (api[0] == "ok" or api[1] == cli[1]), (api[1], cli[1])
    if api[0] == "ok":
        _same(cli[1], api[1])
        assert ma.audit(frame, cli[1], k, keep=["id", *keep]).passed
    # by strata: the API, streamed with one and two jobs, and Dask
    strata = {"strata": "s", "small_strata": "merge"}
    api = _outcome(lambda: ma.microaggregate(frame, k, **strata, **kw))
    outs = [_cli(["protect", src, "-k", k, "--strata", "s", "--small-strata", "merge",
                  "--jobs", jobs, "-o", tmp / f"j{jobs}.parquet", *flags], capsys,
                 tmp / f"j{jobs}.parquet") for jobs in ("1", "2")]
    with dask.config.set({"dataframe.convert-string": False}):  # lists stay lists
        outs.append(_outcome(lambda: microagg.dask.microaggregate(
            dd.from_pandas(frame, npartitions=2), k, **strata, **kw).compute()))
    assert api[0] != "ok" or lent == [2]  # --jobs 2 ran on the workers
    for got in outs:
        assert got[0] == api[0] and (api[0] == "ok" or got[1] == api[1]), (got[1], api[1])
        if api[0] == "ok":
            _same(got[1], api[1])
            _every_category_held(got[1])
    if api[0] == "ok":
        _every_category_held(api[1])
        assert ma.audit(frame, api[1], k, strata="s", keep=["id", *keep]).passed


@pytest.mark.parametrize("extra", [[], ["--strata", "region"]])
def test_a_parquet_period_column_is_a_date_in_a_fresh_command_too(tmp_path, extra):
    """pandas registers its Arrow types (period, interval) only when something of pandas
    reads Parquet; a fresh ``microagg protect`` read a period column as its integer
    storage and protected it as numbers, where the API passed it through as a date. Run
    as the installed command runs, in a new interpreter (in this process pandas has long
    registered them)."""
    n = 30
    df = pd.DataFrame({"region": ["a", "b"] * (n // 2),
                       "month": pd.period_range("2020-01", periods=n, freq="M"),
                       "income": np.arange(float(n))})
    src, out = tmp_path / "in.parquet", tmp_path / "out.parquet"
    df.to_parquet(src, index=False)
    _, info = ma.microaggregate(df, 3, strata=extra[1:] or None, return_info=True)
    assert "month" in info.passed_through
    env = dict(os.environ, MICROAGG_OFFLINE="1")
    done = subprocess.run([sys.executable, "-m", "microagg", "protect", str(src), "-k", "3",
                           "-o", str(out), "--no-progress", *extra],
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "protected 1 column(s): income" in done.stderr
    assert (pd.read_parquet(out)["month"].sort_values().to_numpy()
            == df["month"].to_numpy()).all()
    audit = subprocess.run([sys.executable, "-m", "microagg", "audit", str(src), str(out),
                            "-k", "3", *extra], capture_output=True, text=True, env=env,
                           timeout=300)
    assert audit.returncode == 0 and "protected income;" in audit.stderr, audit.stderr
