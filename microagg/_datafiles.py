"""The reference data files: where they are, how they are checked, how they are fetched.

Each of the four third-party files is identified by its SHA-256 (:data:`FILES`) and
is looked for, in this order:

1. the folder named by ``$MICROAGG_DATA`` (if set), else the ``data/raw`` folder of
   the book's checkout (found by walking up from the working folder, then from
   this file);
2. the user's cache folder (``$MICROAGG_CACHE``, else the platform's cache folder,
   e.g. ``~/.cache/microagg``), where a missing file is downloaded on first use
   from its original public source with pooch (base URL overridable with
   ``$MICROAGG_DATA_URL``; ``MICROAGG_OFFLINE=1`` forbids any download).

Every file is re-hashed each time it is used (they are small): a file whose
checksum differs is refused, never read. Nothing is written into the data folders
by loading, and no parsed copy is kept on disk (so nothing executable, such as a
pickle, is ever read back).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import socket
import tempfile
import threading
import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ._env import flag

__all__ = ["FILES", "DataNotFoundError", "data_dir", "cache_dir", "checkout_root", "locate",
           "fetch_files", "install_files", "file_status", "file_url", "sha256_of"]

ENV_DATA, ENV_CACHE = "MICROAGG_DATA", "MICROAGG_CACHE"
ENV_URL, ENV_OFFLINE = "MICROAGG_DATA_URL", "MICROAGG_OFFLINE"

_SDCMICRO = "https://raw.githubusercontent.com/sdcTools/sdcMicro/master/data/"
_UCI = "https://archive.ics.uci.edu/ml/machine-learning-databases/water-treatment/"

#: Raw files: SHA-256, size in bytes (a download is stopped past it), where they come from,
#: and the URL they are downloaded from.
FILES: dict[str, dict[str, str]] = {
    "CASCrefmicrodata.rda": {
        "sha256": "147d0d7fa823a384e36c2297174560e32cdbe6e39803f22f797610fb1a2993d6",
        "size": "23364",
        "source": "R package sdcMicro, file data/CASCrefmicrodata.rda (GPL-2+)",
        "url": _SDCMICRO + "CASCrefmicrodata.rda",
    },
    "EIA.rda": {
        "sha256": "8b61ceb0d1fa01d024bd62171655601abed62ff70a5e9e6fd550c43a1f76695e",
        "size": "84252",
        "source": "R package sdcMicro, file data/EIA.rda (GPL-2+)",
        "url": _SDCMICRO + "EIA.rda",
    },
    "Tarragona.rda": {
        "sha256": "e83def0648be5e47eaf202b4dd60dd6981591d0858fd249817b9a2cc97cf2aef",
        "size": "23860",
        "source": "R package sdcMicro, file data/Tarragona.rda (GPL-2+)",
        "url": _SDCMICRO + "Tarragona.rda",
    },
    "water-treatment.data": {
        "sha256": "8b97cf2244db2c8317d9d165a7a634cfc4cdfc7281eeed08125eca349237bcd0",
        "size": "92480",
        "source": "UCI Machine Learning Repository, 'Water Treatment Plant' (Bejar, 1993)",
        "url": _UCI + "water-treatment.data",
    },
}


class DataNotFoundError(FileNotFoundError):
    """A reference data file is missing, cannot be fetched, or is not the expected file.

    Book: :ref:`chap-foundations`.

    Examples
    --------
    Offline, with an empty folder and an empty cache, the file cannot be found:

    >>> import os, tempfile
    >>> from unittest import mock
    >>> from microagg import datasets
    >>> with tempfile.TemporaryDirectory() as empty, mock.patch.dict(
    ...         os.environ, {"MICROAGG_OFFLINE": "1", "MICROAGG_CACHE": empty}):
    ...     try:
    ...         datasets.load("census", folder=empty)
    ...     except datasets.DataNotFoundError as err:
    ...         print("not found:", "CASCrefmicrodata.rda" in str(err))
    not found: True
    """


# --------------------------------------------------------------------------------------
# places
# --------------------------------------------------------------------------------------

def checkout_root() -> Path | None:
    """The book's checkout (the folder holding ``_toc.yml`` and ``microagg/``), if any."""
    for start in (Path.cwd(), Path(__file__).resolve().parent):
        for folder in (start, *start.parents):
            if (folder / "_toc.yml").is_file() and (folder / "microagg").is_dir():
                return folder
    return None


def _local_dir() -> Path | None:
    """``$MICROAGG_DATA``, else the checkout's ``data/raw``, else a ``data/raw`` holding a file."""
    env = os.environ.get(ENV_DATA)
    if env:
        folder = Path(env).expanduser()
        if folder.exists() and not folder.is_dir():
            raise NotADirectoryError(
                f"{ENV_DATA}={env} names a file, not a folder: set {ENV_DATA} to the folder "
                "holding the reference data files (or unset it)")
        return folder
    root = checkout_root()
    if root is not None:
        return root / "data" / "raw"
    for folder in (Path.cwd(), *Path.cwd().parents):
        candidate = folder / "data" / "raw"
        if candidate.is_dir() and any((candidate / f).exists() for f in FILES):
            return candidate
    return None


def cache_dir() -> Path:
    """The user's cache folder for downloaded files (``$MICROAGG_CACHE`` overrides it)."""
    env = os.environ.get(ENV_CACHE)
    if env:
        return Path(env).expanduser()
    import pooch

    return Path(pooch.os_cache("microagg"))


def data_dir() -> Path:
    """Folder looked in first: ``$MICROAGG_DATA``, the checkout's ``data/raw``, else the cache."""
    local = _local_dir()
    return local if local is not None else cache_dir()


def file_url(fname: str) -> str:
    """The URL ``fname`` is downloaded from (``$MICROAGG_DATA_URL`` + name, if set)."""
    base = os.environ.get(ENV_URL)
    return base.rstrip("/") + "/" + fname if base else FILES[fname]["url"]


def _offline() -> bool:
    return flag(ENV_OFFLINE)


def manual_route(fname: str) -> str:
    """How to obtain ``fname`` by hand (no ``make data`` outside the checkout)."""
    text = f"To get it by hand, download {file_url(fname)} ({FILES[fname]['source']}) and "
    env = os.environ.get(ENV_DATA)
    if env:  # the folder that is read (the checkout's data/raw is not, then)
        folder = Path(env).expanduser()
        return text + (f"put it in {folder}, the folder named by {ENV_DATA} (`microagg data "
                       f"--source FOLDER --dest {folder}` copies it there from the folder "
                       "FOLDER holding it and checks it). See data/README.md.")
    root = checkout_root()
    if root is not None:
        return text + (f"put it in {root / 'data' / 'raw'} (in this checkout `make data` "
                       "copies it from ../shared/data/raw and checks it), or put it in a folder "
                       f"named by {ENV_DATA}. See data/README.md.")
    return text + (f"put it in a folder named by the environment variable {ENV_DATA} "
                   "(`microagg data --source FOLDER --dest FOLDER` checks it). Where the "
                   "sources can be reached, `microagg data --download` fetches every "
                   "reference file at once.")


# --------------------------------------------------------------------------------------
# checking, finding and fetching
# --------------------------------------------------------------------------------------

def sha256_of(path: Path) -> str:
    """SHA-256 of a file, hex."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _verified(path: Path, fname: str, replace: bool = False) -> str:
    """Check that ``path`` is the reference file ``fname``; return its SHA-256.

    ``replace``: the message says how to replace it (a file of the data folder)."""
    fix = (f"`microagg data --download --dest {path.parent}` (or `--source FOLDER --dest "
           f"{path.parent}`) replaces it. " if replace else "")
    if not path.is_file():
        raise DataNotFoundError(f"{path} is not a file (a folder?); expected the reference "
                                f"file {fname}. " + manual_route(fname))
    got, expected = sha256_of(path), FILES[fname]["sha256"]
    if got != expected:
        raise DataNotFoundError(
            f"{path} has SHA-256 {got}, expected {expected}: it is not the reference file "
            "(corrupted or a different version) and is not used. " + fix + manual_route(fname))
    return got


def locate(fname: str, folder: str | os.PathLike[str] | None = None) -> tuple[Path, str]:
    """The verified path of ``fname`` and its SHA-256, downloading it if need be.

    ``folder`` (default: ``$MICROAGG_DATA`` or the checkout's ``data/raw``) first,
    then the user's cache folder; a file found but with another checksum is an error.
    """
    local = Path(folder) if folder is not None else _local_dir()
    if local is not None and (local / fname).exists():
        return local / fname, _verified(local / fname, fname, replace=True)
    looked = f"{local} or the cache {cache_dir()}" if local is not None else f"{cache_dir()}"
    return _cached(fname, looked), FILES[fname]["sha256"]


def _cached(fname: str, looked: str) -> Path:
    """The verified copy of ``fname`` in the cache, downloaded if need be (``looked``: where
    it was looked for, for the message)."""
    cached = cache_dir() / fname
    if _offline():
        if cached.exists():
            _verified(cached, fname)
            return cached
        raise DataNotFoundError(
            f"reference data file {fname} not found in {looked}, and {ENV_OFFLINE} forbids "
            f"downloading it from {file_url(fname)}. " + manual_route(fname))
    try:
        return _download(fname)
    except DataNotFoundError as err:
        raise DataNotFoundError(f"reference data file {fname} not found in {looked}; {err}"
                                ) from None


def _check_scheme(url: str) -> None:
    """Refuse, before any request, an address that is not http(s) (``$MICROAGG_DATA_URL``)."""
    from urllib.parse import urlsplit

    if urlsplit(url).scheme.lower() not in ("http", "https"):
        raise DataNotFoundError(
            f"{ENV_URL}={os.environ.get(ENV_URL, '')!r} is not an http:// or https:// address, "
            f"so {url} cannot be downloaded: set {ENV_URL} to the base URL of a mirror "
            "(e.g. https://mirror.example/data/), or unset it to download from the sources")


#: Seconds without a byte from the server before a download gives up.
TIMEOUT = 60
#: Bytes per second a download must average: it gives up after ``TIMEOUT`` seconds plus one
#: second per ``MIN_RATE`` bytes of the file, so a server that trickles a byte now and then
#: (never quiet for ``TIMEOUT`` seconds) cannot hold it for hours (:func:`deadline`).
MIN_RATE = 1000


def deadline(size: int) -> float:
    """Seconds a download of ``size`` bytes may take in all before it gives up.

    Examples
    --------
    >>> deadline(90_000)  # 60 s without a byte at most, and 1,000 bytes a second on average
    150.0
    """
    return TIMEOUT + size / MIN_RATE


class _TooLong(Exception):
    def __init__(self, limit: int) -> None:
        super().__init__(f"more than {limit} bytes")
        self.limit = limit


class _TooSlow(Exception):
    def __init__(self, seconds: float, written: int) -> None:
        super().__init__(f"not done after {seconds:.0f} s")
        self.seconds, self.written = seconds, written


class _Bounded:
    """pooch's HTTP downloader, stopped as soon as the body is longer than the file
    (else a wrong mirror, or a server streaming forever, fills the disk before the
    checksum refuses it) or once the download has taken longer than :func:`deadline`
    (a watchdog hangs up the connection); the file it writes gets the permissions of any
    new file (pooch's temporary file is private)."""

    def __init__(self, fname: str) -> None:
        self.limit = int(FILES[fname].get("size", 1 << 30))
        self.seconds = deadline(self.limit)
        self.written = 0
        self.expired = threading.Event()
        self.response: Any = None

    def __call__(self, url: str, output_file: str, pooch_: object = None) -> None:
        import pooch

        watchdog = threading.Timer(self.seconds, self._hang_up)
        watchdog.daemon = True
        with open(output_file, "w+b") as fh:
            self.fh = fh
            watchdog.start()
            try:
                pooch.HTTPDownloader(timeout=TIMEOUT, hooks={"response": self._seen})(
                    url, self, pooch_)
            except Exception:
                if self.expired.is_set():  # the hang-up's error, whatever requests calls it
                    raise _TooSlow(self.seconds, self.written) from None
                raise
            finally:
                watchdog.cancel()
                if self.response is not None:  # (pooch leaves it open: its socket too)
                    self.response.close()
            if self.expired.is_set():  # hung up between two reads: the body is cut short
                raise _TooSlow(self.seconds, self.written)
        _as_new_file(output_file)

    def _seen(self, response: Any, *args: Any, **kwargs: Any) -> Any:
        """requests' response hook: the response being read, for the watchdog."""
        self.response = response
        if self.expired.is_set():
            self._hang_up()
        return response

    def _hang_up(self) -> None:
        """The watchdog: shut down the connection, which ends the read that waits on it
        (through a duplicate of its socket: shutting one down shuts the connection)."""
        self.expired.set()
        try:
            fd = self.response.raw.fileno()
            with socket.socket(fileno=os.dup(fd)) as sock:
                sock.shutdown(socket.SHUT_RDWR)
        except (AttributeError, OSError):  # no response yet, already closed, or no socket
            pass  # to duplicate (then the next chunk, or the read timeout, stops it)

    def write(self, chunk: bytes) -> None:  # (the downloader's file: counts as it writes)
        if self.expired.is_set():
            raise _TooSlow(self.seconds, self.written)
        self.written += len(chunk)
        if self.written > self.limit:
            raise _TooLong(self.limit)
        self.fh.write(chunk)

    def flush(self) -> None:
        self.fh.flush()


def _download(fname: str) -> Path:
    """Fetch ``fname`` into the cache with pooch (kept only if its SHA-256 matches)."""
    import pooch
    import requests

    url, expected = file_url(fname), FILES[fname]["sha256"]
    _check_scheme(url)
    try:
        path = pooch.retrieve(url, known_hash=f"sha256:{expected}", fname=fname,
                              path=cache_dir(), progressbar=False,
                              downloader=_Bounded(fname))
    except requests.RequestException as err:  # (before ValueError: some are ValueErrors too)
        network = ("No network from here? Behind a proxy, set HTTPS_PROXY (it is honoured); "
                   "without network access, copy the files from a folder with `microagg data "
                   "--source FOLDER`. " if isinstance(err, (requests.ConnectionError,
                                                            requests.Timeout)) else "")
        raise DataNotFoundError(
            f"could not download {fname} from {url} ({type(err).__name__}: {err}). "
            + network + manual_route(fname)) from None
    except _TooLong as err:
        raise DataNotFoundError(
            f"{url} sent more than {err.limit} bytes for {fname}, the reference file's size, "
            "so it does not serve that file: the download was stopped and nothing was kept "
            f"(a wrong {ENV_URL}?). " + manual_route(fname)) from None
    except _TooSlow as err:
        raise DataNotFoundError(
            f"{url} was too slow: {fname} ({FILES[fname].get('size', '?')} bytes) was not "
            f"done after {err.seconds:.0f} s ({err.written} bytes received), so the download "
            "was stopped and nothing was kept. Try again later, or from another network. "
            + manual_route(fname)) from None
    except ValueError as err:  # pooch: the downloaded file's hash differs (it is deleted)
        raise DataNotFoundError(
            f"{fname} downloaded from {url} does not have the expected SHA-256 {expected}, "
            f"so it was not kept ({err}). " + manual_route(fname)) from None
    except OSError as err:  # the cache: a file, read-only, full (requests' are caught above)
        cache = cache_dir()
        why = ("is not a folder" if cache.exists() and not cache.is_dir() else
               f"cannot be written ({err.strerror or err})")
        raise DataNotFoundError(
            f"could not keep {fname}: the download cache {cache} {why}. Set {ENV_CACHE} to a "
            "folder you can write to (with room for a few hundred kB). " + manual_route(fname)
        ) from None
    except Exception as err:  # anything else the download raises
        raise DataNotFoundError(
            f"could not download {fname} from {url} ({type(err).__name__}: {err}). "
            + manual_route(fname)) from None
    return Path(path)


def fetch_files(names: Iterable[str] | None = None) -> dict[str, Path]:
    """Make sure each file is available (downloading what is missing); name -> verified path."""
    return {fname: locate(fname)[0] for fname in _names(names)}


def _names(names: Iterable[str] | None) -> list[str]:
    chosen = list(names) if names is not None else list(FILES)
    unknown = [f for f in chosen if f not in FILES]
    if unknown:
        raise ValueError(f"unknown data file(s) {unknown}; the files are {list(FILES)}")
    return chosen


# --------------------------------------------------------------------------------------
# installing into a folder, and a status report
# --------------------------------------------------------------------------------------

def install_files(source: str | os.PathLike[str] | None,
                  dest: str | os.PathLike[str] | None = None,
                  names: Iterable[str] | None = None) -> Path:
    """Copy verified files into ``dest``; ``source=None`` takes them from :func:`fetch_files`.

    A source file is hashed before it is copied; the copy is written to a temporary
    file in ``dest``, hashed again and only then renamed, so ``dest`` never holds an
    unverified file written by us; a file it replaces (another content under the same
    name) is kept beside it (:func:`_keep_aside`).
    """
    dst = Path(dest) if dest is not None else _local_dir()
    if dst is None:
        raise ValueError(f"no destination: give one (--dest FOLDER), or set {ENV_DATA}")
    if dst.exists() and not dst.is_dir():
        raise NotADirectoryError(f"the destination {dst} exists and is not a folder: give "
                                 "a folder (--dest FOLDER)")
    if source is not None and Path(source).exists() and not Path(source).is_dir():
        raise NotADirectoryError(f"the source {source} is a file: give the folder holding "
                                 "the reference data files (--source FOLDER), or --download")
    if source is not None and not Path(source).exists():  # (before dst is made)
        raise DataNotFoundError(
            f"the source folder {source} does not exist, so {', '.join(_names(names))} "
            "cannot be copied from it: give the folder holding the reference data files "
            "(--source FOLDER), or download them (--download)")
    try:
        dst.mkdir(parents=True, exist_ok=True)
    except OSError as err:  # under a file, read-only, ...
        raise type(err)(f"cannot create the destination folder {dst} ({err.strerror}): "
                        "choose a folder you can write to (--dest FOLDER)") from None
    missing: list[str] = []  # (from a source folder: every file it cannot give, at once)
    for fname in _names(names):
        expected, d = FILES[fname]["sha256"], dst / fname
        if d.is_file() and sha256_of(d) == expected:
            continue
        if source is None:  # the data folder's copy if right, else the cache's (downloaded)
            local = _local_dir()
            here = local / fname if local is not None else None
            if here is not None and here.is_file() and sha256_of(here) == expected:
                s = here
            else:  # (a wrong file there is not copied: the one in dst is being replaced)
                s = _cached(fname, f"the cache {cache_dir()}")
        else:
            s = Path(source) / fname
            try:
                if s.is_symlink() and not s.exists():
                    raise DataNotFoundError(
                        f"{s} is a broken symbolic link (to {os.readlink(s)}): point it at "
                        f"the file {fname}, or remove it. " + manual_route(fname))
                if not s.exists():
                    there = (f"{d} is not the reference file and {source} has no {fname} "
                             "to replace it" if d.exists() else f"{fname} is in neither "
                             f"{source} nor {dst}")
                    raise DataNotFoundError(f"{there}. " + manual_route(fname))
                _verified(s, fname)
            except DataNotFoundError as err:
                missing.append(str(err))
                continue
        _copy_verified(s, d, fname)
    _remove_old_caches(dst)
    if len(missing) == 1:
        raise DataNotFoundError(missing[0])
    if missing:
        raise DataNotFoundError(
            f"{len(missing)} reference files could not be copied from {source} (the others "
            f"are verified in {dst}): " + " ".join(f"({i}) {m}" for i, m in
                                                   enumerate(missing, 1)))
    return dst


def _as_new_file(path: str | os.PathLike[str]) -> None:
    """Give ``path`` the permissions of an ordinary new file (``0o666`` less the umask),
    so that others sharing a data folder or cache can read it."""
    mask = os.umask(0)
    os.umask(mask)
    os.chmod(path, 0o666 & ~mask)


def _copy_verified(src: Path, dst: Path, fname: str) -> None:
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{fname}.", suffix=".part", dir=dst.parent)
    except OSError as err:  # a read-only or full folder
        raise type(err)(f"cannot write {fname} into {dst.parent} ({err.strerror}): choose "
                        "a folder you can write to (--dest FOLDER)") from None
    os.close(fd)
    try:
        shutil.copyfile(src, tmp)
        _verified(Path(tmp), fname)
        _as_new_file(tmp)  # (mkstemp makes it private)
        if dst.is_dir() and not dst.is_symlink():
            raise IsADirectoryError(f"{dst} is a folder, where the reference file {fname} "
                                    "goes: move it away, or choose another --dest")
        if dst.is_file() and not dst.is_symlink():  # (a link is replaced, its target kept)
            _keep_aside(dst, fname)
        os.replace(tmp, dst)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def _keep_aside(path: Path, fname: str) -> None:
    """Keep a file about to be replaced (not the reference file) as
    ``NAME.replaced-<its SHA-256's first 12 digits>``, beside it, and say so."""
    aside = path.with_name(f"{path.name}.replaced-{sha256_of(path)[:12]}")
    if not aside.exists():
        try:
            os.link(path, aside)
        except OSError:  # no hard links here: a copy
            try:
                shutil.copy2(path, aside)
            except BaseException:
                aside.unlink(missing_ok=True)
                raise
    warnings.warn(f"{path} was not the reference file {fname}: it is replaced by the "
                  f"verified file, and kept as {aside}", stacklevel=4)


def _remove_old_caches(folder: Path) -> None:
    """Delete the parsed copies (pickles) and stamps that older versions kept in ``.cache``.

    Nothing is written when there is no such folder (a read-only folder of verified files
    works); one that cannot be changed is left as it is (nothing reads it)."""
    old = folder / ".cache"
    if not old.is_dir():
        return
    try:
        for fname in FILES:
            for suffix in (".pkl", ".sha256ok"):
                (old / f"{fname}{suffix}").unlink(missing_ok=True)
        if not any(old.iterdir()):
            old.rmdir()
    except OSError:  # read-only: the old copies stay, unused
        pass


def file_status() -> list[dict[str, str]]:
    """For each file: where it is (or would be fetched from) and its checksum status."""
    local = _local_dir()
    rows = []
    for fname in FILES:
        places = ([local / fname] if local is not None else []) + [cache_dir() / fname]
        path = next((p for p in places if p.exists()), None)
        if path is None:
            how = ("downloads are off: MICROAGG_OFFLINE" if _offline()
                   else "downloaded on first use")
            rows.append({"file": fname, "status": "missing", "where": f"{how}, {file_url(fname)}"})
            continue
        if not path.is_file():
            status = "not a file"
        else:
            status = "ok" if sha256_of(path) == FILES[fname]["sha256"] else "WRONG SHA-256"
        rows.append({"file": fname, "status": status, "where": str(path)})
    return rows
