"""The package inside a long-running service: several threads at once, many tables, no
output unless asked, no import that fails for want of a cache folder.

A web API or a batch worker calls the public functions from several threads on many
different tables a day; what it needs of the package:

* the process-wide GOMM cache (``microagg._gomm_eval``) read and changed by several threads
  at once stays consistent, and every answer is the serial one, bit for bit;
* the memory kept between calls stays bounded (the GOMM cache by bytes and by data sets);
* nothing is written to standard output or error unless asked (``progress=True``);
* numba without a writable cache folder compiles without one instead of failing.
"""

from __future__ import annotations

import sys
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from helpers import correlated_blocks, run_json_script

import microagg
from microagg import _defaults, _gomm_eval, _jit
from microagg._gomm_ops import random_chromosome

GOMM_KW = dict(population=6, generations=3, crossovers=2, mutations_per_operator=1)


pytestmark = pytest.mark.usefixtures("fresh_gomm_cache")  # (tests/conftest.py)


@pytest.fixture
def _switch_often():
    """Threads take turns every microsecond (races show up at once), as before after."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(before)


def _held_recounted():
    """Bytes the registry holds, counted from its arrays (not from its own tally)."""
    return sum(cache.Z.nbytes + sum(e.labels.nbytes + e.centroids.nbytes
                                    for e in cache.entries.values())
               for cache in _gomm_eval._REGISTRY.values())


def _jobs(count, seed, tables=16):
    """``count`` (data, k, grouping) jobs over ``tables`` data sets and two k."""
    rng = np.random.default_rng(seed)
    data = [correlated_blocks(40, 6, seed=s) for s in range(tables)]
    return [(data[i % tables], 3 + i % 2, _gomm_eval.canonical(random_chromosome(6, rng)))
            for i in range(count)]


def _parts(b):
    return b.il, b.id, b.dld


def _score(job):
    X, k, grouping = job
    return _parts(microagg.score_grouping(X, grouping, k))


def test_gomm_cache_shared_by_threads_stays_consistent(monkeypatch, _switch_often):
    """Threads scoring groupings of several data sets, with a budget small enough that the
    cache forgets all the time, while another thread reads ``gomm_cache_info`` (a service's
    health page): no error, the same scores as one thread, and the cache's byte tally is
    what it holds, within the budget."""
    monkeypatch.setattr(_defaults, "GOMM_CACHE_BYTES", 15_000)
    jobs = _jobs(160, seed=0)
    serial = [_score(job) for job in jobs]
    microagg.gomm_cache_clear()

    done = threading.Event()
    errors = []

    def watch():
        while not done.is_set():
            try:
                microagg.gomm_cache_info()
            except Exception as err:  # (the test reports any)
                errors.append(err)
                return

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        for _ in range(3):  # (rounds from an empty cache: more chances for a race)
            microagg.gomm_cache_clear()
            with ThreadPoolExecutor(4) as pool:
                assert list(pool.map(_score, jobs)) == serial
    finally:
        done.set()
        watcher.join()
    assert not errors, errors
    info = microagg.gomm_cache_info()
    assert info["bytes"].sum() == _held_recounted()
    assert info["bytes"].sum() <= 15_000


def test_gomm_runs_in_threads_equal_serial_runs(_switch_often):
    """GOMM in four threads, on the same data and on different data, shared cache or not:
    every run is the serial run, bit for bit."""
    same = correlated_blocks(50, 6, seed=7)
    tables = [same] * 4 + [correlated_blocks(50, 6, seed=20 + s) for s in range(4)]

    def run(i):
        r = microagg.gomm(tables[i], 3, seed=i % 3, shared_cache=i % 2 == 0, **GOMM_KW)
        return (r.groups, r.score, r.population_scores.tobytes(), r.evaluations)

    serial = [run(i) for i in range(len(tables))]
    microagg.gomm_cache_clear()
    with ThreadPoolExecutor(4) as pool:
        assert list(pool.map(run, range(len(tables)))) == serial


def test_a_method_may_score_groupings_itself():
    """The cache's lock is not held while a group is microaggregated: a callable method
    that scores groupings (of other data, here from another thread) does not deadlock."""
    other = correlated_blocks(30, 3, seed=9)

    def method(Z, k):
        with ThreadPoolExecutor(1) as pool:  # another thread, waited for
            pool.submit(microagg.score_grouping, other, [[0, 1], [2]], 3).result(timeout=60)
        microagg.score_grouping(other, [[0], [1, 2]], 3)  # and this one
        return microagg.mdav(Z, k)

    got = microagg.score_grouping(correlated_blocks(30, 4, seed=8), [[0, 1], [2, 3]], 3,
                                  method=method)
    want = microagg.score_grouping(correlated_blocks(30, 4, seed=8), [[0, 1], [2, 3]], 3)
    assert _parts(got) == _parts(want)


def test_many_tables_keep_the_gomm_cache_bounded():
    """A service calling GOMM on table after table: the cache keeps at most its number of
    data sets and its byte budget, whatever the number of tables seen."""
    rng = np.random.default_rng(3)
    for _ in range(_gomm_eval._REGISTRY_SIZE + 8):
        microagg.gomm(rng.normal(size=(30, 4)), 3, seed=0, **GOMM_KW)
    info = microagg.gomm_cache_info()
    assert len(info) == _gomm_eval._REGISTRY_SIZE
    assert info["bytes"].sum() == _held_recounted() <= _defaults.GOMM_CACHE_BYTES


def test_gomm_writes_nothing_unless_asked(capsys):
    """No progress bar by default (a service's logs); ``progress=True`` shows one, on
    standard error."""
    X = correlated_blocks(30, 4, seed=4)
    microagg.gomm(X, 3, seed=0, **GOMM_KW)
    assert capsys.readouterr() == ("", "")
    microagg.gomm(X, 3, seed=0, progress=True, **GOMM_KW)
    out, err = capsys.readouterr()
    assert out == "" and "GOMM k=3" in err


@pytest.mark.skipif(_jit._numba is None, reason="numba is not installed")
def test_njit_without_a_cache_folder_compiles_without_one(monkeypatch):
    """Where numba finds no folder to cache compiled code in (a read-only install, no
    writable home, no ``NUMBA_CACHE_DIR``), a kernel compiles without a disk cache, with a
    warning, instead of failing the import of the package."""
    from numba.core import caching

    def read_only(self):
        raise PermissionError(f"[Errno 30] Read-only file system: {self.get_cache_path()!r}")

    monkeypatch.setattr(caching._CacheLocator, "ensure_cache_path", read_only)

    def twice(x):
        return 2 * x

    with pytest.warns(RuntimeWarning, match="NUMBA_CACHE_DIR"):
        compiled = _jit.njit(twice)
    assert compiled(21) == 42
    with pytest.warns(RuntimeWarning, match="NUMBA_CACHE_DIR"):
        assert _jit.njit(nogil=True)(twice)(2.5) == 5.0


def test_calls_without_progress_start_no_thread():
    """A call that shows no progress leaves no thread behind: tqdm starts a monitor thread
    for every bar it makes, shown or not, so a bar not shown is not made by tqdm's class."""
    script = """
import json, threading
import numpy as np, pandas as pd
import microagg
X = np.random.default_rng(0).normal(size=(60, 3))
microagg.hybrid(X, 3, seed=0, iterations=5)
microagg.hybrid(X, 3, seed=0, iterations=5, n_jobs=2)
microagg.gomm(X, 3, seed=0, population=4, generations=1)
df = pd.DataFrame(X, columns=["a", "b", "c"])
microagg.audit(df, microagg.microaggregate(df, 3), 3)
print(json.dumps([t.name for t in threading.enumerate()]))
"""
    assert run_json_script(script, jit=True, timeout=300) == ["MainThread"]
