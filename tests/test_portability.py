"""The command line on Windows and macOS, checked on any system.

A practitioner's review on Windows found: plain CSV releases written in the system's code
page (any non-ASCII name or value stopped the run), ``--force`` failing on ``os.chown``,
``--jobs`` failing to start the POSIX resource tracker, ``-o -`` writing ``\\r\\r\\n`` line
ends, a traceback on a broken pipe (no ``signal.SIGPIPE``), publishing failing on drives
without hard links, and a watchdog that died on ``signal.SIGKILL`` and left the run's
folder (a copy of the input) behind. Each test below simulates the one difference it is
about (``_cli_io.WINDOWS``, a missing attribute, the system's encoding or line end).
"""

from __future__ import annotations

import builtins
import errno
import io
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
from cli_helpers import run

from microagg import _cli_io

NAMES = ["Łódź", "Zürich", "Ελλάδα", "東京"]


@pytest.fixture
def towns(tmp_path: Path) -> Path:
    """A CSV whose text column and one header are not ASCII."""
    path = tmp_path / "towns.csv"
    pd.DataFrame({"town": [NAMES[i % 4] for i in range(24)],
                  "revenu €": [float(i * 7 % 23) for i in range(24)],
                  "age": [20 + i for i in range(24)]}).to_csv(path, index=False)
    return path


@pytest.fixture
def windows(monkeypatch):
    """The command line's Windows paths (its processes still start as this system's)."""
    monkeypatch.setattr(_cli_io, "WINDOWS", True)
    monkeypatch.setattr(_cli_io, "detached", lambda: {"start_new_session": True})


@pytest.fixture
def code_page_default(monkeypatch):
    """``open()`` in text mode without an encoding uses cp1252, as on Windows without UTF-8
    mode."""
    plain = builtins.open

    def open_(file, mode="r", buffering=-1, encoding=None, *args, **kwargs):
        if "b" not in mode and encoding is None:
            encoding = "cp1252"
        return plain(file, mode, buffering, encoding, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", open_)


@pytest.mark.parametrize("strata", [[], ["--strata", "town"]])
def test_a_csv_release_is_utf_8_whatever_the_system_s_code_page(towns, tmp_path, capsys,
                                                                  code_page_default, strata):
    out = tmp_path / "out.csv"
    rc, _, err = run(["protect", towns, "-k", 3, "-o", out, "--columns", "revenu €,age",
                      *strata], capsys)
    assert rc == 0, err
    text = out.read_bytes().decode("utf-8")
    assert "revenu €" in text and all(name in text for name in NAMES)


@pytest.mark.parametrize("strata", [[], ["--strata", "town"]])
def test_csv_lines_end_in_a_newline_on_every_system(towns, tmp_path, capsys, monkeypatch,
                                                     strata):
    """pandas ends lines with ``os.linesep``: ``\\r\\n`` on Windows. A release is the same
    bytes everywhere (its checksum too)."""
    expected = tmp_path / "here.csv"
    assert run(["protect", towns, "-k", 3, "-o", expected, *strata], capsys)[0] == 0
    monkeypatch.setattr(os, "linesep", "\r\n")
    out = tmp_path / "there.csv"
    rc, _, err = run(["protect", towns, "-k", 3, "-o", out, *strata], capsys)
    assert rc == 0, err
    assert b"\r" not in out.read_bytes()
    assert out.read_bytes() == expected.read_bytes()


def test_standard_output_gets_the_release_s_bytes():
    """``-o -`` through a console that translates ``\\n`` to ``\\r\\n`` and encodes in a
    code page: the bytes written are the file's (UTF-8, ``\\n``), not ``\\r\\r\\n``."""
    import tempfile

    data = "town,age\nŁódź,1\n東京,2\n".encode()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "output.csv"
        path.write_bytes(data)
        console = io.TextIOWrapper(io.BytesIO(), encoding="cp1252", newline="\r\n")
        console.write("before\n")  # (text already written comes first)
        _cli_io.copy_out(str(path), console)
        assert console.buffer.getvalue() == b"before\r\n" + data
        plain = io.StringIO()  # no bytes below it: the text
        _cli_io.copy_out(str(path), plain)
        assert plain.getvalue() == data.decode()


def test_force_replaces_a_file_where_there_are_no_groups(towns, tmp_path, capsys, monkeypatch,
                                                         windows):
    out = tmp_path / "out.csv"
    out.write_text("old\n", encoding="utf-8")
    monkeypatch.delattr(os, "chown")
    rc, _, err = run(["protect", towns, "-k", 3, "-o", out, "--force"], capsys)
    assert rc == 0, err
    assert out.read_text(encoding="utf-8").startswith("town,")


def test_publishing_on_windows_renames_and_never_replaces(tmp_path, monkeypatch):
    monkeypatch.setattr(_cli_io, "WINDOWS", True)
    tmp, out = tmp_path / "t", tmp_path / "out.csv"
    tmp.write_text("new\n", encoding="utf-8")
    _cli_io.publish(str(tmp), out)
    assert out.read_text(encoding="utf-8") == "new\n" and not tmp.exists()

    def rename(src, dst):  # as Windows' rename: never over an existing file
        raise FileExistsError(errno.EEXIST, "Cannot create a file when that file already "
                              "exists", str(dst))

    monkeypatch.setattr(os, "rename", rename)
    tmp.write_text("newer\n", encoding="utf-8")
    with pytest.raises(FileExistsError, match="exists .*--force"):
        _cli_io.publish(str(tmp), out)
    assert out.read_text(encoding="utf-8") == "new\n"


@pytest.mark.parametrize("code", [errno.EINVAL, getattr(errno, "ENOTSUP", errno.EOPNOTSUPP)])
def test_a_drive_without_hard_links_still_gets_the_file(tmp_path, monkeypatch, code):
    """A FAT or exFAT drive: Windows reports EINVAL for a hard link, macOS ENOTSUP."""
    def no_link(src, dst):
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(_cli_io, "_rename_noreplace", lambda tmp, out: False)
    monkeypatch.setattr(os, "link", no_link)
    tmp, out = tmp_path / "t", tmp_path / "out.csv"
    tmp.write_text("new\n", encoding="utf-8")
    _cli_io.publish(str(tmp), out)
    assert out.read_text(encoding="utf-8") == "new\n"
    tmp.write_text("newer\n", encoding="utf-8")
    with pytest.raises(FileExistsError, match="exists"):
        _cli_io.publish(str(tmp), out)
    assert out.read_text(encoding="utf-8") == "new\n"


def test_parallel_strata_start_without_the_posix_resource_tracker(towns, tmp_path, capsys,
                                                                    monkeypatch, windows):
    import multiprocessing.resource_tracker

    def windows_has_none():
        raise ModuleNotFoundError("No module named '_posixsubprocess'")

    serial = tmp_path / "serial.csv"
    assert run(["protect", towns, "-k", 3, "-o", serial, "--strata", "town"], capsys)[0] == 0
    monkeypatch.setattr(multiprocessing.resource_tracker, "ensure_running", windows_has_none)
    out = tmp_path / "out.csv"
    rc, _, err = run(["protect", towns, "-k", 3, "-o", out, "--strata", "town", "--jobs", 2],
                     capsys)
    assert rc == 0, err
    assert out.read_bytes() == serial.read_bytes()


def test_a_long_name_is_counted_in_characters_on_windows(tmp_path, monkeypatch):
    """NTFS allows 255 UTF-16 characters; 94 CJK characters are 282 UTF-8 bytes."""
    monkeypatch.setattr(_cli_io, "WINDOWS", True)
    _cli_io.check_name_length(tmp_path / ("統計" * 47 + ".csv"))
    with pytest.raises(ValueError, match="256 characters long, more than the 255"):
        _cli_io.check_name_length(tmp_path / ("統" * 252 + ".csv"))
    monkeypatch.setattr(_cli_io, "WINDOWS", False)
    with pytest.raises(ValueError, match="286 bytes long"):
        _cli_io.check_name_length(tmp_path / ("統計" * 47 + ".csv"))


def test_the_watchdog_starts_apart_from_the_run_on_every_system(monkeypatch):
    assert _cli_io.detached() == {"start_new_session": True}
    monkeypatch.setattr(_cli_io, "WINDOWS", True)
    flags = _cli_io.detached()["creationflags"]
    assert flags & 0x200 and flags & 0x8  # a process group of its own, no console


def test_the_watchdog_cleans_up_where_there_is_no_sigkill(tmp_path):
    """The run killed: the watchdog ends its workers and removes the run's folder (which
    holds a copy of the input) even where ``signal.SIGKILL`` does not exist."""
    folder = tmp_path / ".microagg-run"
    folder.mkdir()
    (folder / "strata.arrow").write_bytes(b"confidential")
    worker = subprocess.Popen([sys.executable, "-c",
                               "import multiprocessing, time; time.sleep(120)"])
    try:
        script = "import signal\ndel signal.SIGKILL\n" + _cli_io._WATCHDOG
        done = subprocess.run([sys.executable, "-c", script, str(folder)],
                              input=f"{worker.pid}\n".encode(), capture_output=True,
                              timeout=60)
        assert done.returncode == 0, done.stderr.decode()
        assert worker.wait(timeout=30) == -signal.SIGTERM
        assert not folder.exists()
    finally:
        if worker.poll() is None:
            worker.kill()
            worker.wait()


def test_a_broken_pipe_ends_quietly_where_sigpipe_has_no_name():
    read, write = os.pipe()
    os.close(read)
    code = ("import signal, sys\ndel signal.SIGPIPE\nfrom microagg._cli import main\n"
            "sys.exit(main(['info']))")
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code], stdout=write, stderr=subprocess.PIPE,
                          text=True, timeout=300)
    os.close(write)
    assert done.returncode == 141, (done.stderr, time.perf_counter() - start)
    assert "Traceback" not in done.stderr and "Broken pipe" not in done.stderr


@pytest.mark.parametrize("strata", [[], ["--strata", "town"]])
@pytest.mark.parametrize("suffix", [".csv", ".csv.gz"])
def test_an_excel_csv_s_byte_order_mark_is_kept(towns, tmp_path, capsys, strata, suffix):
    """Excel's "CSV UTF-8" starts with a byte-order mark, without which Excel reads the
    file in the system's code page (``Ã¼`` for ``ü``): a release of such a file starts
    with one too, and passes its audit; a file without one gets none."""
    import gzip

    from microagg._csv import BOM

    excel = tmp_path / "excel.csv"
    excel.write_bytes(BOM + towns.read_bytes())
    for source, marked in ((excel, True), (towns, False)):
        out = tmp_path / f"out-{source.stem}{suffix}"
        rc, _, err = run(["protect", source, "-k", 3, "-o", out, *strata], capsys)
        assert rc == 0, err
        data = out.read_bytes() if suffix == ".csv" else gzip.decompress(out.read_bytes())
        assert data.startswith(BOM) == marked
        assert data.removeprefix(BOM).startswith(b"town,")
        rc, _, err = run(["audit", source, out, "-k", 3, *strata], capsys)
        assert rc == 0, err


@pytest.mark.parametrize("target", ["file", "-"])
def test_a_byte_order_mark_on_standard_input_is_kept(towns, tmp_path, target):
    """An Excel file piped in (``microagg protect - < excel.csv``) gave a release without
    its byte-order mark (the dialect was chosen before standard input was read); its
    release now starts with one too, written to a file or to standard output, and a
    plain input still gets none."""
    from microagg._csv import BOM

    for data, marked in ((BOM + towns.read_bytes(), True), (towns.read_bytes(), False)):
        out = tmp_path / f"out-{marked}.csv"
        done = subprocess.run(
            [sys.executable, "-m", "microagg", "protect", "-", "-k", "3",
             "-o", str(out) if target == "file" else "-"],
            input=data, capture_output=True, timeout=300)
        assert done.returncode == 0, done.stderr.decode()
        release = out.read_bytes() if target == "file" else done.stdout
        assert release.startswith(BOM) == marked
        assert release.removeprefix(BOM).startswith(b"town,")


def test_without_hard_links_the_name_is_claimed_before_the_rename(tmp_path, monkeypatch):
    """A red team's race: the fallback checked that the name was free, then renamed (which
    replaces on POSIX); a file another run wrote in between was lost. The name is now
    claimed by an exclusive create first: another run cannot take it meanwhile, and one
    that took it first is never replaced."""
    monkeypatch.setattr(_cli_io, "_rename_noreplace", lambda tmp, out: False)

    def no_link(src, dst):
        raise OSError(errno.EINVAL, os.strerror(errno.EINVAL))

    monkeypatch.setattr(os, "link", no_link)
    tmp, out = tmp_path / "t", tmp_path / "out.csv"
    replace = os.replace
    seen = []

    def replace_after_another_run_tries(src, dst):
        try:  # another run, at this very moment, publishing under the same name
            os.close(os.open(dst, os.O_WRONLY | os.O_CREAT | os.O_EXCL))
            seen.append("took it")
        except FileExistsError:
            seen.append("refused")
        replace(src, dst)

    monkeypatch.setattr(os, "replace", replace_after_another_run_tries)
    tmp.write_text("ours\n", encoding="utf-8")
    _cli_io.publish(str(tmp), out)
    assert seen == ["refused"] and out.read_text(encoding="utf-8") == "ours\n"
    theirs = tmp_path / "theirs.csv"  # a file that was there first is kept
    theirs.write_text("theirs\n", encoding="utf-8")
    tmp.write_text("ours\n", encoding="utf-8")
    with pytest.raises(FileExistsError):
        _cli_io.publish(str(tmp), theirs)
    assert theirs.read_text(encoding="utf-8") == "theirs\n"


class _Trickle(io.RawIOBase):
    """A non-blocking, unbuffered standard output: takes at most 1,000 bytes a write, and
    every other write none (``None``: it would block)."""

    def __init__(self):
        self.data, self.calls = bytearray(), 0

    def writable(self):
        return True

    def write(self, b):
        self.calls += 1
        if self.calls % 2:
            return None
        taken = bytes(b[:1000])
        self.data += taken
        return len(taken)


def test_standard_output_gets_every_byte_however_few_a_write_takes(tmp_path, monkeypatch):
    monkeypatch.setattr(time, "sleep", lambda s: None)
    data = b"".join(b"%d,%d\n" % (i, i * i) for i in range(20_000))
    release = tmp_path / "output.csv"
    release.write_bytes(data)

    class Console:  # python -u: a text stream over an unbuffered, non-blocking file
        def __init__(self):
            self.buffer = _Trickle()

        def flush(self):
            pass

    console = Console()
    _cli_io.copy_out(str(release), console)
    assert bytes(console.buffer.data) == data


def test_a_failed_write_to_standard_output_says_the_release_is_partial(tmp_path):
    release = tmp_path / "output.csv"
    release.write_bytes(b"x\n" * 50_000)

    class Full(io.RawIOBase):
        def __init__(self):
            self.taken = 0

        def writable(self):
            return True

        def write(self, b):
            if self.taken >= 65_536:
                raise OSError(errno.ENOSPC, "No space left on device")
            self.taken += len(b)
            return len(b)

    class Console:
        buffer = Full()

        def flush(self):
            pass

    with pytest.raises(OSError, match=r"No space left on device\): 65,536 of its 100,000 "
                                      "bytes went out, so the reader holds part of a release"):
        _cli_io.copy_out(str(release), Console())
    with pytest.raises(OSError, match="standard output is closed"):
        _cli_io.copy_out(str(release), None)


@pytest.mark.parametrize("strata", [[], ["--strata", "town"]])
def test_a_value_holding_a_carriage_return_is_quoted(tmp_path, capsys, strata):
    """With ``\\n`` line ends, Python's CSV writer leaves a value holding a lone ``\\r``
    unquoted, and a reader splits its row there (the audit refused the release: twice the
    rows). Such a release quotes every field."""
    rows = "".join(f'{"AB"[i % 2]},{20 + i},"x\ry{i}"\n' for i in range(12))
    source = tmp_path / "memo.csv"
    source.write_bytes(("town,age,memo\n" + rows).encode())
    out = tmp_path / "out.csv"
    rc, _, err = run(["protect", source, "-k", 3, "-o", out, "--columns", "age", "--keep-rest",
                      *strata], capsys)
    assert rc == 0, err
    back = pd.read_csv(out, dtype=str, keep_default_na=False)
    assert sorted(back["memo"]) == sorted(f"x\ry{i}" for i in range(12))
    assert run(["audit", source, out, "-k", 3, "--columns", "age", "--keep-rest", *strata],
               capsys)[0] == 0
    plain = tmp_path / "plain.csv"  # (and a release without one is quoted as before)
    plain.write_bytes(source.read_bytes().replace(b"\r", b"-"))
    assert run(["protect", plain, "-k", 3, "-o", tmp_path / "p.csv", "--columns", "age",
                "--keep-rest", *strata], capsys)[0] == 0
    assert b'"' not in (tmp_path / "p.csv").read_bytes()
