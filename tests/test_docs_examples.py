"""Runnable examples: at least 95 % of the public callables show one in their docstring.

The public callables are read from where the package lists them: the top level's ``__all__``
(made from its stub ``microagg/__init__.pyi``) and the ``__all__`` of every public module and
subpackage of ``microagg`` (every one whose name has no leading underscore). A callable has
an example when its docstring has a numpydoc ``Examples`` section holding at least one ``>>>``
example that :mod:`doctest` parses and runs (not marked ``+SKIP``); the examples
themselves run as doctests in ``make test`` (``pytest tests microagg --doctest-modules``).
"""

from __future__ import annotations

import doctest
import importlib
import inspect
import pkgutil
import re

import microagg

#: The share of public callables that must carry a runnable example (issue #24).
MIN_SHARE = 0.95

EXAMPLES = re.compile(r"^\s*Examples\n\s*-{8,}\n", re.MULTILINE)


def public_namespaces() -> list[str]:
    """``microagg`` and each of its modules and subpackages without a leading underscore."""
    names = [m.name for m in pkgutil.iter_modules(microagg.__path__)
             if not m.name.startswith("_")]
    return ["microagg", *(f"microagg.{n}" for n in sorted(names))]


def public_callables() -> dict[str, object]:
    """Every function and class named in a public namespace's ``__all__``, by full name."""
    found = {}
    for modname in public_namespaces():
        try:
            module = importlib.import_module(modname)
        except ImportError:  # microagg.dask without the dask extra: its names are not counted
            continue
        for name in module.__all__:
            obj = getattr(module, name)
            if inspect.isfunction(obj) or inspect.isclass(obj):
                found[f"{modname}.{name}"] = obj
    return found


def has_example(obj: object) -> bool:
    """Whether ``obj``'s own docstring has an ``Examples`` section with a ``>>>`` example
    that runs (is not skipped)."""
    doc = inspect.cleandoc(obj.__doc__ or "")
    match = EXAMPLES.search(doc)
    if match is None:
        return False
    examples = doctest.DocTestParser().get_examples(doc[match.end():])
    return any(not ex.options.get(doctest.SKIP) for ex in examples)


def test_the_namespaces_include_the_public_subpackages():
    names = public_namespaces()
    for expected in ("microagg.views", "microagg.reproductions", "microagg.datasets"):
        assert expected in names
    assert not any(n.split(".")[-1].startswith("_") for n in names)


def test_has_example_tells_an_example_from_prose():
    def with_example():
        """Double.

        Examples
        --------
        >>> 1 + 1
        2
        """

    def skipped_only():
        """Double.

        Examples
        --------
        >>> 1 + 1  # doctest: +SKIP
        2
        """

    def prose_only():
        """Double; type ``>>> 1 + 1`` to try.

        Examples
        --------
        See the chapter.
        """

    assert has_example(with_example)
    assert not has_example(skipped_only)
    assert not has_example(prose_only)
    assert not has_example(lambda: None)


def test_most_public_callables_have_a_runnable_example():
    objects = public_callables()
    missing = sorted(name for name, obj in objects.items() if not has_example(obj))
    share = 1 - len(missing) / len(objects)
    print(f"\n{len(objects) - len(missing)} of {len(objects)} public callables have a "
          f"runnable example ({share:.0%}); without one: {', '.join(missing) or 'none'}")
    assert share >= MIN_SHARE, (
        f"only {len(objects) - len(missing)} of {len(objects)} public callables "
        f"({share:.0%}, below {MIN_SHARE:.0%}) have an Examples section with a >>> "
        f"example; without one:\n" + "\n".join(missing))
