"""``microagg protect --report FILE``: the provenance record of a release.

In memory and by strata (``--jobs 2`` once; ``--scheduler`` in ``tests/test_dask.py``):
the record's fields equal what the run printed and wrote, every option the method ran
with is recorded (the defaults as ``microagg/_defaults.py`` holds them) and so are the
run's other options that shape the release (the CSV dialect, ``--na``, ``--keep-rest``,
``--jobs``), it names no value of the input (strata by number only), and the report file
is checked at start-up as ``-o`` is, and written only by a run that succeeds.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from cli_helpers import one_line_error, run

import microagg as ma
from microagg._csv import QUOTING
from microagg._defaults import ENGINE, GA, HYBRID, IVMDAV, VMDAV, option_defaults
from microagg.reproductions import environment

#: The record's fields, in the order the file holds them.
FIELDS = ["microagg", "created", "input", "output", "method", "k", "options", "options_given",
          "options_drawn", "standardize", "run", "columns", "result", "audit"]
#: The CSV dialect of a run given no dialect options, on files named .csv.
PLAIN_CSV = {"delimiter": ",", "decimal": ".", "encoding": "utf-8", "bom": False,
             "quoting": QUOTING, "line_end": "\n"}
#: Values of the input that the report must never hold.
SECRETS = ["987654.321", "secret-region", "hidden-valley", "tiny-hamlet", "confidential-text",
           "98700"]


def survey(n: int = 60) -> pd.DataFrame:
    """A small input with distinctive values: an identifier 987001.. (protected by default,
    with a note that quotes its range on stderr), an income of 987654.321, strata named
    secret-region, hidden-valley and tiny-hamlet (2 rows: merged), a text column."""
    rng = np.random.default_rng(7)
    region = np.where(np.arange(n) % 2 == 0, "secret-region", "hidden-valley").astype(object)
    region[[3, 7]] = "tiny-hamlet"
    df = pd.DataFrame({"id": np.arange(987001, 987001 + n), "region": region,
                       "income": rng.normal(52000, 3000, n).round(3),
                       "age": rng.integers(20, 70, n), "comment": "confidential-text"})
    df.loc[5, "income"] = 987654.321
    return df


@pytest.fixture
def src(tmp_path: Path) -> Path:
    path = tmp_path / "in.csv"
    survey().to_csv(path, index=False)
    return path


def printed(err: str) -> dict:
    """The groups, sizes and IL of the run's result line on stderr."""
    found = re.search(r"k=\d+: (\d+) groups?, sizes (\d+)\.\.(\d+), IL = ([\d.]+)%", err)
    assert found, err
    groups, smallest, largest, il = found.groups()
    return {"groups": int(groups), "smallest": int(smallest), "largest": int(largest),
            "information_loss": float(il)}


def load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_report_in_memory(src, tmp_path, capsys):
    out, rep = tmp_path / "out.csv", tmp_path / "release.json"
    rc, _, err = run(["protect", src, "-k", 3, "-o", out, "--report", rep], capsys)
    assert rc == 0, err
    record = load(rep)
    assert list(record) == FIELDS
    assert record["microagg"] == dict(environment().itertuples(index=False))
    created = datetime.datetime.fromisoformat(record["created"])
    assert created.utcoffset() == datetime.timedelta(0)
    assert record["input"] == {"name": str(src), "format": "csv", "rows": 60}
    assert record["output"] == {"name": str(out), "format": "csv", "sha256": sha256(out)}
    assert (record["method"], record["k"], record["options"], record["options_given"],
            record["options_drawn"], record["standardize"]) == (
        "mdav", 3, {"engine": ENGINE.engine}, [], [], True)
    assert record["run"] == {"csv": PLAIN_CSV, "na": [], "keep_rest": False, "jobs": 1,
                             "scheduler": None}
    columns = record["columns"]
    assert columns["protected"] == ["id", "income", "age"]
    assert (columns["kept"], columns["strata"], columns["passed"]) == ([], [], ["region",
                                                                              "comment"])
    assert len(columns["notes"]) == 1 and columns["notes"][0].startswith("'id' counts from")
    result = record["result"]
    shown = printed(err)
    assert {k: result[k] for k in ("groups", "smallest", "largest")} == {
        k: shown[k] for k in ("groups", "smallest", "largest")}
    assert round(result["information_loss"], 4) == shown["information_loss"]
    assert result["information_loss"] == pytest.approx(100 * result["sse"] / result["sst"])
    assert result["sst"] == pytest.approx(60 * 3)  # (z-scores: n values per column)
    assert result["strata"] is None
    assert record["audit"] == {"passed": True, "smallest": 3, "rows": 60}
    text = rep.read_text(encoding="utf-8")
    assert text.startswith('{\n  "microagg": {') and text.endswith("}\n")


@pytest.mark.parametrize("jobs", [[], ["--jobs", "2"]], ids=["one process", "jobs 2"])
def test_report_by_strata(src, tmp_path, capsys, jobs):
    out, rep = tmp_path / "out.csv", tmp_path / "release.json"
    rc, _, err = run(["protect", src, "-k", 3, "-o", out, "--strata", "region",
                      "--small-strata", "merge", "--columns", "income,age", "--keep", "id",
                      "--report", rep, *jobs], capsys)
    assert rc == 0, err
    record = load(rep)
    assert list(record) == FIELDS
    assert record["output"]["sha256"] == sha256(out)
    assert record["input"]["rows"] == 60 and record["audit"]["rows"] == 60
    assert record["columns"] == {"protected": ["income", "age"], "kept": ["id"],
                                 "strata": ["region"], "passed": ["comment"], "notes": []}
    assert record["run"] == {"csv": PLAIN_CSV, "na": [], "keep_rest": False,
                             "jobs": int(jobs[1]) if jobs else 1, "scheduler": None}
    result, shown = record["result"], printed(err)
    assert {k: result[k] for k in ("groups", "smallest", "largest")} == {
        k: shown[k] for k in ("groups", "smallest", "largest")}
    assert round(result["information_loss"], 4) == shown["information_loss"]
    _, info = ma.microaggregate(survey(), 3, strata="region", small_strata="merge",
                                columns=["income", "age"], keep="id", return_info=True)
    assert (result["sse"], result["sst"]) == pytest.approx((info.sse, info.sst))  # (as the API)
    strata = result["strata"]
    # strata in key order: hidden-valley, secret-region, tiny-hamlet (2 rows, merged)
    assert (strata["strata"], strata["units"], strata["small_strata"], strata["merged"]) == (
        3, 2, "merge", 1)
    assert strata["merged_strata"] == [{"stratum": 2, "unit": strata["merged_strata"][0]["unit"]}]
    assert strata["merged_omitted"] == 0 and strata["per_unit_omitted"] == 0
    units = strata["per_unit"]
    assert [u["unit"] for u in units] == [0, 1] and sum(u["rows"] for u in units) == 60
    assert sum(u["strata"] for u in units) == 3
    assert sum(u["groups"] for u in units) == result["groups"]
    assert "1 merged" in err


@pytest.mark.parametrize("strata", [False, True], ids=["in memory", "by strata"])
def test_the_report_holds_no_value_of_the_input(src, tmp_path, capsys, strata):
    out, rep = tmp_path / "out.csv", tmp_path / "release.json"
    by = ["--strata", "region", "--small-strata", "merge"] if strata else []
    rc, _, err = run(["protect", src, "-k", 3, "-o", out, "--report", rep, "--na", "NA",
                      "--method", "ivmdav", *by], capsys)
    assert rc == 0, err
    assert "987001..987060" in err  # (the note on stderr quotes the identifier's range)
    if strata:
        assert "tiny-hamlet" in err  # (and the merge, the strata's keys)
    record = load(rep)
    # (the run's options and the method's, resolved, are held: the user's, not the file's)
    assert record["run"]["na"] == ["NA"] and record["options"]["candidates"] == 6
    # (the hex digests, of the release and of the code, may hold a run of digits by chance)
    record["output"]["sha256"], record["microagg"] = "", {}
    text = json.dumps(record, ensure_ascii=False)
    values = [*SECRETS, *(f"{v:.3f}" for v in survey()["income"])]
    assert not [v for v in values if v in text]


def test_the_seed_drawn_is_recorded_and_makes_the_release_again(src, tmp_path, capsys):
    first, rep = tmp_path / "first.csv", tmp_path / "first.json"
    rc, _, err = run(["protect", src, "-k", 3, "--method", "hybrid", "--keep", "id",
                      "--iterations", 5, "-o", first, "--report", rep], capsys)
    assert rc == 0, err
    record = load(rep)
    seed = record["options"]["seed"]
    assert isinstance(seed, int) and record["options_drawn"] == ["seed"]
    assert record["options_given"] == ["iterations"]
    # every option the hybrid ran with: the defaults as their home holds them, K chosen
    # from k (the smallest multiple of 3 that is at least 21), the seed drawn
    assert record["options"] == {**option_defaults(HYBRID, GA), "K": 21, "seed": seed,
                                 "iterations": 5}
    assert record["options"]["population"] == GA.population
    assert f"ran with --seed {seed}" in err
    again, rep2 = tmp_path / "again.csv", tmp_path / "again.json"
    rc, _, err = run(["protect", src, "-k", 3, "--method", "hybrid", "--keep", "id",
                      "--iterations", 5, "--seed", seed, "-o", again, "--report", rep2], capsys)
    assert rc == 0, err
    second = load(rep2)
    assert second["options"] == record["options"] and second["options_drawn"] == []
    assert second["options_given"] == ["seed", "iterations"]  # (in the registry's order)
    assert second["output"]["sha256"] == record["output"]["sha256"] == sha256(first)


def test_report_records_the_dialect_na_keep_rest_and_options_in_memory(tmp_path, capsys):
    """A spreadsheet's CSV (``;``, decimal comma, a byte-order mark), ``--na``,
    ``--keep-rest`` and V-MDAV with one option given: the record says each, and the
    option not given at its default."""
    src, out, rep = tmp_path / "in.csv", tmp_path / "out.csv", tmp_path / "release.json"
    survey().to_csv(src, sep=";", decimal=",", index=False, encoding="utf-8-sig")
    rc, _, err = run(["protect", src, "-k", 3, "-o", out, "--report", rep, "--delimiter", ";",
                      "--decimal", ",", "--na", "refused,NA", "--keep-rest", "--columns",
                      "income,age", "--method", "vmdav", "--gamma", 1.1], capsys)
    assert rc == 0, err
    assert out.read_bytes().startswith(b"\xef\xbb\xbfid;region;")  # (as the record says)
    record = load(rep)
    assert list(record) == FIELDS
    assert record["options"] == {"engine": ENGINE.engine, "gamma": 1.1,
                                 "leftover": VMDAV.leftover}
    assert (record["options_given"], record["options_drawn"]) == (["gamma"], [])
    assert record["run"] == {
        "csv": {**PLAIN_CSV, "delimiter": ";", "decimal": ",", "bom": True},
        "na": ["refused", "NA"], "keep_rest": True, "jobs": 1, "scheduler": None}
    assert record["columns"]["passed"] == ["id", "region", "comment"]


def test_report_records_the_dialect_jobs_and_options_by_strata(tmp_path, capsys):
    """By strata on 2 processes, a file named .tsv (tab-separated by its name, no
    --delimiter), ``--na``, IV-MDAV with no option given: every option at its default,
    ``candidates`` chosen from k (2k)."""
    src, out, rep = tmp_path / "in.tsv", tmp_path / "out.tsv", tmp_path / "release.json"
    survey().to_csv(src, sep="\t", index=False)
    rc, _, err = run(["protect", src, "-k", 3, "-o", out, "--report", rep, "--strata",
                      "region", "--small-strata", "merge", "--keep", "id", "--jobs", 2,
                      "--na", "NA", "--method", "ivmdav"], capsys)
    assert rc == 0, err
    record = load(rep)
    assert list(record) == FIELDS
    assert record["options"] == {"engine": ENGINE.engine, "gamma": IVMDAV.gamma,
                                 "candidates": 2 * 3, "self_neighbour": IVMDAV.self_neighbour}
    assert (record["options_given"], record["options_drawn"]) == ([], [])
    assert record["run"] == {"csv": {**PLAIN_CSV, "delimiter": "\t"}, "na": ["NA"],
                             "keep_rest": False, "jobs": 2, "scheduler": None}
    assert record["columns"]["strata"] == ["region"]


def test_a_parquet_run_records_no_csv_dialect(tmp_path, capsys):
    pytest.importorskip("pyarrow")
    src, out, rep = tmp_path / "in.parquet", tmp_path / "out.parquet", tmp_path / "r.json"
    survey().to_parquet(src, index=False)
    rc, _, err = run(["protect", src, "-k", 3, "-o", out, "--report", rep], capsys)
    assert rc == 0, err
    assert load(rep)["run"] == {"csv": None, "na": [], "keep_rest": False, "jobs": 1,
                                "scheduler": None}


def test_standard_output_has_no_hash(src, tmp_path, capsys):
    rep = tmp_path / "release.json"
    rc, out, err = run(["protect", src, "-k", 3, "--report", rep], capsys)
    assert rc == 0, err
    assert out.startswith("id,")
    assert load(rep)["output"] == {"name": "-", "format": "csv", "sha256": None}


def _refusals(src: Path, tmp_path: Path) -> dict:
    out = tmp_path / "out.csv"
    (tmp_path / "old.json").write_text("{}", encoding="utf-8")
    (tmp_path / "folder").mkdir()
    os.symlink(out, tmp_path / "link.json")
    return {
        "the input": (src, "refusing to write over the input file"),
        "the input, spelled otherwise": (tmp_path / "folder" / ".." / "in.csv",
                                         "refusing to write over the input file"),
        "the output, spelled otherwise": (tmp_path / "." / "out.csv",
                                          "refusing to write the report over the output file"),
        "a link to the output": (tmp_path / "link.json",
                                 "refusing to write the report over the output file"),
        "an existing file": (tmp_path / "old.json", "old.json exists; use --force"),
        "a folder": (tmp_path / "folder", "is a folder; give a file name with --report"),
        "a missing folder": (tmp_path / "nowhere" / "r.json", "nowhere of the report file "
                                                              "does not exist"),
        "standard output": ("-", "--report writes a file, not standard output"),
    }


@pytest.mark.parametrize("case", ["the input", "the input, spelled otherwise",
                                  "the output, spelled otherwise", "a link to the output",
                                  "an existing file", "a folder", "a missing folder",
                                  "standard output"])
def test_report_files_refused_at_start_up(src, tmp_path, capsys, case):
    report, expected = _refusals(src, tmp_path)[case]
    before = sorted(p.name for p in tmp_path.iterdir())
    force = ["--force"] if "output" in case else []  # (not a way round: still refused)
    rc, _, err = run(["protect", src, "-k", 3, "-o", tmp_path / "out.csv", "--report", report,
                      *force], capsys)
    assert expected in one_line_error(rc, err)
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    assert (tmp_path / "old.json").read_text(encoding="utf-8") == "{}"


def test_force_replaces_an_existing_report(src, tmp_path, capsys):
    rep = tmp_path / "release.json"
    rep.write_text("{}", encoding="utf-8")
    rc, _, err = run(["protect", src, "-k", 3, "-o", tmp_path / "out.csv", "--report", rep,
                      "--force"], capsys)
    assert rc == 0, err
    assert load(rep)["k"] == 3


@pytest.mark.parametrize("argv", [["--columns", "income,nosuch"],
                                  ["--strata", "region", "--keep", "id"]],
                         ids=["a column that is not there", "a small stratum, not merged"])
def test_a_failed_run_writes_no_report(src, tmp_path, capsys, argv):
    before = sorted(p.name for p in tmp_path.iterdir())
    rc, _, err = run(["protect", src, "-k", 3, "-o", tmp_path / "out.csv", "--report",
                      tmp_path / "release.json", *argv], capsys)
    one_line_error(rc, err)
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # (no temporary folder)


@pytest.mark.parametrize("strata", [[], ["--strata", "region", "--small-strata", "merge"]],
                         ids=["in memory", "by strata"])
def test_a_release_not_published_leaves_no_report(src, tmp_path, capsys, monkeypatch, strata):
    """The report is written with the release and published after it: another run's file
    taking the output's name meanwhile stops the run, and no report appears."""
    import microagg._cli as cli
    import microagg._cli_strata as cli_strata

    out = tmp_path / "out.csv"
    module, name = (cli_strata, "protect_stream") if strata else (cli, "protect_decided")
    real = getattr(module, name)

    def other_run_meanwhile(*args, **kwargs):
        out.write_text("the other run's output\n", encoding="utf-8")
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, other_run_meanwhile)
    rc, _, err = run(["protect", src, "-k", 3, "-o", out, "--report", tmp_path / "r.json",
                      *strata], capsys)
    assert str(out) in one_line_error(rc, err)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv", "out.csv"]


@pytest.mark.parametrize("strata", [[], ["--strata", "region", "--small-strata", "merge"]],
                         ids=["in memory", "by strata"])
def test_an_interrupt_while_publishing_leaves_nothing(src, tmp_path, capsys, monkeypatch,
                                                      strata):
    """Ctrl-C as the release is being published (the report already written in its private
    folder): exit 130, no release, no report, no temporary folder."""
    import microagg._cli_io as cli_io

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli_io, "publish", interrupted)
    rc, _, err = run(["protect", src, "-k", 3, "-o", tmp_path / "out.csv", "--report",
                      tmp_path / "r.json", *strata], capsys)
    assert rc == 130, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv"]
