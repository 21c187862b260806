"""Command-line interface: ``microagg`` (or ``python -m microagg``).

Sub-commands::

    microagg info                         versions, numba, where the data are
    microagg data [--source DIR]          copy and verify the reference data sets
    microagg protect IN.csv -k 3 [-o OUT.csv] [--method mdav] [--columns a,b]
                                          microaggregate a CSV table
    microagg reproduce TABLE              regenerate a paper's table beside the
                                          published one (ivmdav-table1, vmdav-table1,
                                          mdav-readings, genetic-table2)
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

import pandas as pd

from ._methods import METHODS
from ._protect import microaggregate

__all__ = ["main"]

TABLES = ("ivmdav-table1", "vmdav-table1", "mdav-readings", "genetic-table2")


def _info(_: argparse.Namespace) -> int:
    import numpy as np

    from . import __version__, datasets
    from ._jit import HAVE_NUMBA

    print(f"microagg {__version__}  numpy {np.__version__}  pandas {pd.__version__}")
    print(f"numba acceleration: {'on' if HAVE_NUMBA else 'off (plain Python/numpy)'}")
    folder = datasets.data_dir()
    print(f"data folder: {folder}")
    for fname in datasets.FILES:
        print(f"  {'ok     ' if (folder / fname).exists() else 'missing'} {fname}")
    return 0


def _data(args: argparse.Namespace) -> int:
    from .datasets import install_raw

    dest = install_raw(args.source, dest=args.dest)
    print(f"reference data verified in {dest}")
    return 0


def _protect(args: argparse.Namespace) -> int:
    df = pd.read_csv(args.input)
    params = {}
    if args.gamma is not None:
        params["gamma"] = args.gamma
    columns = args.columns.split(",") if args.columns else None
    out, info = microaggregate(df, args.k, method=args.method, columns=columns,
                               standardize=not args.no_standardize, return_info=True, **params)
    if args.output:
        out.to_csv(args.output, index=False)
    else:
        out.to_csv(sys.stdout, index=False)
    print(f"{args.method}, k={args.k}: {info.n_groups} groups, sizes "
          f"{info.group_sizes.min()}..{info.group_sizes.max()}, "
          f"IL = {info.information_loss:.4f}% (SSE {info.sse:.4f} / SST {info.sst:.4f})",
          file=sys.stderr)
    return 0


def _reproduce(args: argparse.Namespace) -> int:
    from . import reproductions

    pd.set_option("display.width", 160)
    pd.set_option("display.max_rows", 500)
    if args.table == "ivmdav-table1":
        df = reproductions.ivmdav_table1()
    elif args.table == "vmdav-table1":
        df = reproductions.vmdav_table1()
    elif args.table == "mdav-readings":
        df = reproductions.mdav_readings()
    else:
        df = reproductions.reproduce_table2(iterations=args.iterations)
    print(df.round(4).to_string(index=False))
    return 0


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="microagg", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    sub.add_parser("info", help="versions and data status").set_defaults(func=_info)

    d = sub.add_parser("data", help="copy the reference data sets and verify their checksums")
    d.add_argument("--source", default="../shared/data/raw", help="folder with the raw files")
    d.add_argument("--dest", default=None, help="target folder (default: data/raw)")
    d.set_defaults(func=_data)

    m = sub.add_parser("protect", help="microaggregate the numeric columns of a CSV table")
    m.add_argument("input", help="CSV file with a header row")
    m.add_argument("-k", type=int, required=True, help="minimum group size")
    m.add_argument("-o", "--output", help="output CSV (default: standard output)")
    m.add_argument("--method", default="mdav", choices=list(METHODS))
    m.add_argument("--columns", help="comma-separated columns (default: all numeric)")
    m.add_argument("--gamma", type=float, help="gain factor for vmdav/ivmdav")
    m.add_argument("--no-standardize", action="store_true",
                   help="build groups on raw values instead of z-scores")
    m.set_defaults(func=_protect)

    r = sub.add_parser("reproduce", help="regenerate a paper's table beside the published one")
    r.add_argument("table", choices=TABLES)
    r.add_argument("--iterations", type=int, default=10_000,
                   help="GA iterations for genetic-table2 (paper: 10000)")
    r.set_defaults(func=_reproduce)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``microagg`` command."""
    args = _parser().parse_args(argv)
    try:
        return int(args.func(args))
    except (ValueError, TypeError, FileNotFoundError) as err:
        print(f"microagg: error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
