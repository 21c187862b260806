"""Release safety, files and processes (issue "Release safety", part B).

Every temporary file of a run lives in one private folder removed however the run
ends; the output appears atomically and never replaces a file without ``--force`` (two
runs racing included); compression follows the output's name; a malformed CSV row is
refused naming its line; ``-`` is standard input or output; the data folder's errors
are clear. Interrupts (SIGINT, SIGTERM, SIGKILL) of a ``--strata --jobs 2`` run leave
no file, no folder and no process, and print no traceback.
"""

from __future__ import annotations

import errno
import io
import os
import random
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from cli_helpers import as_from_a_terminal, one_line_error, run

from microagg import _datafiles

STRATA = ["--strata", "s"]


def _table(n: int = 60, seed: int = 0, strata: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"s": [f"g{chr(97 + i % strata)}" for i in range(n)],
                         "a": rng.normal(size=n), "b": rng.normal(size=n)})


@pytest.fixture()
def src(tmp_path: Path) -> Path:
    path = tmp_path / "in.csv"
    _table().to_csv(path, index=False)
    return path


def _protected(frame: pd.DataFrame, k: int = 3) -> bool:
    return bool(frame.groupby(["a", "b"]).size().min() >= k) and len(frame) == 60


# -- the private folder --------------------------------------------------------------------

@pytest.mark.parametrize("strata", [[], STRATA])
def test_temporary_files_live_in_one_private_folder(src, tmp_path, capsys, monkeypatch,
                                                    strata):
    """While the run writes, the output's folder holds only the input and one folder of
    mode 0700 (the spill, the units and the unpublished output inside); after it, only
    the input and the output."""
    seen = []
    real = pd.DataFrame.to_csv

    def spy(self, *args, **kwargs):
        seen.append({p.name: (p.is_dir(), stat.S_IMODE(p.stat().st_mode),
                              sorted(c.name for c in p.iterdir()) if p.is_dir() else None)
                     for p in tmp_path.iterdir()})
        return real(self, *args, **kwargs)

    monkeypatch.setattr(pd.DataFrame, "to_csv", spy)
    out = tmp_path / "out.csv"
    rc, _, err = run(["protect", src, "-k", "3", "-o", out, *strata], capsys)
    assert rc == 0, err
    listing = seen[0]
    folders = [name for name in listing if name.startswith(".microagg-")]
    assert sorted(set(listing) - set(folders)) == ["in.csv"] and len(folders) == 1
    is_dir, mode, inside = listing[folders[0]]
    assert is_dir and mode == 0o700
    assert "output.csv" in inside and (not strata or "strata.arrow" in inside)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv", "out.csv"]


# -- publishing: never over an existing file, even in a race -----------------------------------

@pytest.mark.parametrize("strata", [[], STRATA])
def test_a_file_created_meanwhile_is_not_replaced(src, tmp_path, capsys, monkeypatch, strata):
    """Another run's output appearing between the start and the end of this one is kept:
    this run exits 2 naming the file (the existence check at the start is not enough)."""
    import microagg._cli as cli
    import microagg._cli_strata as cli_strata

    out = tmp_path / "out.csv"
    module, name = (cli_strata, "protect_stream") if strata else (cli, "protect_decided")
    real = getattr(module, name)

    def other_run_meanwhile(*args, **kwargs):
        out.write_text("the other run's output\n")
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, other_run_meanwhile)
    rc, _, err = run(["protect", src, "-k", "3", "-o", out, *strata], capsys)
    line = one_line_error(rc, err)
    assert str(out) in line and "--force" in line
    assert out.read_text() == "the other run's output\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv", "out.csv"]


def test_force_replaces_atomically(src, tmp_path, capsys):
    out = tmp_path / "out.csv"
    out.write_text("old\n")
    rc, _, err = run(["protect", src, "-k", "3", "-o", out, "--force", *STRATA], capsys)
    assert rc == 0, err
    assert _protected(pd.read_csv(out))


@pytest.mark.parametrize("strata", [[], STRATA])
def test_force_keeps_the_permissions_of_the_file_it_replaces(src, tmp_path, capsys, strata):
    """A release kept readable by its owner only (0600) became 0644 when replaced."""
    out = tmp_path / "out.csv"
    out.write_text("old\n")
    out.chmod(0o600)
    rc, _, err = run(["protect", src, "-k", "3", "-o", out, "--force", *strata], capsys)
    assert rc == 0, err
    assert out.stat().st_mode & 0o777 == 0o600


def test_force_keeps_the_group_of_the_file_it_replaces(src, tmp_path, capsys):
    """A release at 0640 for one group became 0640 for the user's own group, which other
    people may be in."""
    others = [g for g in ({1} if os.geteuid() == 0 else set(os.getgroups())) if g != os.getegid()]
    if not others:
        pytest.skip("needs a second group to give the file")
    out = tmp_path / "out.csv"
    out.write_text("old\n")
    os.chown(out, -1, others[0])
    out.chmod(0o640)
    rc, _, err = run(["protect", src, "-k", "3", "-o", out, "--force", *STRATA], capsys)
    assert rc == 0, err
    assert (out.stat().st_gid, out.stat().st_mode & 0o777) == (others[0], 0o640)


def test_two_runs_racing_for_one_output(src, tmp_path):
    """Two runs to one ``-o`` started together: exactly one succeeds, the other exits 2
    naming the file."""
    out = tmp_path / "out.csv"
    cmd = [sys.executable, "-m", "microagg", "protect", str(src), "-k", "3", "-o", str(out)]
    procs = [subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    results = [(p.returncode, err) for p in procs for _, err in [p.communicate(timeout=120)]]
    codes = sorted(rc for rc, _ in results)
    assert codes == [0, 2], results
    loser = next(err for rc, err in results if rc == 2)
    assert str(out) in loser and "Traceback" not in loser
    assert _protected(pd.read_csv(out))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv", "out.csv"]


@pytest.mark.parametrize("strata", [[], STRATA])
def test_a_long_legal_output_name_works(src, tmp_path, capsys, strata):
    out = tmp_path / ("x" * 245 + ".csv")  # 249 characters: legal (NAME_MAX is 255)
    rc, _, err = run(["protect", src, "-k", "3", "-o", out, *strata], capsys)
    assert rc == 0, err
    assert _protected(pd.read_csv(out))


def test_an_output_name_too_long_is_named(src, tmp_path, capsys):
    rc, _, err = run(["protect", src, "-k", "3", "-o", tmp_path / ("x" * 300 + ".csv")],
                     capsys)
    assert "shorter name" in one_line_error(rc, err)


# -- compression follows the output's name ------------------------------------------------------

@pytest.mark.parametrize("suffix, magic", [(".gz", b"\x1f\x8b"), (".bz2", b"BZh"),
                                           (".xz", b"\xfd7zXZ")])
@pytest.mark.parametrize("strata", [[], STRATA])
def test_compressed_output(src, tmp_path, capsys, suffix, magic, strata):
    out = tmp_path / f"out.csv{suffix}"
    rc, _, err = run(["protect", src, "-k", "3", "-o", out, *strata], capsys)
    assert rc == 0, err
    assert out.read_bytes().startswith(magic)
    assert _protected(pd.read_csv(out))


def test_gzip_output_is_deterministic(src, tmp_path, capsys):
    outs = [tmp_path / "one.csv.gz", tmp_path / "two.csv.gz"]
    for out in outs:
        assert run(["protect", src, "-k", "3", "-o", out], capsys)[0] == 0
    assert outs[0].read_bytes() == outs[1].read_bytes()


def test_zstd_output_or_a_clear_refusal(src, tmp_path, capsys):
    out = tmp_path / "out.csv.zst"
    rc, _, err = run(["protect", src, "-k", "3", "-o", out], capsys)
    try:
        import zstandard  # noqa: F401
    except ImportError:
        assert "pip install zstandard" in one_line_error(rc, err)
        assert not out.exists()
    else:
        assert rc == 0 and _protected(pd.read_csv(out))


@pytest.mark.parametrize("name, expect", [("out.csv.zip", "not written"),
                                          ("out.parquet.gz", "Parquet is compressed inside")])
def test_unwritten_compressions_are_refused(src, tmp_path, capsys, name, expect):
    rc, _, err = run(["protect", src, "-k", "3", "-o", tmp_path / name], capsys)
    assert expect in one_line_error(rc, err)
    assert not (tmp_path / name).exists()


# -- a malformed CSV row -------------------------------------------------------------------------

@pytest.mark.parametrize("strata", [[], STRATA])
@pytest.mark.parametrize("bad", [2, 5])
def test_a_row_with_more_fields_than_the_header_is_refused(tmp_path, capsys, strata, bad):
    """Before: a first row with one field too many became the row index (its first
    field silently dropped from the output)."""
    lines = ["s,a,b"] + [f"g{chr(97 + i % 2)},{i}.5,{i * 2}.5" for i in range(12)]
    lines[bad - 1] += ",99"
    src = tmp_path / "in.csv"
    src.write_text("\n".join(lines) + "\n")
    out = tmp_path / "out.csv"
    rc, _, err = run(["protect", src, "-k", "3", "-o", out, *strata], capsys)
    line = one_line_error(rc, err)
    assert f"line {bad}" in line and "4 fields" in line and "header has 3" in line
    assert not out.exists()


# -- standard input and output ---------------------------------------------------------------

def _cli(args: list, data: bytes = b"", timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "microagg", *map(str, args)], input=data,
                          capture_output=True, timeout=timeout)


def test_dash_reads_standard_input_and_writes_standard_output(src):
    done = _cli(["protect", "-", "-k", "3", "-o", "-"], src.read_bytes())
    assert done.returncode == 0, done.stderr
    assert _protected(pd.read_csv(io.BytesIO(done.stdout)))


def test_dev_stdin_is_read(src):
    done = _cli(["protect", "/dev/stdin", "-k", "3"], src.read_bytes())
    assert done.returncode == 0, done.stderr
    assert _protected(pd.read_csv(io.BytesIO(done.stdout)))


def test_a_text_only_standard_input_is_read(monkeypatch):
    # a stdin without a binary buffer (a notebook's, io.StringIO) gives str: read as UTF-8
    from microagg._cli_io import read_input

    monkeypatch.setattr(sys, "stdin", io.StringIO("town,income\nÉvry,1\nAix,2\n"))
    table = read_input(None).frame
    assert table.to_dict("list") == {"town": ["Évry", "Aix"], "income": ["1", "2"]}


def test_strata_from_standard_input_is_refused_clearly(src, monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(src.read_bytes())))
    rc, _, err = run(["protect", "-", "-k", "3", *STRATA], capsys)
    assert "save the input to a file" in one_line_error(rc, err)


# -- the data folder -----------------------------------------------------------------------------

def test_microagg_data_naming_a_file(tmp_path, monkeypatch, capsys):
    afile = tmp_path / "afile"
    afile.write_text("x")
    monkeypatch.setenv("MICROAGG_DATA", str(afile))
    for argv in (["data"], ["info"]):
        rc, _, err = run(argv, capsys)
        line = one_line_error(rc, err)
        assert "MICROAGG_DATA" in line and "names a file, not a folder" in line


def test_data_source_naming_a_file(tmp_path, capsys):
    afile = tmp_path / "afile"
    afile.write_text("x")
    rc, _, err = run(["data", "--source", afile, "--dest", tmp_path / "dest"], capsys)
    assert "is a file: give the folder" in one_line_error(rc, err)


@pytest.mark.data
def test_data_into_a_read_only_verified_folder(tmp_path, monkeypatch, capsys):
    """A folder of verified files on a read-only file system: nothing to do, no error
    (before: ``[Errno 30]`` removing an old ``.pkl`` cache that was not there)."""
    dest = tmp_path / "ro"
    rc, _, err = run(["data", "--source", _datafiles.data_dir(), "--dest", dest], capsys)
    assert rc == 0, err
    real_unlink, real_mkstemp = os.unlink, _datafiles.tempfile.mkstemp

    def read_only(path, *args, **kwargs):
        if str(path).startswith(str(dest)):
            raise OSError(errno.EROFS, "Read-only file system", str(path))
        return real_unlink(path, *args, **kwargs)

    def no_temp(*args, dir=None, **kwargs):
        if str(dir).startswith(str(dest)):
            raise OSError(errno.EROFS, "Read-only file system", str(dir))
        return real_mkstemp(*args, dir=dir, **kwargs)

    monkeypatch.setattr(os, "unlink", read_only)
    monkeypatch.setattr(_datafiles.tempfile, "mkstemp", no_temp)
    rc, out, err = run(["data", "--source", _datafiles.data_dir(), "--dest", dest], capsys)
    assert rc == 0 and "verified" in out, err
    monkeypatch.undo()
    (dest / "EIA.rda").unlink()
    monkeypatch.setattr(_datafiles.tempfile, "mkstemp", no_temp)
    rc, _, err = run(["data", "--source", _datafiles.data_dir(), "--dest", dest], capsys)
    line = one_line_error(rc, err)
    assert "cannot write EIA.rda" in line and "--dest" in line and "Errno" not in line


# -- interrupts ----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def big(tmp_path_factory) -> Path:
    """A file whose ``--strata s --jobs 2`` run goes on for several seconds after its run
    folder appears (about 8 s on a quiet 2-core machine: 40,000 rows took under 0.4 s, so
    a signal sent up to 3 s in could arrive after the output was published)."""
    path = tmp_path_factory.mktemp("big") / "big.csv"
    rng = np.random.default_rng(1)
    n = 200_000
    pd.DataFrame({"s": rng.integers(0, 40, n).astype(str), "a": rng.normal(size=n),
                  "b": rng.normal(size=n), "c": rng.normal(size=n)}).to_csv(path, index=False)
    return path


def _session(pid: int) -> list[str]:
    """The live (not zombie) processes of session ``pid``, as ``pid cmdline``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            if int(fields[3]) == pid and fields[0] != "Z":  # session id, state
                cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
                found.append(f"{entry.name} {cmd}")
        except (OSError, IndexError, ValueError):
            continue
    return found


def _interrupted_run(big: Path, folder: Path, how: signal.Signals, delay: float,
                     group: bool = False) -> tuple[int, str]:
    """Start a ``--strata --jobs 2`` run into ``folder``, wait until it has started its
    run folder, then ``delay`` seconds; send ``how``; return the exit code and stderr once
    nothing of the run is left (or fail)."""
    out = folder / "out.csv"
    proc = subprocess.Popen([sys.executable, "-m", "microagg", "protect", str(big), "-k", "3",
                             "--strata", "s", "--jobs", "2", "-o", str(out)],
                            stderr=subprocess.PIPE, start_new_session=True,
                            preexec_fn=as_from_a_terminal)
    start = time.monotonic()
    while not any(folder.iterdir()) and proc.poll() is None and time.monotonic() - start < 60:
        time.sleep(0.02)
    time.sleep(delay)
    assert proc.poll() is None, "the run ended before the signal: make the file larger"
    if group:  # Ctrl-C in a terminal: the whole process group
        os.killpg(proc.pid, how)
    else:
        os.kill(proc.pid, how)
    rc = proc.wait(timeout=60)
    deadline = time.monotonic() + 10  # (the watchdog, in a session of its own, cleans up)
    while ((_session(proc.pid) or any(folder.iterdir()))
           and time.monotonic() < deadline):
        time.sleep(0.05)
    left = _session(proc.pid)
    if left:  # end them (they hold stderr open), then fail
        os.killpg(proc.pid, signal.SIGKILL)
    err = proc.stderr.read().decode()
    proc.stderr.close()
    assert left == [], f"processes left: {left}"
    assert list(folder.iterdir()) == [], f"files left: {list(folder.iterdir())}"
    return rc, err


@pytest.mark.parametrize("seed", [0, 1])
def test_interrupt_leaves_nothing(big, tmp_path, seed):
    """SIGINT to the process group (Ctrl-C), SIGTERM (and SIGHUP) to the main process, at
    random moments (seeded) after the run has started: exit 130 or 143, one line, no traceback
    from any process, no file, no folder, no process left."""
    rng = random.Random(seed)
    cases = [(signal.SIGINT, True, 130), (signal.SIGTERM, False, 143)]
    if seed:  # a closed terminal too, once
        cases.append((signal.SIGHUP, False, 129))
    for how, group, code in cases:
        folder = tmp_path / f"{how.name}"
        folder.mkdir()
        rc, err = _interrupted_run(big, folder, how, rng.uniform(0.0, 3.0), group)
        assert rc == code, err
        assert "Traceback" not in err and "Error" not in err
        assert err.strip().splitlines() == [
            f"microagg: interrupted ({how.name}): stopped, temporary files removed, no "
            "output file written"]


def test_kill_of_the_whole_process_group_leaves_no_raw_copy(big, tmp_path):
    """``kill -9`` of the run's whole process group (``timeout -s KILL``, a job-control
    kill): the watchdog, in a session of its own, survives it and removes the run folder
    (the spill holds every raw row)."""
    rc, err = _interrupted_run(big, tmp_path, signal.SIGKILL, 2.0, group=True)
    assert rc == -signal.SIGKILL
    assert "Traceback" not in err


def test_kill_of_the_main_process_leaves_no_worker_and_no_raw_copy(big, tmp_path):
    """``kill -9`` of the main process while its workers run: the workers end and the run
    folder (holding the raw copy of the input) is removed."""
    rc, err = _interrupted_run(big, tmp_path, signal.SIGKILL, 2.0)
    assert rc == -signal.SIGKILL
    assert "Traceback" not in err
