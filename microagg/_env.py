"""Every ``MICROAGG_*`` environment switch, with its meaning: the one list.

The modules that read a switch name it where they read it; this list is what ``microagg
info`` prints and the README documents, and ``tests/test_architecture.py`` checks that
every ``MICROAGG_*`` name used in ``microagg/``, ``tools/`` and ``tests/`` is here.
"""

from __future__ import annotations

import os

__all__ = ["SWITCHES", "TEST_SWITCHES", "ON_OFF", "switch_values", "switch_problems", "flag"]

#: Switches the package reads: name -> meaning.
SWITCHES = {
    "MICROAGG_DATA": "folder holding the reference data files (default: the checkout's "
                     "data/raw, else the download cache)",
    "MICROAGG_CACHE": "download cache folder (default: the platform's cache folder)",
    "MICROAGG_DATA_URL": "another base URL to download the reference data files from",
    "MICROAGG_OFFLINE": "1: never download a data file (the tests set it)",
    "MICROAGG_PUBLISHED": "folder of the papers' published tables (default: the package's "
                          "_published)",
    "MICROAGG_DISABLE_NUMBA": "1: run without numba (plain Python/numpy), same results",
    "MICROAGG_QUICK": "1: the heaviest reproductions at reduced settings (nbval's quick check "
                      "only)",
    "MICROAGG_REPRODUCTION_CACHE": "folder where the book build caches reproduced tables (a "
                                   "table is read back only by the same code and settings)",
    "MICROAGG_GOMM_CACHE_MB": "GOMM's memory budget in MB (default 512): its process-wide "
                              "group cache and each run's arena each hold at most this much",
    "MICROAGG_STATIC_EXPLORERS": "1: explorers render for a static page (set by the book "
                                 "build)",
    "MICROAGG_GRADING_SALT": "a course's salt for the assignments' hidden test data "
                             "(teaching.case_seed; default none: the same data every run)",
}
#: Switches only the tests and tools read: name -> meaning.
TEST_SWITCHES = {
    "MICROAGG_SLOW": "1: also run the tests marked slow (as pytest -m slow)",
    "MICROAGG_CHROMIUM": "the Chromium binary of the browser tests (default: found on PATH)",
    "MICROAGG_PHASE1_LOGS": "folder of make test's phase-1 logs (nbval and the book build)",
    "MICROAGG_ASSIGNMENTS_OUT": "where make test builds the course assignments",
    "MICROAGG_SEEDS": "folder of the papers (default: ../shared/seeds)",
    "MICROAGG_GRADING_RUN": "set by make grade, not by you: the tag of one grading run, whose "
                            "processes are ended when it ends (tools/assignments.py)",
}


#: The package's on/off switches, each read with :func:`flag`.
ON_OFF = ("MICROAGG_OFFLINE", "MICROAGG_DISABLE_NUMBA", "MICROAGG_QUICK",
          "MICROAGG_STATIC_EXPLORERS")

#: How an on/off switch is written: on, or off (unset is off).
ON = ("1", "true", "yes", "on")
OFF = ("", "0", "false", "no", "off")


def flag(name: str) -> bool:
    """Whether the on/off switch ``name`` is on: ``1``, ``true``, ``yes`` or ``on`` (in any
    case) turn it on; unset, empty, ``0``, ``false``, ``no`` or ``off`` leave it off.
    Anything else is an error naming the switch, rather than a silent "off".

    Examples
    --------
    >>> import os
    >>> from unittest import mock
    >>> with mock.patch.dict(os.environ, {"MICROAGG_QUICK": "True"}):
    ...     flag("MICROAGG_QUICK")
    True
    >>> with mock.patch.dict(os.environ, {"MICROAGG_QUICK": "ja"}):
    ...     flag("MICROAGG_QUICK")
    Traceback (most recent call last):
    ...
    ValueError: MICROAGG_QUICK='ja' is neither on (1, true, yes, on) nor off ...
    """
    value = os.environ.get(name, "").strip().lower()
    if value in ON:
        return True
    if value in OFF:
        return False
    raise ValueError(f"{name}={os.environ[name]!r} is neither on ({', '.join(ON)}) nor off "
                     f"({', '.join(OFF[1:])}, or unset)")


def switch_values() -> list[tuple[str, str, str]]:
    """``(name, value or "(unset)", meaning)`` for every package switch.

    Book: :ref:`page-contributing`.

    Examples
    --------
    >>> rows = switch_values()
    >>> rows[0][0], len(rows) == len(SWITCHES)
    ('MICROAGG_DATA', True)
    """
    return [(name, os.environ.get(name, "(unset)"), meaning)
            for name, meaning in SWITCHES.items()]


def switch_problems() -> dict[str, str]:
    """The package switches set to a value the package would refuse, each with the error it
    would raise when read (``microagg info`` shows them beside the values).

    Examples
    --------
    >>> import os
    >>> from unittest import mock
    >>> with mock.patch.dict(os.environ, {"MICROAGG_OFFLINE": "maybe"}):
    ...     list(switch_problems())
    ['MICROAGG_OFFLINE']
    """
    from ._gomm_eval import cache_budget  # its reader, which checks the value

    problems = {}
    for name in ON_OFF:
        try:
            flag(name)
        except ValueError as err:
            problems[name] = str(err)
    try:
        cache_budget()
    except ValueError as err:
        problems["MICROAGG_GOMM_CACHE_MB"] = str(err)
    return problems
