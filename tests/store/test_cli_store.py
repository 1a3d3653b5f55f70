"""`ridgescope jobs / trend / compare / sql` against the seeded store."""
from __future__ import annotations

import json

import pytest

from ridgescope.cli import common, main
from ridgescope.sql.store import ReadOnlyViolation, StoreError


@pytest.fixture
def cli(seeded, monkeypatch, capsys):
    monkeypatch.setattr(common, "open_store", lambda settings: seeded)

    def run(*argv):
        code = main.main(list(argv))
        out, err = capsys.readouterr()
        return code, out, err
    return run


def test_compare_names_the_lane_that_changed(cli):
    code, out, _ = cli("compare", "job-11", "job-12", "--format", "json")
    result = json.loads(out)
    assert code == 0 and result["changed_lane"] == "communication"
    assert result["changed_delta_pct"] == pytest.approx(10.0)
    code, out, _ = cli("compare", "job-11", "job-12")
    assert "the communication lane changed most" in out and "+10.0%" in out


def test_compare_unknown_job(cli):
    code, _, err = cli("compare", "job-11", "no-such-job")
    assert code == 1 and "no steps recorded for job 'no-such-job'" in err


def test_jobs(cli):
    code, out, _ = cli("jobs", "--tag", "team=vision", "--format", "json")
    assert code == 0 and sorted(j["job"] for j in json.loads(out)) == [
        f"job-{i}" for i in range(21, 31)]
    code, out, _ = cli("jobs", "--since", "400d", "--limit", "5")
    assert code == 0 and out.splitlines()[0].startswith("job") and len(out.splitlines()) == 6
    code, _, err = cli("jobs", "--since", "soon")
    assert code == 1 and "--since" in err


def test_trend(cli):
    code, out, _ = cli("trend", "--metric", "lane:communication", "--by", "job",
                       "--tag", "team=llm", "--format", "json")
    points = {p["key"]: p["value"] for p in json.loads(out)}
    assert code == 0 and len(points) == 20
    assert points["job-12"] / points["job-11"] == pytest.approx(1.10)
    code, out, _ = cli("trend", "--metric", "gpu_util", "--by", "day", "--format", "chart")
    assert code == 0 and out.startswith("gpu_util") and "█" in out
    code, out, _ = cli("trend", "--metric", "slow_share", "--by", "host")
    assert code == 0 and "node-07" in out
    code, _, err = cli("trend", "--by", "host", "--tag", "team=llm")
    assert code == 1 and "--tag cannot be combined with --by host" in err


WRITES = [
    "DROP TABLE steps",
    "drop table steps",
    "/* sneaky */ DROP TABLE steps",
    "-- comment\nDROP TABLE steps",
    "SELECT 1; DROP TABLE steps",
    "INSERT INTO steps (job) VALUES ('x')",
    "ALTER TABLE steps DELETE WHERE 1",
    "TRUNCATE TABLE steps",
    "OPTIMIZE TABLE steps FINAL",
    "RENAME TABLE steps TO steps2",
    "SET readonly = 0",
    "/**/ SET max_result_rows = 0",
    "CREATE TABLE x (a Int32) ENGINE = Memory",
]


@pytest.mark.parametrize("sql", WRITES)
def test_sql_refuses_writes(seeded, sql):
    with pytest.raises(ReadOnlyViolation):
        seeded.query(sql, read_only=True)
    assert seeded.query("SELECT count() FROM steps FINAL")[1] == [(6000,)]


def test_sql_command_is_read_only_with_a_clear_message(cli, seeded):
    code, out, err = cli("sql", "DROP TABLE steps")
    assert code == 1 and out == ""
    assert "read-only" in err and "DROP" in err
    assert seeded.query("SELECT count() FROM steps FINAL")[1] == [(6000,)]


def test_sql_row_limit_and_timeout(cli, seeded):
    code, out, _ = cli("sql", "SELECT number FROM numbers(1000000)", "--max-rows", "7",
                       "--format", "json")
    assert code == 0 and len(json.loads(out)) == 7
    with pytest.raises(StoreError):
        seeded.query("SELECT count() FROM numbers(100000000000) WHERE NOT ignore(sleep(0.5))",
                     timeout_s=1)


def test_sql_runs_a_library_query_by_name(cli):
    """`--query NAME --param k=v` renders the library's query as `library.render` does: the
    same answer as the library's own test gives."""
    code, out, _ = cli("sql", "--query", "top_slow_steps", "--param", "job=job-01", "--param", "limit=3",
                       "--format", "json")
    rows = json.loads(out)
    assert code == 0 and [(r["step"], r["cause"], r["excess_ms"]) for r in rows] == [
        (10, "input", 900.0), (20, "communication", 700.0), (30, "compute", 500.0)]
    code, out, _ = cli("sql", "--query", "checkpoint_overhead", "--param", 'tags={"team": "vision"}',
                       "--format", "json")
    assert code == 0 and sorted(r["job"] for r in json.loads(out)) == [f"job-{i}" for i in range(21, 31)]
    code, out, _ = cli("sql", "--list")
    assert code == 0 and "first_failure job=JOB" in out and "hang_progress job=JOB" in out


@pytest.mark.parametrize("argv,message", [
    (["--query", "no_such_query", "--param", "job=x"], "no query 'no_such_query'"),
    (["--query", "top_slow_steps"], "'job' is required"),
    (["--query", "top_slow_steps", "--param", "job"], "expected NAME=VALUE"),
    (["--query", "top_slow_steps", "--param", "job=x", "--param", "nope=1"], "unknown parameters"),
    (["SELECT 1", "--query", "top_slow_steps"], "either SQL or --query"),
    (["SELECT 1", "--param", "job=x"], "--param goes with --query"),
])
def test_sql_library_query_errors_are_clear(cli, argv, message):
    code, out, err = cli("sql", *argv)
    assert code == 1 and out == "" and message in err
