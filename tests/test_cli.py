"""The command-line interface, run in-process."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from microagg._cli import main
from microagg._env import ON_OFF, SWITCHES


def test_protect_writes_k_anonymous_csv(tmp_path, capsys):
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"a": rng.normal(size=30), "b": rng.normal(size=30), "s": ["x"] * 30})
    src, out = tmp_path / "in.csv", tmp_path / "out.csv"
    df.to_csv(src, index=False)
    assert main(["protect", str(src), "-k", "3", "-o", str(out), "--method", "vmdav"]) == 0
    res = pd.read_csv(out)
    assert list(res.columns) == ["a", "b", "s"]
    assert res.groupby(["a", "b"]).size().min() >= 3
    assert "IL =" in capsys.readouterr().err


@pytest.mark.parametrize("strata", [[], ["--strata", "s"]])
def test_no_standardize_builds_the_groups_on_the_raw_values(tmp_path, capsys, strata):
    """``--no-standardize`` is ``standardize=False``: on raw values the column in large
    units (income) decides the groups, so the release differs from the standardised one and
    equals the API's, in memory and by strata."""
    import microagg as ma

    rng = np.random.default_rng(3)
    df = pd.DataFrame({"s": ["x", "y"] * 15, "age": rng.integers(18, 90, 30).astype(float),
                       "income": rng.gamma(2.0, 20_000.0, 30).round(0)})
    src, out = tmp_path / "in.csv", tmp_path / "out.csv"
    df.to_csv(src, index=False)
    by = {"strata": "s"} if strata else {}
    released = {}
    for flag, standardize in (([], True), (["--no-standardize"], False)):
        assert main(["protect", str(src), "-k", "3", "-o", str(out), "--force",
                     *strata, *flag]) == 0, capsys.readouterr().err
        got = pd.read_csv(out).sort_values(["s", "age", "income"], ignore_index=True)
        want = ma.microaggregate(df, 3, standardize=standardize, **by).sort_values(
            ["s", "age", "income"], ignore_index=True)
        pd.testing.assert_frame_equal(got, want, check_dtype=False)
        released[standardize] = got
    assert not released[True].equals(released[False])


def test_protect_reports_bad_input(tmp_path, capsys):
    src = tmp_path / "in.csv"
    pd.DataFrame({"a": [1.0, np.nan, 3.0]}).to_csv(src, index=False)
    assert main(["protect", str(src), "-k", "2"]) == 2
    assert "NaN" in capsys.readouterr().err


def test_info_and_data(tmp_path, capsys):
    assert main(["info"]) == 0
    assert "microagg" in capsys.readouterr().out
    assert main(["data", "--source", str(tmp_path / "nowhere"), "--dest", str(tmp_path)]) == 2
    assert f"the source folder {tmp_path / 'nowhere'} does not exist" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [["info"], ["reproduce", "genetic-table1"]])
def test_a_reader_that_leaves_early_ends_the_command_quietly(argv):
    """``microagg info | head -1``: the pipe closes before the command has written all;
    it ends as ``cat`` does (status 141, SIGPIPE's), not with "error: [Errno 32] Broken
    pipe" and an interpreter warning on stderr."""
    import os
    import subprocess
    import sys

    read, write = os.pipe()
    os.close(read)  # (the reader is gone before anything is written)
    done = subprocess.run([sys.executable, "-m", "microagg", *argv], stdout=write,
                          stderr=subprocess.PIPE, text=True, timeout=300)
    os.close(write)
    assert done.returncode == 141, done.stderr
    assert "Broken pipe" not in done.stderr and "Exception ignored" not in done.stderr


def test_an_error_to_a_closed_stderr_still_exits_2(tmp_path):
    """``protect ... 2>&1 | head -c 1``: the error line meets a closed pipe; the run still
    ends with its status (2), not with 1 and a second error about the pipe."""
    import os
    import subprocess
    import sys

    src = tmp_path / "nohead.csv"
    src.write_text("1,2\n3,4\n5,6\n")  # (no header: refused)
    read, write = os.pipe()
    os.close(read)
    done = subprocess.run([sys.executable, "-m", "microagg", "protect", src, "-k", "2",
                           "-o", tmp_path / "out.csv"], stdout=write, stderr=write, timeout=300)
    os.close(write)
    assert done.returncode == 2


def test_a_switch_neither_on_nor_off_is_named(tmp_path):
    """``MICROAGG_DISABLE_NUMBA=ja``: a warning naming the switch and how it is read, not a
    traceback at import (numba only makes the same answers faster)."""
    import os
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "microagg", "info"], capture_output=True,
                          text=True, timeout=300,
                          env={**os.environ, "MICROAGG_DISABLE_NUMBA": "ja"})
    assert done.returncode == 0, done.stderr
    assert "MICROAGG_DISABLE_NUMBA='ja' is neither on" in done.stderr
    assert "read as unset" in done.stderr and "Traceback" not in done.stderr


def test_info_says_why_numba_is_off(monkeypatch, capsys):
    """A plain install is told how to turn the compiled loops on; a switched-off one, which
    switch did it."""
    from microagg import _jit

    monkeypatch.setattr(_jit, "HAVE_NUMBA", False)
    monkeypatch.setenv("MICROAGG_DISABLE_NUMBA", "1")
    assert main(["info"]) == 0
    assert "compiled loops (numba): off: switched off by MICROAGG_DISABLE_NUMBA=1" in (
        capsys.readouterr().out)
    monkeypatch.delenv("MICROAGG_DISABLE_NUMBA")
    monkeypatch.delenv("NUMBA_DISABLE_JIT", raising=False)
    monkeypatch.setattr(_jit, "_numba_installed", lambda: False)
    assert main(["info"]) == 0
    out = capsys.readouterr().out
    assert "off: numba is not installed" in out and 'pip install "microagg[fast]"' in out


@pytest.mark.parametrize("name, value", [(n, "maybe") for n in ON_OFF]
                         + [("MICROAGG_GOMM_CACHE_MB", "lots")])
def test_info_names_a_switch_set_to_a_value_the_package_does_not_understand(
        monkeypatch, capsys, name, value):
    """``microagg info`` listed ``MICROAGG_OFFLINE=maybe`` like any other value, though the
    package refuses it when it reads it."""
    monkeypatch.setenv(name, value)
    assert main(["info"]) == 0
    out, err = capsys.readouterr()
    line = out.split(f"  {name}={value}  (", 1)[1].splitlines()[1]
    assert line.startswith("    problem: ") and repr(value) in line, line
    assert out.count("problem: ") == 1
    assert f"microagg: warning: {name} set to a value the package does not understand" in err


def test_every_switch_read_as_on_or_off_is_checked_by_info():
    """The switches documented as ``1: ...`` are those :data:`ON_OFF` lists (and info checks)."""
    assert sorted(ON_OFF) == sorted(n for n, m in SWITCHES.items() if m.startswith("1:"))


def test_unknown_command_exits():
    with pytest.raises(SystemExit):
        main(["frobnicate"])


def test_every_example_of_the_help_parses(capsys):
    """The examples ``microagg --help`` prints are commands a user can paste: each, with its
    shell line continuations, is accepted by the parser (parsed only, not run)."""
    import shlex

    from microagg._cli import _parser

    with pytest.raises(SystemExit):
        main(["--help"])
    shown = capsys.readouterr().out.split("examples:\n", 1)[1]
    # a long example is shown on two lines joined by a backslash, not run together
    assert not [line for line in shown.splitlines() if "  " in line.strip()], shown
    commands = shown.replace("\\\n", " ").strip().splitlines()
    assert len(commands) == 9 and all(c.strip().startswith("microagg ") for c in commands)
    parser = _parser()
    for command in commands:
        args = parser.parse_args(shlex.split(command)[1:])
        assert callable(args.func), command


def test_reproduce_names_its_csv_flag_in_the_output_checks(tmp_path, capsys):
    """``reproduce --csv FOLDER`` said "give a file name with -o", a flag it does not take."""
    assert main(["reproduce", "genetic-table1", "--csv", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "give a file name with --csv" in err and "with -o" not in err
