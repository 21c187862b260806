"""The audit on large files (a review with files of millions of rows).

A text column of codes or words (``R05``, a region) has no reading as numbers: the audit
settles that from its first values instead of reading every value as a number, twice, in
two passes (on a million rows of seven columns that took half the audit's time), and its
fingerprints are those of the whole column read.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from microagg import _audit
from microagg._release import MISSING_TEXT, decorated_numbers, text_to_numbers


def _reads(monkeypatch) -> list[int]:
    """Record the length of every column the audit reads as numbers."""
    lengths: list[int] = []
    for name, read in (("decorated_numbers", decorated_numbers),
                       ("text_to_numbers", text_to_numbers)):
        def counted(text, *args, _read=read, **kwargs):
            lengths.append(len(text))
            return _read(text, *args, **kwargs)
        monkeypatch.setattr(_audit, name, counted)
    return lengths


def test_a_column_of_codes_is_not_read_whole_as_numbers(monkeypatch):
    n = 5_000
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"x": rng.normal(size=n), "region": [f"R{i // 250:02d}" for i in range(n)]})
    released = df.assign(x=np.repeat(df["x"].to_numpy().reshape(-1, 5).mean(axis=1), 5))
    lengths = _reads(monkeypatch)
    result = _audit.audit(df, released, 5, strata="region", columns=["x"])
    assert result.passed, result.failures
    assert lengths and max(lengths) < n, max(lengths)


@pytest.mark.parametrize("values", [
    [f"R{i:02d}" for i in range(300)],                     # codes: no reading
    [str(i) for i in range(300)],                          # plain numbers
    [f"${i},000" for i in range(300)],                     # decorated numbers
    [str(i) for i in range(299)] + ["north"],              # a word after the probe
    ["", "NA"] * 100 + [str(i) for i in range(100)],       # missing values first
    [f"{i},5" for i in range(300)],                        # a decimal comma
])
def test_fingerprints_are_those_of_the_whole_column(values):
    col = pd.Series(values, dtype=object)
    text = col.astype(str)
    missing = col.isna().to_numpy(dtype=bool) | text.isin(MISSING_TEXT).to_numpy(dtype=bool)
    whole = [_audit._number_hash(decorated_numbers(text, "."), missing)]
    if not text.str.contains(".", regex=False).any():
        whole.append(_audit._number_hash(text_to_numbers(text, ","), missing))
    got = _audit._hashes(col, ".", ".")
    assert got[1] == (whole[0], whole[-1] if len(whole) > 1 else None)
