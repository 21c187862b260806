"""Benchmark: a national file by strata through ``microagg protect --strata --jobs 2``.

Run as a script (not collected by pytest)::

    .venv/bin/python tests/benchmarks/bench_strata.py            # 2,000,000 x 10, 200 strata
    .venv/bin/python tests/benchmarks/bench_strata.py --records 200000   # a quicker look

Issue "Strata, large files and a distributed engine", acceptance "Strata, benchmark". It
writes a synthetic national file (``--records`` records, 10 normal attributes, a
``region`` column of ``--strata`` strata of unequal sizes: expected sizes in the ratio
1 to 10, rows in random order) as Parquet, then runs, as a separate process::

    microagg protect national.parquet -k 3 --strata region --jobs 2 -o protected.parquet

and samples the memory of its process tree (the command and its two worker processes)
every 50 ms with psutil: the sum of the resident set sizes (RSS) and of the proportional
set sizes (PSS, which counts a shared page once). It prints the peak of each against

* the **fixed overhead**: the peak of the same command, measured in this run, on a file
  of the same layout and strata with :data:`BASELINE_RECORDS` records: three
  interpreters with numpy, pandas, numba and pyarrow loaded, the compiled code of the
  engines the method uses, and the buffers of the split pass (a row group being
  decoded, a batch of 65,536 rows being split), which do not grow with the file;
* the **largest stratum's share**: its records times the bytes of a record in memory
  (10 float64 attributes and the int64 region, 88 bytes), and the whole file's.

The run passes when it completes, every released combination is shared by at least 3
records within its stratum (checked on the output), and the peak above the fixed
overhead stays below ``3 x the largest stratum's share`` *per job*: with ``--jobs 2`` two
worker processes each hold one unit at a time (one stage after the other: its protected
values and their z-scores, the z-scores and the method's working arrays, the values and
the centroids, the released rows; about 2.3 times the unit's bytes, see
:mod:`microagg._stream`), so two units can be in memory at once; the main process holds
one record batch of a finished unit while it copies it from the worker's temporary file
to the output. The comparison with the bound for the whole tree
(``fixed overhead + 3 x largest``, no factor for the jobs) is printed too, with its
verdict. The samples are 50 ms apart, so a shorter peak can be missed. Nothing is
asserted about time; the wall-clock time is printed.

At 10 attributes ``engine="auto"`` keeps MDAV on its loops engine up to about 23,000
records (:data:`microagg._mdav.dispatch.AUTO_RULES`), so the baseline's largest stratum
(about 5,000 records) and, at the default size, the national file's (about 18,000) run
the same compiled code, which counts as overhead. A stratum above that threshold would
also load the indexed engine (about 6.5 MB per worker, from numba's cache) in the
measured run only, where it counts against the bound: stricter, never lenient. A cold
numba cache adds its compilation to whichever run comes first: run the bench twice after
changing a compiled kernel.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import psutil
import pyarrow as pa
import pyarrow.parquet as pq

P, K, SEED = 10, 3, 0
RECORD_BYTES = 8 * P + 8
MICROAGG = str(Path(sys.executable).with_name("microagg"))
#: Records of the baseline file: several batches of the split pass (65,536 rows each).
BASELINE_RECORDS = 400_000


def write_national(path: Path, records: int, n_strata: int, seed: int = SEED) -> np.ndarray:
    """Write the file in row groups of 100,000 records; return the strata sizes."""
    rng = np.random.default_rng(seed)
    weights = 1 + 9 * (np.arange(n_strata) / max(1, n_strata - 1)) ** 2
    sizes = np.zeros(n_strata, dtype=np.int64)
    schema = pa.schema([("region", pa.int64())] + [(f"x{j}", pa.float64()) for j in range(P)])
    with pq.ParquetWriter(path, schema) as writer:
        for start in range(0, records, 100_000):
            n = min(100_000, records - start)
            region = rng.choice(n_strata, size=n, p=weights / weights.sum())
            sizes += np.bincount(region, minlength=n_strata)
            values = rng.standard_normal((n, P)) * (1 + region[:, None] % 7) + region[:, None]
            cols = [pa.array(region)] + [pa.array(values[:, j]) for j in range(P)]
            writer.write_table(pa.Table.from_arrays(cols, schema=schema))
    return sizes


def run_measured(argv: list[str]) -> tuple[float, float, float, int]:
    """Run ``argv``; return (seconds, peak tree RSS, peak tree PSS in bytes, exit status)."""
    peak = {"rss": 0, "pss": 0}
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    done = threading.Event()

    def sample() -> None:
        root = psutil.Process(proc.pid)
        while not done.is_set():
            rss = pss = 0
            try:
                for p in [root, *root.children(recursive=True)]:
                    info = p.memory_full_info()
                    rss += info.rss
                    pss += getattr(info, "pss", info.rss)
            except (psutil.NoSuchProcess, psutil.AccessDenied):
                pass
            peak["rss"], peak["pss"] = max(peak["rss"], rss), max(peak["pss"], pss)
            time.sleep(0.05)

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    _, err = proc.communicate()
    done.set()
    thread.join()
    if proc.returncode:
        print(err, file=sys.stderr)
    else:
        print("   " + "\n   ".join(ln for ln in err.splitlines() if "IL =" in ln or "strata by"
                                   in ln))
    return time.perf_counter() - start, peak["rss"], peak["pss"], proc.returncode


def check_output(path: Path) -> int:
    """Smallest count of a released combination (region and attributes) in the output."""
    df = pq.read_table(path).to_pandas()
    return int(df.groupby(list(df.columns)).size().min())


def protect(src: Path, out: Path, jobs: int) -> list[str]:
    return [MICROAGG, "protect", str(src), "-k", str(K), "--strata", "region", "--jobs",
            str(jobs), "-o", str(out), "--force", "--no-progress"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--records", type=int, default=2_000_000)
    ap.add_argument("--strata", type=int, default=200)
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    mb = 2.0**20
    with tempfile.TemporaryDirectory(prefix="bench-strata-") as tmp:
        tmp = Path(tmp)
        small, big = tmp / "baseline.parquet", tmp / "national.parquet"
        t0 = time.perf_counter()
        sizes = write_national(big, args.records, args.strata)
        write_national(small, min(BASELINE_RECORDS, args.records), args.strata, seed=1)
        print(f"wrote {args.records:,} records x {P} attributes in {args.strata} strata "
              f"(sizes {sizes.min():,}..{sizes.max():,}) in {time.perf_counter() - t0:.1f} s; "
              f"file {big.stat().st_size / mb:.1f} MB")
        print(f"baseline (fixed overhead): the same command on "
              f"{min(BASELINE_RECORDS, args.records):,} records")
        _, base_rss, base_pss, rc = run_measured(protect(small, tmp / "b.parquet", args.jobs))
        if rc:
            return rc
        print(f"national file: microagg protect -k {K} --strata region --jobs {args.jobs}")
        secs, rss, pss, rc = run_measured(protect(big, tmp / "out.parquet", args.jobs))
        if rc:
            print(f"FAILED: exit status {rc}")
            return 1
        smallest = check_output(tmp / "out.parquet")
    largest = sizes.max() * RECORD_BYTES
    whole = args.records * RECORD_BYTES
    print(f"\ncompleted in {secs:.1f} s; every released combination shared by >= {smallest} "
          f"records (k = {K})")
    print(f"largest stratum: {sizes.max():,} records = {largest / mb:.2f} MB in memory; "
          f"whole file: {whole / mb:.1f} MB in memory")
    ok = smallest >= K
    for name, peak, base in (("RSS", rss, base_rss), ("PSS", pss, base_pss)):
        above = peak - base
        tree, per_job = base + 3 * largest, base + args.jobs * 3 * largest
        ok = ok and (name != "PSS" or peak <= per_job)
        print(f"peak {name} of the process tree: {peak / mb:.1f} MB; fixed overhead "
              f"{base / mb:.1f} MB; above it {above / mb:.1f} MB = {above / largest:.1f} x "
              f"the largest stratum ({above / largest / args.jobs:.1f} x per job; "
              f"{above / whole:.3f} x the whole file)")
        print(f"   overhead + 3 x largest = {tree / mb:.1f} MB: "
              f"{'within' if peak <= tree else 'ABOVE'}; overhead + {args.jobs} jobs x 3 x "
              f"largest = {per_job / mb:.1f} MB: {'within' if peak <= per_job else 'ABOVE'}")
    print("PASS (completed, k-anonymous, within 3 x the largest stratum per job, PSS)" if ok
          else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
