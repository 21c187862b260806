"""Errors that say what is wrong, in the user's terms (issue "Reliability", points 8 and 9).

Each case used to end in an internal message (a numpy sampling error, a broadcast mismatch,
an unhashable type, a keyword error) or to be accepted silently.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

import microagg as ma


@pytest.fixture()
def X() -> np.ndarray:
    return np.random.default_rng(0).normal(size=(30, 3))


def test_gomm_with_one_attribute(X):
    with pytest.raises(ValueError, match="at least 2 attributes"):
        ma.gomm(X[:, :1], 3, population=4, generations=1, progress=False)


def test_method_given_as_a_list(X):
    with pytest.raises(TypeError, match="one name, not a list"):
        ma.microaggregate(pd.DataFrame(X, columns=list("abc")), 3, method=["mdav"])


def test_option_of_another_method(X):
    with pytest.raises(ValueError, match=r"\['gamma'\] do not apply to method 'mdav'"):
        ma.microaggregate(pd.DataFrame(X, columns=list("abc")), 3, gamma=1.1)


@pytest.mark.parametrize("value", ["no", "yes", 0, 1, None])
def test_ivmdav_self_neighbour_must_be_a_bool(X, value):
    with pytest.raises(TypeError, match="self_neighbour must be True or False"):
        ma.ivmdav(X, 3, self_neighbour=value)


def test_ivmdav_self_neighbour_false_still_works(X):
    assert ma.is_k_partition(ma.ivmdav(X, 3, self_neighbour=np.bool_(False)), 3)


@pytest.mark.parametrize("f", [ma.mdav, ma.vmdav, ma.sst, ma.standardize])
def test_masked_values_are_not_ignored(X, f):
    masked = np.ma.masked_array(X, mask=X > 1.5)
    with pytest.raises(ValueError, match="masked value"):
        f(masked) if f in (ma.sst, ma.standardize) else f(masked, 3)
    unmasked = np.ma.masked_array(X, mask=np.zeros_like(X, dtype=bool))
    assert np.array_equal(ma.mdav(unmasked, 3), ma.mdav(X, 3))


@pytest.mark.parametrize("make", [
    lambda: np.random.default_rng(5),
    lambda: np.random.SeedSequence(5),
    lambda: np.random.PCG64(5),
    lambda: 5,
    lambda: [5, 6],
])
def test_hybrid_takes_the_seeds_ga_partition_takes(X, make):
    a = ma.hybrid(X, 3, K=9, seed=make(), iterations=20)
    b = ma.hybrid(X, 3, K=9, seed=make(), iterations=20)
    assert ma.is_k_partition(a, 3) and np.array_equal(a, b)
    ma.ga_partition(X[:9], 3, seed=make(), iterations=5)


@pytest.mark.parametrize("seed, error", [("abc", TypeError), (1.5, TypeError),
                                         (-1, ValueError)])
def test_bad_seeds_are_named(X, seed, error):
    for call in (lambda: ma.hybrid(X, 3, seed=seed, iterations=5),
                 lambda: ma.ga_partition(X[:9], 3, seed=seed, iterations=5)):
        with pytest.raises(error, match="seed must be"):
            call()


@pytest.mark.parametrize("k", range(1, 12))
@pytest.mark.parametrize("partitioning", ["two-step", "one-step"])
def test_hybrid_default_K_is_valid_for_every_k(X, k, partitioning):
    res = ma.hybrid(X, k, partitioning=partitioning, iterations=5, seed=0, return_details=True)
    assert ma.is_k_partition(res.labels, k)
    assert res.K >= k and (partitioning == "one-step" or res.K % k == 0)
    if k in (1, 3, 7):
        assert res.K == 21  # the paper's K where it applies


def test_hybrid_K_error_suggests_valid_values(X):
    with pytest.raises(ValueError, match=r"K=18 or K=21, or leave K unset"):
        ma.hybrid(X, 3, K=20, iterations=5)


def test_optimal_univariate_of_large_values():
    x = np.random.default_rng(1).normal(size=30)
    assert np.array_equal(ma.optimal_univariate(x * 1e154, 3), ma.optimal_univariate(x, 3))


@pytest.mark.parametrize("standardize", [True, False])
def test_disclosure_measures_of_values_near_1e200(X, standardize):
    P = ma.aggregate(X, ma.mdav(X, 3))
    for f in (ma.distance_linkage_disclosure, ma.interval_disclosure, ma.score):
        assert f(X * 1e200, P * 1e200, standardize=standardize) == pytest.approx(
            f(X, P, standardize=standardize), rel=1e-9, abs=1e-9)


@pytest.mark.parametrize("labels, error, match", [
    (lambda lab: lab * 1e20, ValueError, "below 2\\*\\*53"),
    (lambda lab: lab + 0.5, TypeError, "non-integer"),
    (lambda lab: np.where(lab == 0, np.nan, lab), ValueError, "NaN"),
    (lambda lab: np.full(lab.shape, 2**63, dtype=np.uint64), ValueError, "int64"),
    (lambda lab: lab.astype(bool), TypeError, "integers"),
])
def test_labels_are_checked_as_integers(X, labels, error, match):
    lab = ma.mdav(X, 3)
    for f in (ma.sse, ma.aggregate, ma.information_loss):
        with pytest.raises(error, match=match):
            f(X, labels(lab))


def test_audit_names_what_it_takes_when_given_arrays():
    """pathlib's "expected str, bytes or os.PathLike object, not ndarray" named nothing."""
    X = np.zeros((6, 2))
    with pytest.raises(TypeError, match="original must be a pandas DataFrame or the path"):
        ma.audit(X, X, 3)
    with pytest.raises(TypeError, match="released must be a pandas DataFrame or the path"):
        ma.audit(pd.DataFrame(X), X, 3)


def test_options_a_method_does_not_take_are_named_by_blocked_and_engine_is_one():
    """blocked(gamma=...) raised Python's "unexpected keyword argument" from inside a block;
    microaggregate refused engine=, which every MDAV-family function takes."""
    X = np.random.default_rng(0).normal(size=(60, 2))
    with pytest.raises(ValueError, match=r"\['gamma'\] do not apply to method 'mdav'"):
        ma.blocked(X, 3, gamma=1.0)
    df = pd.DataFrame(X, columns=["a", "b"])
    assert ma.microaggregate(df, 3, engine="numpy").equals(ma.microaggregate(df, 3))
    with pytest.raises(ValueError, match="k must be at least 2, got 0"):
        ma.microaggregate(df, 0)


# --- A review of every message a user can see (errors and warnings, API and CLI) ---------


def test_rows_of_different_lengths_are_named_not_numpys_words():
    """numpy's "setting an array element with a sequence. The requested array has an
    inhomogeneous shape after 1 dimensions..." reached the user of mdav([[1, 2], [3]], 2)."""
    with pytest.raises(ValueError, match="X is not a table of numbers: its rows .* differ"):
        ma.mdav([[1.0, 2.0], [3.0]], 2)


def test_a_non_integer_label_is_shown_as_a_number(X):
    """The value read "np.float64(0.5)" (numpy 2's repr) where the user wrote 0.5."""
    with pytest.raises(TypeError, match=r"non-integer value 0\.5$"):
        ma.sse(X, np.full(len(X), 0.5))


@pytest.mark.parametrize("n_jobs", [0, -5])
def test_hybrid_n_jobs_below_one_gets_one_message_with_the_value(X, n_jobs):
    """0 said "a positive integer or -1" without the value; -5 said "at least -1"."""
    with pytest.raises(ValueError, match=rf"n_jobs must be a positive integer, or -1 .*"
                                         rf"got {n_jobs}$"):
        ma.hybrid(X, 3, n_jobs=n_jobs, iterations=2)


def test_a_misspelt_option_is_not_said_to_belong_to_another_method(X):
    """gama=1.1 read "option(s) ['gama'] do not apply to method 'mdav'", as if vmdav took
    it: no method takes it."""
    df = pd.DataFrame(X, columns=list("abc"))
    with pytest.raises(ValueError, match=r"unknown option\(s\) \['gama'\]: no method takes "
                                         r"them \('gama': did you mean 'gamma'\?\)"):
        ma.microaggregate(df, 3, gama=1.1)
    with pytest.raises(ValueError, match=r"\['gamma'\] do not apply to method 'mdav'"):
        ma.microaggregate(df, 3, gamma=1.1)


def test_one_row_with_nan_is_one_data_row(X):
    """ "1 row(s) (first at data rows 3" for a single row."""
    X = X.copy()
    X[2, 1] = np.nan
    with pytest.raises(ValueError, match=r"1 row\(s\) \(at data row 3, counted from 1"):
        ma.mdav(X, 3)
    X[:, :] = np.nan
    with pytest.raises(ValueError, match=r"30 row\(s\) \(first at data rows 1, 2, 3, 4, 5,"):
        ma.mdav(X, 3)


@pytest.mark.parametrize("which", ["original", "released"])
def test_audit_of_a_missing_file_or_a_folder_names_its_role(tmp_path, which):
    """pandas' "[Errno 2] No such file or directory: '...'" did not say which file."""
    pd.DataFrame({"a": range(6)}).to_csv(tmp_path / "in.csv", index=False)
    files = {"original": tmp_path / "in.csv", "released": tmp_path / "in.csv"}
    files[which] = tmp_path / "nope.csv"
    with pytest.raises(FileNotFoundError, match=f"{which} file .*nope.csv does not exist"):
        ma.audit(files["original"], files["released"], 3)
    files[which] = tmp_path
    with pytest.raises(IsADirectoryError, match=f"{which} .* is a folder"):
        ma.audit(files["original"], files["released"], 3)


@pytest.mark.parametrize("text, said", [
    ("", "is empty (or holds blank lines only): a CSV table starts with a header row"),
    ("\n\n", "is empty (or holds blank lines only)"),
    ('a,b\n1,2\n3,"4\n5,6\n', 'a double quote in row 3 of the file (the header is row 1) '
                              "opens a quoted value that is never closed"),
])
@pytest.mark.parametrize("strata", [[], ["--strata", "a"]])
def test_csv_read_errors_are_in_the_users_words(tmp_path, capsys, text, said, strata):
    """pandas' "No columns to parse from file" and "Error tokenizing data. C error: EOF
    inside string starting at row 2" reached the command line (and the API)."""
    from cli_helpers import one_line_error, run

    src = tmp_path / "in.csv"
    src.write_text(text)
    rc, _, err = run(["protect", src, "-k", "2", *strata, "-o", tmp_path / "o.csv"], capsys)
    assert str(src) in one_line_error(rc, err)
    assert said in err and "pandas" not in err and "C error" not in err
    with pytest.raises(ValueError, match=re.escape(said)):
        ma.audit(src, src, 2)


def test_a_file_that_is_not_parquet_is_named_once(tmp_path, capsys):
    """The error named the file three times ("x.parquet: not a Parquet file, or a damaged
    one (cannot read x.parquet as a Parquet file: Parquet magic bytes...")."""
    from cli_helpers import one_line_error, run

    bad = tmp_path / "bad.parquet"
    bad.write_text("id,income\n1,2\n")
    rc, _, err = run(["protect", bad, "-k", "3", "-o", tmp_path / "o.parquet"], capsys)
    assert one_line_error(rc, err).count(str(bad)) == 1, err


@pytest.mark.parametrize("args", [["ORIG", "-"], ["-", "ORIG"]])
def test_the_audit_refuses_standard_input_by_name(tmp_path, capsys, args):
    """`microagg audit in.csv -` said "released must be a pandas DataFrame or the path of a
    CSV or Parquet file, got NoneType; for an array, pd.DataFrame(array)"; and a missing
    file's error offered "give - to read standard input", which the audit cannot."""
    from cli_helpers import one_line_error, run

    src = tmp_path / "in.csv"
    pd.DataFrame({"a": range(6)}).to_csv(src, index=False)
    rc, _, err = run(["audit", *[src if a == "ORIG" else a for a in args], "-k", "3"], capsys)
    line = one_line_error(rc, err)
    assert "cannot be standard input (-)" in line and "NoneType" not in line
    rc, _, err = run(["audit", src, tmp_path / "nope.csv", "-k", "3"], capsys)
    assert "standard input" not in one_line_error(rc, err)


def test_counts_of_one_are_singular(tmp_path, capsys):
    """The command line said "1 groups" and "smallest released combination 1 rows" (and
    "merged stratum ... (1 records)", in test_cli_strata)."""
    from cli_helpers import run

    src, out = tmp_path / "in.csv", tmp_path / "out.csv"
    pd.DataFrame({"a": [1.0, 2.0, 4.0, 8.0], "b": [3.0, 1.0, 2.0, 5.0]}).to_csv(src, index=False)
    rc, _, err = run(["protect", src, "-k", "3", "-o", out], capsys)
    assert rc == 0 and "mdav, k=3: 1 group, sizes 4..4" in err, err
    pd.DataFrame({"s": ["x"] * 4, "a": [1.0, 2.0, 4.0, 8.0]}).to_csv(src, index=False)
    rc, _, err = run(["protect", src, "-k", "3", "--strata", "s", "-o", out, "--force"], capsys)
    assert rc == 0 and "mdav, k=3: 1 group, sizes 4..4" in err, err  # (by strata too)
    rc, _, err = run(["audit", src, src, "-k", "3"], capsys)
    assert rc == 2 and "smallest released combination 1 row (k=3)" in err, err


def test_a_warning_at_start_up_is_one_line_too():
    """A warning given while the command line is imported (an odd MICROAGG_DISABLE_NUMBA)
    came in Python's form: the path of microagg/_jit.py and its source line
    "_SWITCHED_OFF = _switched_off()", where every other warning is one line."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    env = {**os.environ, "MICROAGG_DISABLE_NUMBA": "perhaps",
           "PYTHONPATH": os.pathsep.join([str(Path(ma.__file__).parents[1]),
                                          os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-m", "microagg", "protect", "-", "-k", "1"],
                          input="", capture_output=True, text=True, env=env, timeout=120)
    lines = done.stderr.splitlines()
    assert lines[0].startswith("microagg: warning: MICROAGG_DISABLE_NUMBA='perhaps' is "
                               "neither on"), done.stderr
    assert "_jit.py" not in done.stderr and "_switched_off()" not in done.stderr


@pytest.mark.parametrize("options, said", [
    (["--method", "vmdav", "--gamma", "-1"], "--gamma must be a finite number >= 0, got -1.0"),
    (["--method", "vmdav", "--leftover", "nowhere"], "--leftover must be 'centroid' or 'record'"),
    (["--engine", "fast"], "--engine must be one of 'auto', "),
    (["--method", "ivmdav", "--candidates", "2"], "--candidates must be at least 3, got 2"),
    (["--method", "hybrid", "--seed", "-1"], "--seed: expected a whole number of at least 0"),
    (["--method", "hybrid", "--mutation-rate", "2"], "--mutation-rate must be in [0, 1], got 2.0"),
    (["--method", "hybrid", "--partitioning", "three"], "--partitioning must be 'one-step' or"),
    (["--method", "hybrid", "--K", "7"], "two-step partitioning needs K divisible by k"),
    (["--method", "hybrid", "--n-jobs", "0"], "--n-jobs must be a positive integer, or -1"),
])
@pytest.mark.parametrize("strata", [[], ["--strata", "s"]])
def test_a_bad_method_option_is_named_by_its_flag_before_the_input_is_read(
        tmp_path, capsys, options, said, strata):
    """A bad value of a method option (``--gamma -1``) was found only once the method ran,
    after the whole input was read and its columns checked (half a minute on a large
    file), and named as the API names it (``gamma must be ...``). It is now refused at
    start-up: before the input's columns are looked at (this input's column 'code' would
    be refused first), naming the flag."""
    from cli_helpers import one_line_error, run

    src = tmp_path / "in.csv"
    pd.DataFrame({"s": ["a"] * 6, "x": np.arange(6.0), "code": [f"A{i}" for i in range(6)]}
                 ).to_csv(src, index=False)
    rc, _, err = run(["protect", src, "-k", "3", *options, *strata, "-o", tmp_path / "o.csv"],
                     capsys)
    assert said in one_line_error(rc, err)
    assert not (tmp_path / "o.csv").exists()


@pytest.mark.parametrize("call, shown", [
    (lambda X: ma.mdav(X, np.float64(3.0)), "k must be an integer, got 3.0"),
    (lambda X: ma.hybrid(X, k=3, K=np.float64(12)), "got 12.0"),
    (lambda X: ma.blocked(X, 3, block_size=np.float64(9)), "got 9.0"),
    (lambda X: ma.ga_partition(X[:12], 3, iterations=np.float32(5)), "got 5.0"),
    (lambda X: ma.hybrid(X, k=3, seed=np.float64(1)), "got 1.0"),
])
def test_numpy_scalars_are_shown_as_the_user_typed_them(X, call, shown):
    """numpy 2's reprs reached the messages: "k must be an integer, got np.float64(3.0)"."""
    with pytest.raises(TypeError) as err:
        call(X)
    assert shown in str(err.value) and "np." not in str(err.value)


def test_a_single_value_given_as_labels_is_named(X):
    """``sse(X, "abc")`` said only "labels must be 1-D, got shape ()"."""
    with pytest.raises(TypeError, match="one integer label per record, got the single value "
                                        "'abc'"):
        ma.sse(X, "abc")


@pytest.mark.parametrize("seed", ["-1", "x", "1.5"])
def test_a_bad_seed_on_the_command_line_is_named_in_its_words(tmp_path, capsys, seed):
    """``--seed -1`` got the API's words: "--seed must be None, a non-negative integer, a
    SeedSequence or a numpy Generator, got -1"."""
    from cli_helpers import one_line_error, run

    src = tmp_path / "in.csv"
    pd.DataFrame({"a": range(8), "b": range(8)}).to_csv(src, index=False)
    rc, _, err = run(["protect", src, "-k", "2", "--method", "hybrid", "--seed", seed,
                      "-o", tmp_path / "o.csv"], capsys)
    line = one_line_error(rc, err)
    assert f"--seed: expected a whole number of at least 0, got '{seed}'" in line, line
    assert "Generator" not in line and not (tmp_path / "o.csv").exists()
