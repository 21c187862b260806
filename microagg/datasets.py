"""The reference data sets, and seeded generators for the synthetic ones.

The four real data sets (Census, EIA, Tarragona, Water-treatment) are
third-party files. This repository never stores them: ``make data`` copies them
from ``../shared/data/raw`` into the gitignored ``data/raw/`` and checks their
SHA-256 sums (see :func:`install_raw` and ``data/README.md``).
:func:`load` reads them from ``$MICROAGG_DATA`` or from the ``data/raw/`` of the
checkout, and keeps a parsed copy in a gitignored cache next to them.

Synthetic data sets are never stored either: each is a seeded function here.
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pandas as pd

from ._core import standardize

__all__ = [
    "load",
    "standardized",
    "data_dir",
    "install_raw",
    "FILES",
    "NAMES",
    "vmdav_example",
    "scattered",
    "clustered",
    "synthetic_clustered",
]

#: Raw files, their SHA-256 sums and where to obtain them.
FILES: dict[str, dict[str, str]] = {
    "CASCrefmicrodata.rda": {
        "sha256": "147d0d7fa823a384e36c2297174560e32cdbe6e39803f22f797610fb1a2993d6",
        "source": "R package sdcMicro, file data/CASCrefmicrodata.rda (GPL-2+)",
    },
    "EIA.rda": {
        "sha256": "8b61ceb0d1fa01d024bd62171655601abed62ff70a5e9e6fd550c43a1f76695e",
        "source": "R package sdcMicro, file data/EIA.rda (GPL-2+)",
    },
    "Tarragona.rda": {
        "sha256": "e83def0648be5e47eaf202b4dd60dd6981591d0858fd249817b9a2cc97cf2aef",
        "source": "R package sdcMicro, file data/Tarragona.rda (GPL-2+)",
    },
    "water-treatment.data": {
        "sha256": "8b97cf2244db2c8317d9d165a7a634cfc4cdfc7281eeed08125eca349237bcd0",
        "source": "UCI Machine Learning Repository, 'Water Treatment Plant' (Bejar, 1993)",
    },
}

#: The literature's 11 numeric EIA attributes (YEAR, MONTH, UTILNAME, STATE dropped).
EIA_ATTRIBUTES = [
    "UTILITYID", "RESREVENUE", "RESSALES", "COMREVENUE", "COMSALES", "INDREVENUE",
    "INDSALES", "OTHREVENUE", "OTHRSALES", "TOTREVENUE", "TOTSALES",
]  # fmt: skip

#: UCI's names for the 38 Water-treatment attributes (after the date label).
WATER_ATTRIBUTES = [
    "Q-E", "ZN-E", "PH-E", "DBO-E", "DQO-E", "SS-E", "SSV-E", "SED-E", "COND-E",
    "PH-P", "DBO-P", "SS-P", "SSV-P", "SED-P", "COND-P",
    "PH-D", "DBO-D", "DQO-D", "SS-D", "SSV-D", "SED-D", "COND-D",
    "PH-S", "DBO-S", "DQO-S", "SS-S", "SSV-S", "SED-S", "COND-S",
    "RD-DBO-P", "RD-SS-P", "RD-SED-P", "RD-DBO-S", "RD-DQO-S",
    "RD-DBO-G", "RD-DQO-G", "RD-SS-G", "RD-SED-G",
]  # fmt: skip

#: Names accepted by :func:`load`, with their file and a one-line description.
NAMES: dict[str, tuple[str, str]] = {
    "census": ("CASCrefmicrodata.rda", "Census: 1080 records x 13 numeric attributes"),
    "eia": ("EIA.rda", "EIA: 4092 records x the literature's 11 numeric attributes"),
    "eia-full": ("EIA.rda", "EIA: all 15 columns, text columns included"),
    "tarragona": ("Tarragona.rda", "Tarragona: 834 companies x 13 numeric attributes"),
    "water-treatment": ("water-treatment.data", "Water-treatment: 380 complete days x 38"),
    "water-treatment-full": (
        "water-treatment.data",
        "Water-treatment: all 527 days, missing values as NaN, date label as index",
    ),
}


class DataNotFoundError(FileNotFoundError):
    """A reference data file is missing or is not the expected file."""


def data_dir() -> Path:
    """Folder holding the raw files: ``$MICROAGG_DATA``, else ``data/raw`` of the checkout.

    The checkout is found by walking up from the working folder (so notebooks in
    ``chapters/`` and a non-editable install both find it), then from this file.

    Book: :ref:`chap-foundations`.
    """
    env = os.environ.get("MICROAGG_DATA")
    if env:
        return Path(env).expanduser()
    starts = [Path.cwd(), Path(__file__).resolve().parent]
    for start in starts:
        for folder in (start, *start.parents):
            candidate = folder / "data" / "raw"
            if (folder / "_toc.yml").exists() and candidate.is_dir():
                return candidate
            if candidate.is_dir() and any((candidate / f).exists() for f in FILES):
                return candidate
    return Path(__file__).resolve().parents[1] / "data" / "raw"


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _how_to_get(fname: str) -> str:
    return (
        f"Obtain {fname} from {FILES[fname]['source']}, then run `make data` in the "
        "checkout (it copies ../shared/data/raw into data/raw and checks the sums), or "
        "put the file in a folder and set MICROAGG_DATA to it. See data/README.md."
    )


def _raw_path(fname: str, folder: Path | None = None) -> Path:
    folder = Path(folder) if folder is not None else data_dir()
    path = folder / fname
    if not path.exists():
        raise DataNotFoundError(f"reference data file {fname} not found in {folder}. "
                                + _how_to_get(fname))
    return path


def _verified(path: Path) -> Path:
    """Check the SHA-256 of ``path``, remembering a verified (size, mtime) stamp."""
    fname = path.name
    expected = FILES[fname]["sha256"]
    stamp = path.parent / ".cache" / f"{fname}.sha256ok"
    st = path.stat()
    tag = f"{st.st_size}:{st.st_mtime_ns}:{expected}"
    if stamp.exists() and stamp.read_text() == tag:
        return path
    got = _sha256(path)
    if got != expected:
        raise DataNotFoundError(
            f"{path} has SHA-256 {got}, expected {expected}: it is not the reference "
            f"file (corrupted or a different version). " + _how_to_get(fname)
        )
    try:
        stamp.parent.mkdir(exist_ok=True)
        stamp.write_text(tag)
    except OSError:  # read-only data folder: just verify every time
        pass
    return path


def install_raw(source: str | os.PathLike[str], *, dest: str | os.PathLike[str] | None = None,
                names: Iterable[str] | None = None) -> Path:
    """Copy the raw reference files from ``source`` into ``dest`` and verify them.

    Book: :ref:`chap-foundations`.

    Parameters
    ----------
    source : path
        Folder holding the files as obtained (``../shared/data/raw`` here).
    dest : path, optional
        Target folder; default ``data/raw`` of the checkout.

    Returns
    -------
    pathlib.Path
        The destination folder.
    """
    src = Path(source)
    dst = Path(dest) if dest is not None else data_dir()
    dst.mkdir(parents=True, exist_ok=True)
    for fname in names or FILES:
        s = src / fname
        d = dst / fname
        if not s.exists() and not d.exists():
            raise DataNotFoundError(f"{fname} is in neither {src} nor {dst}. " + _how_to_get(fname))
        if s.exists() and (not d.exists() or _sha256(d) != FILES[fname]["sha256"]):
            shutil.copyfile(s, d)
        _verified(d)
    return dst


def _read_rda(path: Path) -> pd.DataFrame:
    import rdata  # imported lazily: only needed the first time (then the cache serves)

    frames = rdata.read_rda(str(path))
    (df,) = frames.values()
    df = df.copy()
    df.columns = [str(c) for c in df.columns]
    df = df.reset_index(drop=True)
    for c in df.columns:
        if str(df[c].dtype) in ("Int32", "Int64"):
            if df[c].isna().any():
                df[c] = df[c].astype("float64")
            else:
                df[c] = df[c].astype("int64")
        elif isinstance(df[c].dtype, pd.CategoricalDtype):
            df[c] = df[c].astype(str)
    return df


def _read_water(path: Path) -> pd.DataFrame:
    df = pd.read_csv(path, header=None, na_values="?", names=["date", *WATER_ATTRIBUTES])
    return df.set_index("date")


def _cached(fname: str, folder: Path | None) -> pd.DataFrame:
    path = _verified(_raw_path(fname, folder))
    cache = path.parent / ".cache" / f"{fname}.pkl"
    try:
        if cache.exists() and cache.stat().st_mtime_ns >= path.stat().st_mtime_ns:
            return pd.read_pickle(cache)
    except Exception:  # a stale or unreadable cache is simply rebuilt
        pass
    df = _read_water(path) if fname.endswith(".data") else _read_rda(path)
    try:
        cache.parent.mkdir(exist_ok=True)
        df.to_pickle(cache)
    except OSError:
        pass
    return df


def load(name: str, *, folder: str | os.PathLike[str] | None = None) -> pd.DataFrame:
    """Load a reference data set as a pandas DataFrame.

    Book: :ref:`chap-foundations`.

    Parameters
    ----------
    name : {"census", "eia", "tarragona", "water-treatment", "eia-full", "water-treatment-full"}
        * ``"census"``: 1080 x 13 (AFNLWGT ... ERNVAL), CASC reference microdata.
        * ``"eia"``: 4092 x 11, the literature's attributes (UTILITYID and the
          ten revenue/sales columns); ``"eia-full"`` has all 15 columns.
        * ``"tarragona"``: 834 x 13 (FIXED.ASSETS ... NET.PROFIT).
        * ``"water-treatment"``: the 380 complete days x 38 attributes, indexed by
          the day label; ``"water-treatment-full"``: all 527 days with NaN.
    folder : path, optional
        Where the raw files are; default :func:`data_dir`.

    Raises
    ------
    FileNotFoundError
        If the file is missing or its checksum differs; the message says how to
        obtain it.

    Examples
    --------
    >>> load("census").shape  # doctest: +SKIP
    (1080, 13)
    """
    key = name.lower().replace("_", "-")
    if key not in NAMES:
        raise ValueError(f"unknown data set {name!r}; choose one of {sorted(NAMES)}")
    fname = NAMES[key][0]
    df = _cached(fname, Path(folder) if folder is not None else None)
    if key == "eia":
        df = df[EIA_ATTRIBUTES]
    elif key == "water-treatment":
        df = df.dropna()
    return df.copy()


@functools.cache
def _standardized(name: str) -> np.ndarray:
    Z = np.asarray(standardize(load(name)), dtype=float)
    Z.setflags(write=False)
    return Z


def standardized(name: str) -> np.ndarray:
    """A reference data set as z-scores (population standard deviation), cached per session.

    The convention under which the published MDAV results reproduce (SST is
    ``n * p``). The array is read-only; copy it before changing it.

    Book: :ref:`chap-foundations`.

    Examples
    --------
    >>> standardized("census").shape  # doctest: +SKIP
    (1080, 13)
    """
    return _standardized(name.lower())


# --------------------------------------------------------------------------------------
# Synthetic data sets (never stored: each is a seeded function)
# --------------------------------------------------------------------------------------

def vmdav_example() -> np.ndarray:
    """The 13 two-dimensional records of Example 1 in Solanas & Martinez-Balleste (2006).

    Four records sit near the origin, three around (19.5, 11) and six around
    (19, 20); with ``k = 3`` MDAV splits the natural clusters (:ref:`chap-vmdav`).

    Book: :ref:`chap-vmdav`.
    """
    return np.array([
        (2.4, 3), (1.68, 4.9), (3.18, 5.54), (5.32, 3.6), (18.68, 11.49), (20.14, 9.56),
        (19.85, 12.33), (13.67, 18.9), (17.11, 21), (16.07, 19.23), (21.28, 18.9),
        (22, 21), (23, 18.5),
    ], dtype=float)  # fmt: skip


def scattered(n: int = 1000, *, seed: int | None = 0, low: float = -10_000.0,
              high: float = 10_000.0, p: int = 2) -> np.ndarray:
    """The genetic paper's "Scattered" data: ``n`` records drawn uniformly from a box.

    Martinez-Balleste et al. (2007, Sec. 4) draw both attributes from
    ``[-10000, 10000]`` by simple random sampling; we do the same with numpy's
    PCG64 generator seeded by ``seed``.

    Book: :ref:`chap-foundations`.
    """
    rng = np.random.default_rng(seed)
    return rng.uniform(low, high, size=(n, p))


def clustered(n: int = 1000, *, seed: int | None = 0, low: float = -10_000.0,
              high: float = 10_000.0, sizes: tuple[int, int] = (3, 5),
              spread: float = 0.01) -> np.ndarray:
    """The genetic paper's "Clustered" data: natural clusters of 3 to 5 records.

    The paper draws points uniformly from ``[-10000, 10000]^2`` and then shifts
    them "groupwise by a random amount" to form clusters of 3-5 records, but
    gives no further detail. Our reading: split the ``n`` records into
    consecutive blocks whose sizes are drawn uniformly from ``sizes`` (the last
    block absorbs the remainder, and a remainder below ``sizes[0]`` is merged
    into the previous block); each block gets a uniform centre in the box, and
    each member sits at the centre plus a uniform offset of half-width
    ``spread * (high - low) / 2`` (1% of the range by default). The records are
    returned in random order.

    Book: :ref:`chap-foundations`.
    """
    rng = np.random.default_rng(seed)
    lo, hi = sizes
    block_sizes: list[int] = []
    left = n
    while left > 0:
        s = int(rng.integers(lo, hi + 1))
        if left - s < lo and left - s != 0:
            s = left if left <= hi + lo - 1 else s
        s = min(s, left)
        block_sizes.append(s)
        left -= s
    if len(block_sizes) > 1 and block_sizes[-1] < lo:
        block_sizes[-2] += block_sizes.pop()
    centres = rng.uniform(low, high, size=(len(block_sizes), 2))
    half = spread * (high - low) / 2
    X = np.repeat(centres, block_sizes, axis=0)
    X = X + rng.uniform(-half, half, size=X.shape)
    return X[rng.permutation(n)]


def synthetic_clustered(n: int = 1000, p: int = 2, *, n_clusters: int | None = None,
                        cluster_size: tuple[int, int] = (3, 5), spread: float = 0.02,
                        seed: int | None = 0, like: str | None = None) -> np.ndarray:
    r"""Gaussian clusters of a few records each, standing in for V-MDAV's synthetic sets.

    Solanas & Martinez-Balleste (2006) report three clustered synthetic data
    sets without saying how they were made. This generator is our re-creation:
    cluster centres uniform in the unit cube ``[0, 1]^p``; cluster sizes drawn
    uniformly from ``cluster_size`` (both ends included) until ``n`` records
    are placed (the last cluster takes the remainder); members Gaussian around
    their centre with standard deviation ``spread``:

    .. math:: \mathbf{x} = \mathbf{c}_j + \sigma\,\boldsymbol{\varepsilon},\qquad
              \mathbf{c}_j \sim U[0,1]^p,\ \boldsymbol{\varepsilon} \sim N(0, I_p).

    Small ``spread`` gives well-separated natural clusters, the setting in
    which V-MDAV gains most at ``k = 3``. ``n_clusters`` instead splits the
    ``n`` records into that many clusters of (almost) equal size.

    Book: :ref:`chap-vmdav`.

    Parameters
    ----------
    n, p : int
        Records and attributes.
    n_clusters : int, optional
    cluster_size : (int, int)
        Smallest and largest cluster size.
    spread : float
        Standard deviation of the members around their centre.
    seed : int or None
        Seed of ``numpy.random.default_rng``.
    like : {"synthetic1", "synthetic2", "synthetic3"}, optional
        Use our settings for the V-MDAV paper's synthetic set of that name
        (then ``n``, ``p``, ``cluster_size`` and ``spread`` are taken from the
        table below and the arguments are ignored; ``seed`` still applies):

        ============  ===  ==  ============  ======
        like          n    p   cluster_size  spread
        ============  ===  ==  ============  ======
        synthetic1    400  10  (3, 4)        0.03
        synthetic2    500  10  (3, 5)        0.02
        synthetic3    500  10  (4, 6)        0.03
        ============  ===  ==  ============  ======

        These are *re-creations*, tuned (:ref:`chap-vmdav` so
        that MDAV and V-MDAV show the qualitative picture of the paper's Table 1
        (a large V-MDAV gain at ``k = 3`` on sets 1 and 2 and at ``k = 4`` on
        set 3); they are not the paper's data and their numbers differ.

    Returns
    -------
    numpy.ndarray, shape (n, p)
        Records in random order.
    """
    if like is not None:
        presets = {
            "synthetic1": (400, 10, (3, 4), 0.03),
            "synthetic2": (500, 10, (3, 5), 0.02),
            "synthetic3": (500, 10, (4, 6), 0.03),
        }
        if like not in presets:
            raise ValueError(f"like must be one of {sorted(presets)}, got {like!r}")
        n, p, cluster_size, spread = presets[like]
    lo, hi = cluster_size
    if not 1 <= lo <= hi:
        raise ValueError(f"cluster_size must be (lo, hi) with 1 <= lo <= hi, got {cluster_size}")
    rng = np.random.default_rng(seed)
    sizes: list[int] = []
    while sum(sizes) < n:
        sizes.append(int(rng.integers(lo, hi + 1)))
    sizes[-1] -= sum(sizes) - n
    if sizes[-1] <= 0:
        sizes.pop()
    if n_clusters is not None:
        sizes = list(np.diff(np.linspace(0, n, n_clusters + 1).round().astype(int)))
    centres = rng.uniform(0.0, 1.0, size=(len(sizes), p))
    X = np.repeat(centres, sizes, axis=0) + rng.normal(0.0, spread, size=(n, p))
    return X[rng.permutation(n)]
