"""One home for each default: ``microagg/_defaults.py``.

The function signatures, the method registry (``Method.options``), the command line's
``--help`` and the docstrings' ``default`` notes must all agree with it.
"""

from __future__ import annotations

import ast
import inspect
import re
from dataclasses import fields

import pytest

import microagg
from microagg import reference, reproductions
from microagg._cli import _parser
from microagg._defaults import (
    ENGINE,
    GA,
    GOMM,
    HYBRID,
    IVMDAV,
    MACROGROUP_SIZE,
    VMDAV,
    option_defaults,
    option_names,
)
from microagg._genetic import ga_settings
from microagg._hybrid import DEFAULT_K
from microagg._methods import METHODS

#: Each function and the settings whose fields its signature takes (all of them, unless a
#: subset is named).
SIGNATURES = [
    (microagg.mdav, ENGINE, None),
    (microagg.mdav_single, ENGINE, None),
    (microagg.vmdav, ENGINE, None),
    (microagg.ivmdav, ENGINE, None),
    (microagg.ga_partition, GA, None),
    (ga_settings, GA, None),
    (microagg.hybrid, HYBRID, None),
    (microagg.macrogroups, HYBRID, ("K", "partitioning")),
    (microagg.vmdav, VMDAV, None),
    (reference.vmdav_reference, VMDAV, None),
    (microagg.ivmdav, IVMDAV, None),
    (reference.ivmdav_reference, IVMDAV, None),
    (microagg.gomm, GOMM, None),
    (reproductions.reproduce_gomm, GOMM, None),
    (reproductions.reproduce_table2, GA, ("iterations",)),
]
IDS = [f"{f.__module__}.{f.__name__}" for f, _, _ in SIGNATURES]


@pytest.mark.parametrize("function,home,names", SIGNATURES, ids=IDS)
def test_signature_defaults_are_the_home_values(function, home, names):
    params = inspect.signature(function).parameters
    for name in names or option_names(home):
        assert name in params, f"{function.__name__} lacks the option {name}"
        assert params[name].default == getattr(home, name), (
            f"{function.__name__}({name}={params[name].default!r}) but the home says "
            f"{getattr(home, name)!r}")


def test_hybrid_macrogroup_size_reads_the_home():
    assert DEFAULT_K == MACROGROUP_SIZE


@pytest.mark.parametrize("name,settings", [
    ("mdav", ()), ("mdav_single", ()), ("vmdav", (VMDAV,)), ("ivmdav", (IVMDAV,)),
    ("hybrid", (HYBRID, GA)),
])
def test_registry_options_are_the_home_fields(name, settings):
    method = METHODS[name]
    engine = ("engine",) if method.family == "mdav" else ()  # (every MDAV function's switch)
    assert method.options == engine + option_names(*settings)
    assert method.defaults == option_defaults(*((ENGINE,) if engine else ()), *settings)
    params = inspect.signature(method.function).parameters
    takes_more = any(p.kind is p.VAR_KEYWORD for p in params.values())
    for option in method.options:
        assert option in params or (takes_more and option in option_names(GA)), option


def _help_texts() -> tuple[dict[str, str], str]:
    """Each method option's help (by name) and the whole rendered ``protect --help``."""
    sub = next(a for a in _parser()._actions if a.dest == "command")
    protect = sub.choices["protect"]
    helps = {a.dest: " ".join(a.help.split()) for a in protect._actions if a.help}
    return helps, " ".join(protect.format_help().split())


def _shown(value) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    return repr(value) if isinstance(value, str) else str(value)


@pytest.mark.parametrize("home", [VMDAV, IVMDAV, HYBRID, GA], ids=lambda h: type(h).__name__)
def test_cli_help_states_the_home_defaults(home):
    helps, rendered = _help_texts()
    for f in fields(home):
        value = getattr(home, f.name)
        if value is None:  # chosen from k (K, candidates) or fresh entropy (seed)
            continue
        text = f"default {_shown(value)}"
        assert text in helps[f.name], f"--help of {f.name} lacks {text!r}: {helps[f.name]!r}"
        assert text in rendered
    assert f"at least {MACROGROUP_SIZE}" in helps["K"]


#: ``name : type, default value`` and ``a, b : type, default x, y`` (numpydoc).
PARAM_LINE = re.compile(r"^\s*(?P<names>\w+(?:, \w+)*) :.*?\bdefault (?P<values>.+)$")


def _documented_defaults(doc: str) -> dict[str, str]:
    found = {}
    for line in (doc or "").splitlines():
        m = PARAM_LINE.match(line)
        if not m:
            continue
        names = m["names"].split(", ")
        values = [v.strip() for v in m["values"].split(", ")] if len(names) > 1 else [
            m["values"].strip()]
        if len(values) == len(names):
            found.update(zip(names, values, strict=True))
    return found


def test_docstring_parser_reads_numpydoc_defaults():
    doc = "    a, b : int, default 10_000, 0.5\n    c : str, default 'x'\n    d : int\n"
    assert _documented_defaults(doc) == {"a": "10_000", "b": "0.5", "c": "'x'"}


@pytest.mark.parametrize("function,home,names", SIGNATURES, ids=IDS)
def test_docstring_defaults_agree_with_the_home(function, home, names):
    documented = _documented_defaults(function.__doc__)
    for name in names or option_names(home):
        if name not in documented:
            continue
        try:
            value = ast.literal_eval(documented[name])
        except (ValueError, SyntaxError):  # prose such as "2k"
            continue
        assert value == getattr(home, name), (
            f"{function.__name__}'s docstring says {name} defaults to {documented[name]}, "
            f"the home says {getattr(home, name)!r}")


def test_the_documented_defaults_are_found():
    """The check above reads something: the GA's four settings and GOMM's are documented."""
    assert set(_documented_defaults(microagg.ga_partition.__doc__)) >= set(option_names(GA))
    assert {"population", "patience"} <= set(_documented_defaults(microagg.gomm.__doc__))
    assert "gamma" in _documented_defaults(microagg.ivmdav.__doc__)
