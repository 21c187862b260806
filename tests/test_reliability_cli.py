"""The command line as an adversarial user meets it: files, errors, options, help.

Issue "Reliability", points 1 (data loss), 3 (the column report), 8 (tracebacks) and 9 (unclear
errors and help). Everything runs in-process through :func:`microagg._cli.main`, except one
check that the installed command really prints no traceback.
"""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from cli_helpers import one_line_error, run

import microagg
from microagg._cli import _parser
from microagg._cli_io import METHOD_OPTIONS
from microagg._methods import METHODS


def _table(n: int = 30, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"a": rng.normal(size=n), "b": rng.normal(size=n), "s": ["x"] * n})


@pytest.fixture()
def src(tmp_path: Path) -> Path:
    path = tmp_path / "in.csv"
    _table().to_csv(path, index=False)
    return path


# -- 1. data loss ----------------------------------------------------------------------------

@pytest.mark.parametrize("spelling", ["same", "dotted", "symlink"])
def test_protect_never_writes_over_its_input(src, capsys, spelling):
    before = src.read_bytes()
    target = {"same": src, "dotted": src.parent / "." / src.name,
              "symlink": src.parent / "link.csv"}[spelling]
    if spelling == "symlink":
        target.symlink_to(src)
    rc, _, err = run(["protect", src, "-k", "3", "-o", target, "--force"], capsys)
    assert "input" in one_line_error(rc, err)
    assert src.read_bytes() == before


@pytest.mark.parametrize("spelling", ["same", "symlink"])
def test_protect_never_writes_over_its_input_read_as_standard_input(src, capsys, monkeypatch,
                                                                    spelling):
    """``microagg protect - -o in.csv --force < in.csv`` replaced the input with the release
    (the check compared the output with a named input only)."""
    before = src.read_bytes()
    target = src if spelling == "same" else src.parent / "link.csv"
    if spelling == "symlink":
        target.symlink_to(src)
    with open(src, encoding="utf-8") as redirected:
        monkeypatch.setattr(sys, "stdin", redirected)
        rc, _, err = run(["protect", "-", "-k", "3", "-o", target, "--force"], capsys)
    assert "input" in one_line_error(rc, err) and "standard input" in err
    assert src.read_bytes() == before


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
@pytest.mark.parametrize("force", [[], ["--force"]])
@pytest.mark.parametrize("spelling", ["pipe", "symlink"])
def test_protect_never_replaces_a_device_or_pipe(src, tmp_path, capsys, force, spelling):
    """``-o /dev/null --force`` (run as root: a container) replaced the device with the
    release, and without ``--force`` the error advised it: a name that is no regular file
    is refused either way, and standard output suggested instead."""
    fifo = tmp_path / "fifo.csv"
    os.mkfifo(fifo)
    target = fifo if spelling == "pipe" else tmp_path / "link.csv"
    if spelling == "symlink":
        target.symlink_to(fifo)
    rc, _, err = run(["protect", src, "-k", "3", "-o", target, *force], capsys)
    line = one_line_error(rc, err)
    assert "not a regular file" in line and "-o -" in line and "use --force" not in line
    assert fifo.is_fifo() and target.is_symlink() == (spelling == "symlink")


#: Names a file could hold that a terminal obeys: clear the screen, set the window's title,
#: return to the line's start, reverse the text that follows.
SEQUENCES = ["\x1b[2J", "\x1b]0;x\x07", "\r", "\u202e"]


@pytest.mark.parametrize("command", ["in memory", "by strata", "refused", "audit"])
def test_names_from_the_file_reach_the_terminal_escaped(tmp_path, capsys, command):
    """Column names and a stratum's key reached standard error as they stand: a column named
    ``\\x1b[2J`` cleared the screen, one holding ``\\r`` could overwrite the line listing the
    columns passed through unprotected. Each is shown as its escape (``\\x1b``)."""
    weird = "".join(SEQUENCES)
    frame = _table(30)
    frame["s"] = [weird] * 2 + ["x"] * 28  # (a small stratum, merged: its key is named)
    frame[f"kept{weird}"] = "t"
    frame[f"passed{weird}"] = "u"
    src = tmp_path / "in.csv"
    frame.to_csv(src, index=False, quoting=csv.QUOTE_NONNUMERIC)  # (a lone \r quoted)
    out = tmp_path / "out.csv"
    keep = ["--keep", f"kept{weird}"]
    argv = {"in memory": ["protect", src, "-k", "3", *keep, "--keep-rest", "-o", out],
            "by strata": ["protect", src, "-k", "3", "--strata", "s", "--small-strata",
                          "merge", *keep, "--keep-rest", "-o", out],
            "refused": ["protect", src, "-k", "3", "-o", out],
            "audit": ["audit", src, src, "-k", "3", *keep, "--keep-rest"]}[command]
    rc, _, err = run(argv, capsys)
    assert rc in (0, 2) and "Traceback" not in err, err
    assert not any(seq in err for seq in SEQUENCES), repr(err)
    assert "\\x07\\r\\u202e" in err  # (a value's digits are shown as #)


def test_existing_output_is_replaced_only_with_force(src, tmp_path, capsys):
    out = tmp_path / "out.csv"
    out.write_text("keep me\n")
    rc, _, err = run(["protect", src, "-k", "3", "-o", out], capsys)
    assert "--force" in one_line_error(rc, err)
    assert out.read_text() == "keep me\n"
    rc, _, _ = run(["protect", src, "-k", "3", "-o", out, "--force"], capsys)
    assert rc == 0
    assert pd.read_csv(out).groupby(["a", "b"]).size().min() >= 3


def test_output_is_written_atomically(src, tmp_path, capsys, monkeypatch):
    """A run that fails while writing leaves the old output whole and no temporary file."""
    out = tmp_path / "out.csv"
    out.write_text("previous result\n")

    def broken(self, path_or_buf=None, **kwargs):
        path_or_buf.write("a,b,s\n1.0,")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(pd.DataFrame, "to_csv", broken)
    rc, _, err = run(["protect", src, "-k", "3", "-o", out, "--force"], capsys)
    message = one_line_error(rc, err)
    # the operating system names no file: the message names the folder and the way out
    assert f"no space left on the disk of {tmp_path}" in message
    assert "No space left on device" in message and "give -o a file on another disk" in message
    assert out.read_text() == "previous result\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv", "out.csv"]
    # to standard output, the run writes in the temporary folder: TMPDIR is the way out
    rc, out_text, err = run(["protect", src, "-k", "3"], capsys)
    message = one_line_error(rc, err)
    assert "no space left on the temporary folder" in message and "TMPDIR" in message
    assert out_text == ""


# -- 3. the column report ----------------------------------------------------------------------

def test_stderr_names_protected_and_passed_through_columns(src, tmp_path, capsys):
    rc, _, err = run(["protect", src, "-k", "3", "-o", tmp_path / "out.csv"], capsys)
    assert rc == 0
    assert "protected 2 column(s): a, b" in err
    assert "passed through unchanged: s" in err


def test_csv_written_with_its_index_is_not_grouped_by_row_number(tmp_path, capsys):
    src, out = tmp_path / "in.csv", tmp_path / "out.csv"
    _table().to_csv(src)  # index=True: an "Unnamed: 0" column of row numbers
    rc, _, err = run(["protect", src, "-k", "3", "-o", out], capsys)
    assert rc == 0
    assert "kept unchanged: Unnamed: 0" in err and "row index" in err
    assert "passed through unchanged: s" in err
    res = pd.read_csv(out)
    assert res["Unnamed: 0"].tolist() == list(range(30))
    assert res.groupby(["a", "b"]).size().min() >= 3


def test_numbers_stored_as_text_are_an_error_naming_the_column(tmp_path, capsys):
    src = tmp_path / "in.csv"
    _table().assign(income=[f"{1000 + 37 * i:,}" for i in range(30)]).to_csv(src, index=False)
    rc, _, err = run(["protect", src, "-k", "3"], capsys)
    line = one_line_error(rc, err)
    assert "'income'" in line and "#,###" in line and "1,000" not in line
    rc, _, err = run(["protect", src, "-k", "3", "--columns", "a,b"], capsys)
    assert "--keep income" in one_line_error(rc, err)  # release contract: keep it explicitly
    rc, _, _ = run(["protect", src, "-k", "3", "--columns", "a,b", "--keep", "income"], capsys)
    assert rc == 0


# -- 8. no tracebacks ------------------------------------------------------------------------

def _case_args(case: str, src: Path, tmp: Path) -> list:
    (tmp / "adir").mkdir()
    (tmp / "afile").write_text("x")
    source = tmp / "source"
    (source / "EIA.rda").mkdir(parents=True)
    (tmp / "empty.csv").write_text("")
    (tmp / "binary.csv").write_bytes(bytes(range(256)) * 4)
    return {
        "output in a missing folder": ["protect", src, "-k", "3", "-o", tmp / "nodir" / "o.csv"],
        "output is a folder": ["protect", src, "-k", "3", "-o", tmp / "adir"],
        "input is a folder": ["protect", tmp / "adir", "-k", "3"],
        "input missing": ["protect", tmp / "missing.csv", "-k", "3"],
        "input empty": ["protect", tmp / "empty.csv", "-k", "3"],
        "input not text": ["protect", tmp / "binary.csv", "-k", "3"],
        "k too large": ["protect", src, "-k", "99"],
        "k zero": ["protect", src, "-k", "0"],
        "data --dest is a file": ["data", "--source", source, "--dest", tmp / "afile"],
        "data files missing": ["data", "--source", source, "--dest", tmp / "dest"],
        "unknown column": ["protect", src, "-k", "3", "--columns", "zzz"],
        "text column named": ["protect", src, "-k", "3", "--columns", "a,s"],
    }[case]


@pytest.mark.parametrize("case", [
    "output in a missing folder", "output is a folder", "input is a folder", "input missing",
    "input empty", "input not text", "k too large", "k zero", "data --dest is a file",
    "data files missing", "unknown column", "text column named"])
def test_user_errors_are_one_line_without_traceback(src, tmp_path, capsys, case):
    rc, _, err = run(_case_args(case, src, tmp_path), capsys)
    one_line_error(rc, err)


@pytest.mark.data
def test_a_folder_named_EIA_rda_is_an_error_and_not_copied(tmp_path, capsys):
    from microagg import datasets

    source, dest = tmp_path / "source", tmp_path / "dest"
    (source / "EIA.rda").mkdir(parents=True)
    for fname in datasets.FILES:
        if fname != "EIA.rda":
            (source / fname).write_bytes((datasets.data_dir() / fname).read_bytes())
    rc, _, err = run(["data", "--source", source, "--dest", dest], capsys)
    line = one_line_error(rc, err)
    assert "EIA.rda" in line and "not a file" in line
    assert not (dest / "EIA.rda").exists()
    assert not [p for p in dest.iterdir() if p.name.startswith(".")]  # no temporary left


def test_installed_command_prints_no_traceback_but_debug_does(tmp_path):
    env = dict(os.environ, MICROAGG_OFFLINE="1")
    cmd = [sys.executable, "-m", "microagg", "protect", str(tmp_path), "-k", "3"]
    plain = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
    assert plain.returncode == 2 and "Traceback" not in plain.stderr
    assert plain.stderr.strip().count("\n") == 0, plain.stderr
    debug = subprocess.run(cmd[:3] + ["--debug"] + cmd[3:], capture_output=True, text=True,
                           env=env, timeout=120)
    assert debug.returncode != 0 and "Traceback" in debug.stderr


# -- 9. options, help, version -----------------------------------------------------------------

def test_version(capsys):
    rc, out, _ = run(["--version"], capsys)
    assert rc == 0 and out.strip() == f"microagg {microagg.__version__}"


def test_usage_errors_are_one_line(src, capsys):
    rc, _, err = run(["protect", src], capsys)  # -k missing
    assert "-k" in one_line_error(rc, err)


def _parsers():
    top = _parser()
    sub = next(a for a in top._actions if a.dest == "command")
    return {"microagg": top, **{f"microagg {n}": p for n, p in sub.choices.items()}}


@pytest.mark.parametrize("name", sorted(_parsers()))
def test_help_has_text_for_every_option_and_no_markup(name):
    parser = _parsers()[name]
    text = parser.format_help()
    for markup in ("``", ":func:", ":ref:", ":math:", ":mod:", ":class:"):
        assert markup not in text, f"{name} --help shows raw markup {markup!r}"
    bare = [a.option_strings or [a.dest] for a in parser._actions
            if not a.help or not a.help.strip()]
    assert not bare, f"{name}: options without help text: {bare}"


def test_every_registry_option_has_a_flag():
    options = {o for m in METHODS.values() for o in m.options}
    assert options <= set(METHOD_OPTIONS)


@pytest.mark.parametrize("flag, value", [("--gamma", "1.1"), ("--K", "12"),
                                         ("--candidates", "6"), ("--seed", "1")])
def test_an_option_of_another_method_is_rejected_by_name(src, capsys, flag, value):
    rc, _, err = run(["protect", src, "-k", "3", "--method", "mdav", flag, value], capsys)
    line = one_line_error(rc, err)
    assert flag in line and "mdav" in line and "keyword" not in line


def test_method_options_reach_the_method(src, tmp_path, capsys):
    out = tmp_path / "o.csv"
    rc, _, err = run(["protect", src, "-k", "3", "--method", "ivmdav", "--gamma", "1.1",
                      "--self-neighbour", "no", "-o", out], capsys)
    assert rc == 0, err
    rc, _, err = run(["protect", src, "-k", "3", "--method", "ivmdav", "--self-neighbour",
                      "maybe"], capsys)
    assert "yes or no" in one_line_error(rc, err)


@pytest.mark.parametrize("k", range(2, 9))  # (k = 1 is no release: test_release.py)
def test_hybrid_works_for_every_k_with_its_default_K(tmp_path, capsys, k):
    src, out = tmp_path / "in.csv", tmp_path / "out.csv"
    _table(n=40).to_csv(src, index=False)
    rc, _, err = run(["protect", src, "-k", k, "--method", "hybrid", "--iterations", "20",
                      "--seed", "0", "-o", out], capsys)
    assert rc == 0, err
    assert pd.read_csv(out).groupby(["a", "b"]).size().min() >= k


def test_hybrid_K_is_settable_and_checked(src, tmp_path, capsys):
    out = tmp_path / "out.csv"
    rc, _, err = run(["protect", src, "-k", "3", "--method", "hybrid", "--K", "12",
                      "--iterations", "20", "-o", out], capsys)
    assert rc == 0, err
    rc, _, err = run(["protect", src, "-k", "3", "--method", "hybrid", "--K", "10"], capsys)
    line = one_line_error(rc, err)
    assert "K=9" in line and "K=12" in line


def test_empty_columns_option_is_an_error(src, capsys):
    rc, out, err = run(["protect", src, "-k", "3", "--columns", ""], capsys)
    assert "--columns" in one_line_error(rc, err)
    assert out == ""
