"""The reference data files: fetching, verifying, caching (issue "Reliability", points 6 and 7,
and the data fetcher).

No test reaches the internet: the files are served by an HTTP server on 127.0.0.1 started here
(``MICROAGG_DATA_URL`` points at it), the cache is a temporary folder (``MICROAGG_CACHE``), and
every other test runs with ``MICROAGG_OFFLINE=1`` (``tests/conftest.py``).
"""

from __future__ import annotations

import functools
import gc
import hashlib
import http.server
import os
import pickle
import threading
import time
import warnings
from pathlib import Path

import pytest

from microagg import _datafiles, datasets
from microagg._cli import main

REAL = Path(datasets.data_dir())
HAVE_REAL = all((REAL / f).is_file() for f in datasets.FILES)
needs_data = pytest.mark.skipif(not HAVE_REAL, reason="needs the reference data in data/raw")
TINY = "tiny.data"
TINY_BYTES = b"1,2,3\n4,5,6\n"


class _Local:
    """An HTTP server on 127.0.0.1 (random port) answering with ``handler``, in a thread."""

    def __init__(self, handler) -> None:
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/data"
        threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


class _Server(_Local):
    """A static file server on 127.0.0.1 (random port), counting requests."""

    def __init__(self, folder: Path) -> None:
        self.requests: list[str] = []
        outer = self

        class Handler(http.server.SimpleHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                outer.requests.append(self.path)

        super().__init__(functools.partial(Handler, directory=str(folder)))


@pytest.fixture()
def served(tmp_path, monkeypatch):
    """Serve ``tmp_path/www/data``; downloads allowed, an empty data folder, a fresh cache."""
    www = tmp_path / "www" / "data"
    www.mkdir(parents=True)
    empty, cache = tmp_path / "empty", tmp_path / "cache"
    empty.mkdir()
    server = _Server(tmp_path / "www")
    monkeypatch.setenv("MICROAGG_DATA", str(empty))
    monkeypatch.setenv("MICROAGG_CACHE", str(cache))
    monkeypatch.setenv("MICROAGG_DATA_URL", server.url)
    monkeypatch.delenv("MICROAGG_OFFLINE", raising=False)
    monkeypatch.setattr(datasets, "_PARSED", {})
    server.www, server.cache, server.empty = www, cache, empty
    yield server
    server.close()


@pytest.fixture()
def tiny(monkeypatch):
    """A small extra entry in FILES, so the fetch mechanics need no real data."""
    sha = hashlib.sha256(TINY_BYTES).hexdigest()
    monkeypatch.setitem(_datafiles.FILES, TINY, {"sha256": sha, "size": str(len(TINY_BYTES)),
                                                 "source": "a test file",
                                                 "url": "https://example.invalid/tiny.data"})
    return sha


# -- the fetcher ---------------------------------------------------------------------------------

@needs_data
def test_load_fetches_a_missing_file_once_and_checks_it(served):
    (served.www / "Tarragona.rda").write_bytes((REAL / "Tarragona.rda").read_bytes())
    df = datasets.load("tarragona")
    assert df.shape == (834, 13)
    cached = served.cache / "Tarragona.rda"
    assert _datafiles.sha256_of(cached) == datasets.FILES["Tarragona.rda"]["sha256"]
    assert served.requests == ["/data/Tarragona.rda"]
    assert datasets.load("tarragona").equals(df)
    assert served.requests == ["/data/Tarragona.rda"]  # served from the cache now
    assert not any(served.empty.iterdir())  # nothing written into the data folder


def test_fetch_downloads_into_the_cache(served, tiny):
    (served.www / TINY).write_bytes(TINY_BYTES)
    paths = datasets.fetch([TINY])
    assert paths[TINY] == served.cache / TINY
    assert paths[TINY].read_bytes() == TINY_BYTES


def test_a_checksum_mismatch_is_refused_and_nothing_is_cached(served, tiny):
    (served.www / TINY).write_bytes(b"1,2,3\n4,5,7\n")
    with pytest.raises(datasets.DataNotFoundError) as info:
        datasets.fetch([TINY])
    msg = str(info.value)
    assert TINY in msg and f"{served.url}/{TINY}" in msg and "SHA-256" in msg
    assert "MICROAGG_DATA" in msg  # the manual route
    assert not served.cache.exists() or not any(served.cache.iterdir())


def test_offline_forbids_any_download(served, tiny, monkeypatch):
    (served.www / TINY).write_bytes(TINY_BYTES)
    monkeypatch.setenv("MICROAGG_OFFLINE", "1")
    with pytest.raises(datasets.DataNotFoundError) as info:
        datasets.fetch([TINY])
    msg = str(info.value)
    assert TINY in msg and f"{served.url}/{TINY}" in msg and "MICROAGG_OFFLINE" in msg
    assert served.requests == []


def test_an_unreachable_server_is_a_clear_error(served, tiny, monkeypatch):
    monkeypatch.setenv("MICROAGG_DATA_URL", "http://127.0.0.1:9/nowhere")
    with pytest.raises(datasets.DataNotFoundError) as info:
        datasets.fetch([TINY])
    msg = str(info.value)
    assert "could not download" in msg and "http://127.0.0.1:9/nowhere/tiny.data" in msg
    assert "\n" not in msg


def test_a_missing_file_on_the_server(served, tiny):
    with pytest.raises(datasets.DataNotFoundError, match="404"):
        datasets.fetch([TINY])


def test_a_download_leaves_no_connection_open(served, tiny):
    """Each download's connection is closed when the file is in (or refused): pooch leaves
    the response of its streamed request open, and a service fetching in a long-lived
    process would hold the socket until garbage collection (a ResourceWarning)."""
    gc.collect()  # (what earlier tests left is not this test's)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always", ResourceWarning)
        try:  # (not pytest.raises: its record of the error would keep the response alive)
            datasets.fetch([TINY])  # (not on the server yet)
        except datasets.DataNotFoundError as err:
            assert "404" in str(err)
        else:
            pytest.fail("a file missing on the server was not refused")
        (served.www / TINY).write_bytes(TINY_BYTES)
        assert datasets.fetch([TINY])[TINY].read_bytes() == TINY_BYTES
        gc.collect()
    assert [str(w.message) for w in seen if w.category is ResourceWarning] == []


def test_the_data_folder_comes_before_the_cache(served, tiny):
    (served.empty / TINY).write_bytes(TINY_BYTES)
    assert datasets.fetch([TINY])[TINY] == served.empty / TINY
    assert served.requests == []


def test_errors_outside_a_checkout_name_no_make_and_no_site_packages(tmp_path, monkeypatch):
    monkeypatch.setattr(_datafiles, "checkout_root", lambda: None)
    monkeypatch.delenv("MICROAGG_DATA", raising=False)
    monkeypatch.chdir(tmp_path)
    assert datasets.data_dir() == datasets.cache_dir()
    with pytest.raises(datasets.DataNotFoundError) as info:
        datasets.load("census")
    msg = str(info.value)
    assert "CASCrefmicrodata.rda" in msg and datasets.FILES["CASCrefmicrodata.rda"]["url"] in msg
    assert "make data" not in msg and "site-packages" not in msg and "MICROAGG_DATA" in msg


def test_cli_data_download(served, tiny, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(_datafiles, "FILES", {TINY: _datafiles.FILES[TINY]})
    (served.www / TINY).write_bytes(TINY_BYTES)
    assert main(["data", "--download"]) == 0
    assert (served.cache / TINY).read_bytes() == TINY_BYTES
    dest = tmp_path / "dest"
    assert main(["data", "--download", "--dest", str(dest)]) == 0
    assert (dest / TINY).read_bytes() == TINY_BYTES
    assert "verified" in capsys.readouterr().out


# -- 6. no code from a cache -----------------------------------------------------------------------

def test_no_pickle_in_the_package():
    import re

    use = re.compile(r"import pickle|read_pickle|to_pickle|pickle\.loads?\(|allow_pickle=True")
    sources = Path(datasets.__file__).parent.rglob("*.py")
    assert not [p.name for p in sources if use.search(p.read_text())]


class _Planted:
    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (Path.touch, (self.marker,))


@needs_data
def test_a_planted_pickle_is_never_run_and_nothing_is_written(tmp_path, monkeypatch):
    folder = tmp_path / "data"
    (folder / ".cache").mkdir(parents=True)
    (folder / "EIA.rda").write_bytes((REAL / "EIA.rda").read_bytes())
    marker = tmp_path / "pwned"
    (folder / ".cache" / "EIA.rda.pkl").write_bytes(pickle.dumps(_Planted(marker)))
    future = (folder / "EIA.rda").stat().st_mtime_ns + 10**9
    os.utime(folder / ".cache" / "EIA.rda.pkl", ns=(future, future))
    before = sorted(p.relative_to(folder) for p in folder.rglob("*"))
    monkeypatch.setenv("MICROAGG_DATA", str(folder))
    monkeypatch.setattr(datasets, "_PARSED", {})
    assert datasets.load("eia").shape == (4092, 11)
    assert not marker.exists(), "load() ran code from a pickle"
    assert sorted(p.relative_to(folder) for p in folder.rglob("*")) == before


# -- 7. verification -----------------------------------------------------------------------------

@needs_data
def test_a_same_size_edit_with_the_old_mtime_is_caught(tmp_path, monkeypatch):
    folder = tmp_path / "data"
    folder.mkdir()
    path = folder / "Tarragona.rda"
    path.write_bytes((REAL / "Tarragona.rda").read_bytes())
    monkeypatch.setenv("MICROAGG_DATA", str(folder))
    datasets.load("tarragona")
    st = path.stat()
    data = bytearray(path.read_bytes())
    data[-10] ^= 0xFF
    path.write_bytes(bytes(data))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    with pytest.raises(datasets.DataNotFoundError, match="SHA-256"):
        datasets.load("tarragona")


def test_data_command_verifies_before_copying(tmp_path, tiny, capsys, monkeypatch):
    monkeypatch.setattr(_datafiles, "FILES", {TINY: _datafiles.FILES[TINY]})
    source, dest = tmp_path / "source", tmp_path / "dest"
    source.mkdir()
    (source / TINY).write_bytes(b"corrupted\n")
    assert main(["data", "--source", str(source), "--dest", str(dest)]) == 2
    assert "SHA-256" in capsys.readouterr().err
    assert not dest.exists() or not any(dest.iterdir())  # nothing unverified, no temporary
    (source / TINY).write_bytes(TINY_BYTES)
    assert main(["data", "--source", str(source), "--dest", str(dest)]) == 0
    assert (dest / TINY).read_bytes() == TINY_BYTES


@needs_data
def test_corrupted_source_is_not_copied_and_info_reports_checksums(tmp_path, capsys,
                                                                   monkeypatch):
    source, dest = tmp_path / "source", tmp_path / "dest"
    source.mkdir()
    for fname in datasets.FILES:
        (source / fname).write_bytes((REAL / fname).read_bytes())
    (source / "EIA.rda").write_bytes(b"x" * (REAL / "EIA.rda").stat().st_size)
    assert main(["data", "--source", str(source), "--dest", str(dest)]) == 2
    assert not (dest / "EIA.rda").exists()
    (dest / "EIA.rda").write_bytes(b"x" * 10)  # a bad file put there by hand
    monkeypatch.setenv("MICROAGG_DATA", str(dest))
    capsys.readouterr()
    assert main(["info"]) == 0
    out = capsys.readouterr().out.splitlines()
    lines = {f: next(ln for ln in out if f" {f} " in ln) for f in datasets.FILES}
    assert "WRONG SHA-256" in lines["EIA.rda"]
    assert lines["CASCrefmicrodata.rda"].split()[0] == "ok"
    assert "missing" in lines["water-treatment.data"] or "ok" in lines["water-treatment.data"]


# -- the fetcher's audit: each failure says what went wrong and how to fix it ----------------------

@pytest.mark.parametrize("base", ["127.0.0.1:{port}/data", "ftp://127.0.0.1:{port}/data",
                                  "file:///tmp/data"])
def test_a_data_url_that_is_not_http_is_named_as_such(served, tiny, monkeypatch, base):
    """A mirror's address without ``http://`` (or another scheme): the error says that the
    variable is wrong (before: "downloaded ... does not have the expected SHA-256, so it
    was not kept", though nothing was downloaded)."""
    (served.www / TINY).write_bytes(TINY_BYTES)
    port = served.url.split(":")[2].split("/")[0]
    monkeypatch.setenv("MICROAGG_DATA_URL", base.format(port=port))
    with pytest.raises(datasets.DataNotFoundError) as info:
        datasets.fetch([TINY])
    msg = str(info.value)
    assert "MICROAGG_DATA_URL" in msg and "http" in msg and TINY in msg
    assert "SHA-256" not in msg and "downloaded from" not in msg
    assert served.requests == []
    assert not served.cache.exists() or not any(served.cache.iterdir())


class _Quiet(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):  # quiet
        pass


class _EndlessServer(_Local):
    """Answers every GET with 200 and a body with no length, ``limit`` bytes long at most
    (a mirror serving something else, say a big archive), counting the bytes sent."""

    def __init__(self, limit: int) -> None:
        self.sent = 0
        outer = self

        class Handler(_Quiet):
            def do_GET(self):
                self.send_response(200)
                self.end_headers()
                block = b"x" * 65536
                try:
                    while outer.sent < limit:
                        self.wfile.write(block)
                        outer.sent += len(block)
                except OSError:  # the client hung up
                    pass
                self.close_connection = True

        super().__init__(Handler)


def test_a_body_longer_than_the_file_is_stopped_at_once(served, tiny, monkeypatch):
    """The download stops as soon as the body is longer than the reference file, so a wrong
    mirror (or a server streaming forever) cannot fill the disk (before: every byte was
    written into the cache, then refused by its checksum)."""
    endless = _EndlessServer(limit=64 << 20)
    try:
        monkeypatch.setenv("MICROAGG_DATA_URL", endless.url)
        with pytest.raises(datasets.DataNotFoundError) as info:
            datasets.fetch([TINY])
    finally:
        endless.close()
    msg = str(info.value)
    assert TINY in msg and f"{endless.url}/{TINY}" in msg and "bytes" in msg
    assert endless.sent < 4 << 20, f"{endless.sent} bytes sent for a {len(TINY_BYTES)}-byte file"
    assert not served.cache.exists() or not any(served.cache.iterdir())


class _TricklingServer(_Local):
    """Sends ``body`` with its true length, one byte every ``pause`` seconds: never quiet
    long enough for the read timeout, so only an overall deadline stops it."""

    def __init__(self, body: bytes, pause: float) -> None:
        self.sent = 0
        outer = self

        class Handler(_Quiet):
            def do_GET(self):
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                try:
                    for i in range(len(body)):
                        self.wfile.write(body[i:i + 1])
                        self.wfile.flush()
                        outer.sent += 1
                        time.sleep(pause)
                except OSError:  # the client hung up
                    pass

        super().__init__(Handler)


def test_a_trickling_server_is_stopped_at_the_overall_deadline(served, tiny, monkeypatch):
    """A server that sends the right file a byte at a time, never quiet for the read timeout,
    is hung up once the download has taken longer than ``deadline(size)`` (before: the
    download waited for it however long it took)."""
    monkeypatch.setattr(_datafiles, "TIMEOUT", 1)  # deadline: 1 s + 12 bytes / 1000 per s
    trickle = _TricklingServer(TINY_BYTES, pause=0.5)  # 6 s for the whole file
    try:
        monkeypatch.setenv("MICROAGG_DATA_URL", trickle.url)
        start = time.monotonic()
        with pytest.raises(datasets.DataNotFoundError) as info:
            datasets.fetch([TINY])
        took = time.monotonic() - start
    finally:
        trickle.close()
    msg = str(info.value)
    assert "too slow" in msg and TINY in msg and f"{trickle.url}/{TINY}" in msg
    assert "nothing was kept" in msg
    assert took < 4, f"stopped after {took:.1f} s; the deadline was about 1 s"
    assert trickle.sent < len(TINY_BYTES)
    assert not served.cache.exists() or not any(served.cache.iterdir())


def test_a_slow_but_steady_download_within_the_deadline_is_kept(served, tiny, monkeypatch):
    """The deadline stops only what is too slow: the same server, fast enough, delivers."""
    monkeypatch.setattr(_datafiles, "TIMEOUT", 3)
    trickle = _TricklingServer(TINY_BYTES, pause=0.05)  # 0.6 s for the whole file
    try:
        monkeypatch.setenv("MICROAGG_DATA_URL", trickle.url)
        paths = datasets.fetch([TINY])
    finally:
        trickle.close()
    assert paths[TINY].read_bytes() == TINY_BYTES


@pytest.mark.skipif(os.name != "posix", reason="POSIX permissions")
def test_a_downloaded_file_is_readable_as_any_new_file(served, tiny):
    """pooch writes into a private temporary file (mode 0600), which it then moves into
    the cache: a cache shared by a team was unreadable to all but the first user. The
    file now has the mode of any new file (0666 less the umask)."""
    (served.www / TINY).write_bytes(TINY_BYTES)
    mask = os.umask(0o022)
    try:
        path = datasets.fetch([TINY])[TINY]
    finally:
        os.umask(mask)
    assert path.read_bytes() == TINY_BYTES
    assert path.stat().st_mode & 0o777 == 0o644


def test_a_cache_that_is_a_file_names_microagg_cache(served, tiny, tmp_path, monkeypatch):
    """``MICROAGG_CACHE`` naming a file: the error says so and names the variable (before:
    "could not download ... (NotADirectoryError: ... tmpXXXX)")."""
    (served.www / TINY).write_bytes(TINY_BYTES)
    afile = tmp_path / "afile"
    afile.write_text("mine\n")
    monkeypatch.setenv("MICROAGG_CACHE", str(afile))
    with pytest.raises(datasets.DataNotFoundError) as info:
        datasets.fetch([TINY])
    msg = str(info.value)
    assert TINY in msg and str(afile) in msg and "MICROAGG_CACHE" in msg
    assert "not a folder" in msg and "could not download" not in msg
    assert afile.read_text() == "mine\n"


def test_a_read_only_cache_names_microagg_cache(served, tiny, monkeypatch):
    """A cache folder that cannot be written (read-only file system, no permission, full):
    the error names the folder and the fix, ``MICROAGG_CACHE`` (before: "could not
    download ... (OSError: [Errno 30] ...)", as if the network had failed)."""
    import errno
    import tempfile

    (served.www / TINY).write_bytes(TINY_BYTES)
    served.cache.mkdir()
    real = tempfile.NamedTemporaryFile

    def read_only(*args, dir=None, **kwargs):
        if dir is not None and str(dir).startswith(str(served.cache)):
            raise OSError(errno.EROFS, "Read-only file system", str(dir))
        return real(*args, dir=dir, **kwargs)

    monkeypatch.setattr(tempfile, "NamedTemporaryFile", read_only)
    with pytest.raises(datasets.DataNotFoundError) as info:
        datasets.fetch([TINY])
    msg = str(info.value)
    assert TINY in msg and str(served.cache) in msg and "MICROAGG_CACHE" in msg
    assert "Read-only file system" in msg and "could not download" not in msg
    assert "Errno" not in msg


def test_download_dest_repairs_a_wrong_file_in_the_data_folder(served, tiny, tmp_path, capsys,
                                                               monkeypatch):
    """``microagg data --download --dest FOLDER`` replaces a wrong file there, also when
    FOLDER is the data folder (``$MICROAGG_DATA``, the default ``--dest``), and a wrong file
    in the data folder does not stop a download into another folder (before: both refused,
    "... has SHA-256 ..., is not used", so the documented repair could not repair)."""
    monkeypatch.setattr(_datafiles, "FILES", {TINY: _datafiles.FILES[TINY]})
    (served.www / TINY).write_bytes(TINY_BYTES)
    (served.empty / TINY).write_bytes(b"1,2,3\n")  # truncated by hand, say
    other = tmp_path / "other"
    assert main(["data", "--download", "--dest", str(other)]) == 0, capsys.readouterr().err
    assert (other / TINY).read_bytes() == TINY_BYTES
    assert main(["data", "--download", "--dest", str(served.empty)]) == 0, \
        capsys.readouterr().err
    assert (served.empty / TINY).read_bytes() == TINY_BYTES
    (served.empty / TINY).write_bytes(b"1,2,3\n")
    assert main(["data", "--download"]) == 2  # into the cache only: the wrong file shadows it
    err = capsys.readouterr().err
    assert f"--download --dest {served.empty}" in err and "SHA-256" in err


def test_a_different_file_in_dest_is_kept_aside_not_lost(served, tiny, tmp_path, capsys,
                                                          monkeypatch):
    """A file of ``--dest`` with the reference file's name but other content is replaced by
    the verified file, and kept beside it under a name with its own checksum, with a warning
    (before: overwritten without a word)."""
    monkeypatch.setattr(_datafiles, "FILES", {TINY: _datafiles.FILES[TINY]})
    (served.www / TINY).write_bytes(TINY_BYTES)
    dest = tmp_path / "dest"
    dest.mkdir()
    mine = b"my own edited copy\n"
    (dest / TINY).write_bytes(mine)
    for _ in range(2):  # a second run has nothing to replace, and keeps the first's copy
        assert main(["data", "--download", "--dest", str(dest)]) == 0
        assert (dest / TINY).read_bytes() == TINY_BYTES
        aside = dest / f"{TINY}.replaced-{hashlib.sha256(mine).hexdigest()[:12]}"
        assert aside.read_bytes() == mine
        assert sorted(p.name for p in dest.iterdir()) == sorted([TINY, aside.name])
    err = capsys.readouterr().err
    assert err.count("warning") == 1 and str(aside) in err and TINY in err


def test_the_manual_route_names_the_folder_that_is_read(served, tiny):
    """With ``$MICROAGG_DATA`` set, the error says to put the file there: not in the
    checkout's data/raw, which is then not read (before: "put it in .../data/raw (in this
    checkout `make data` copies it ...)")."""
    with pytest.raises(datasets.DataNotFoundError) as info:
        datasets.fetch([TINY])  # 404
    msg = str(info.value)
    assert f"put it in {served.empty}" in msg
    assert "make data" not in msg and "data/raw" not in msg


def test_a_network_failure_names_the_proxy_and_the_copy_from_a_folder(served, tiny,
                                                                       monkeypatch):
    """Connection refused: the message says where a proxy is set and how to copy the files
    from a folder instead (before: only requests' text and the manual route)."""
    monkeypatch.setenv("MICROAGG_DATA_URL", "http://127.0.0.1:9/nowhere")
    with pytest.raises(datasets.DataNotFoundError) as info:
        datasets.fetch([TINY])
    msg = str(info.value)
    assert "HTTPS_PROXY" in msg and "microagg data --source" in msg


def test_data_source_or_dest_that_cannot_be_used(served, tiny, tmp_path, capsys, monkeypatch):
    """A ``--source`` that does not exist is named as such and no empty ``--dest`` is made
    (before: "tiny.data is in neither SOURCE nor DEST", and DEST created); a ``--dest``
    under a file, and a broken link in ``--source``, are named with the fix (before:
    "[Errno 20] Not a directory", "is in neither")."""
    monkeypatch.setattr(_datafiles, "FILES", {TINY: _datafiles.FILES[TINY]})
    missing, dest = tmp_path / "typo", tmp_path / "dest"
    assert main(["data", "--source", str(missing), "--dest", str(dest)]) == 2
    err = capsys.readouterr().err
    assert f"the source folder {missing} does not exist" in err and "--download" in err
    assert not dest.exists()
    afile = tmp_path / "afile"
    afile.write_text("x")
    source = tmp_path / "source"
    source.mkdir()
    (source / TINY).write_bytes(TINY_BYTES)
    assert main(["data", "--source", str(source), "--dest", str(afile / "sub")]) == 2
    err = capsys.readouterr().err
    assert str(afile / "sub") in err and "--dest" in err and "Errno" not in err
    (source / TINY).unlink()
    (source / TINY).symlink_to(tmp_path / "gone")
    assert main(["data", "--source", str(source), "--dest", str(dest)]) == 2
    err = capsys.readouterr().err
    assert "broken" in err and str(tmp_path / "gone") in err


def test_data_source_names_every_file_it_lacks_in_one_run(tiny, tmp_path, capsys, monkeypatch):
    """A ``--source`` lacking several files named the first one only and stopped there, so
    the files after it were not copied and each run found one more missing; one run now
    copies every file it can and names every one it cannot (missing, not the reference
    file), each with its fix."""
    other, wrong = "other.data", "wrong.data"
    entry = _datafiles.FILES[TINY]
    monkeypatch.setattr(_datafiles, "FILES", {other: entry, TINY: entry, wrong: entry})
    source, dest = tmp_path / "source", tmp_path / "dest"
    source.mkdir()
    (source / TINY).write_bytes(TINY_BYTES)
    (source / wrong).write_bytes(b"not it\n")
    assert main(["data", "--source", str(source), "--dest", str(dest)]) == 2
    err = capsys.readouterr().err
    assert "2 reference files could not be copied" in err, err
    assert f"{other} is in neither" in err and f"{source / wrong} has SHA-256" in err
    assert err.count("To get it by hand") == 2
    assert (dest / TINY).read_bytes() == TINY_BYTES  # (listed after the missing one)
    assert sorted(p.name for p in dest.iterdir()) == [TINY]
