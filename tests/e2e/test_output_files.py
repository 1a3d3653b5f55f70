"""`ridgescope run` around `torchrun --redirects 3`: the workers' output goes to files under
`--log-dir`, none of it to the console, and is read from those files as they grow, each worker's
as its rank's (probes/output_files.py).  Before, such a job run with the hooks off had no step at
all, and the error that brought a job down was nowhere: torchrun's report says only `To enable
traceback see ...`.  And the log files a job's logger writes apart from its output, read where
`--log-file` names them."""
from __future__ import annotations

import json
import sys
import time
import uuid
from pathlib import Path

import pytest
from support import cli

LOOP = Path(__file__).with_name("untimed_loop.py")
STEPS, SLOW_STEP = 24, 12

pytestmark = [pytest.mark.slow, pytest.mark.tansu]


def redirected(tmp_path: Path, *script: str) -> list[str]:
    pytest.importorskip("torch")
    return [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", "2", "--redirects", "3",
            "--log-dir", str(tmp_path / "logs"), *script]


def test_the_slow_rank_of_workers_writing_to_their_log_files_is_found(tansu_stack, tmp_path):
    """Rank 1's step 12 is slow (untimed_loop.py `--slow-rank 1`): found, on rank 1, from the
    read times of its own file's lines."""
    job = f"redirected-{uuid.uuid4().hex[:6]}"
    result = cli("run", *tansu_stack.flags, "--job", job, "--no-hooks", "--",
                 *redirected(tmp_path, str(LOOP), "--slow-rank", "1"), timeout=180)
    assert "NOT delivered" not in result.stderr and "step 1/" not in result.stdout
    assert "4 file(s) the job sent its output to" in result.stderr

    steps = tansu_stack.wait_for_steps(job, STEPS - 1)
    assert [s["step"] for s in steps] == list(range(2, STEPS + 1))
    by_step = {s["step"]: s for s in steps}
    assert by_step[SLOW_STEP]["slow"] and by_step[SLOW_STEP]["culprit_rank"] == 1, by_step[SLOW_STEP]
    rows = tansu_stack.sql(f"SELECT rank, count() AS n FROM step_rank FINAL WHERE job = '{job}' "
                           f"GROUP BY rank ORDER BY rank")
    assert [(r["rank"], r["n"]) for r in rows] == [(0, STEPS - 1), (1, STEPS - 1)]


def test_the_slow_rank_of_workers_logging_to_files_of_their_own_is_found(tansu_stack, tmp_path):
    """Each worker's logger writes `log.txt.rankN` and prints nothing (Detectron2's layout for
    ranks past 0): `--log-file 'log.txt.rank*' --rank-in-path` reads them, and rank 1's slow
    step 12 is found on rank 1."""
    job = f"log-files-{uuid.uuid4().hex[:6]}"
    script = tmp_path / "logs_to_files.py"
    script.write_text("import logging, os, time\n"
                      "rank = int(os.environ['RANK'])\n"
                      f"logging.basicConfig(filename=f'{tmp_path}/log.txt.rank{{rank}}', level=logging.INFO)\n"
                      f"for step in range(1, {STEPS + 1}):\n"
                      f"    time.sleep(0.9 if (rank, step) == (1, {SLOW_STEP}) else 0.2)\n"
                      f"    logging.info(f'step {{step}}/{STEPS} loss {{2.5 - step / 100:.4f}}')\n")
    result = cli("run", *tansu_stack.flags, "--job", job, "--no-hooks", "--log-file", f"{tmp_path}/log.txt.rank*",
                 "--rank-in-path", r"rank(\d+)$", "--", sys.executable, "-m", "torch.distributed.run",
                 "--nproc-per-node", "2", str(script), timeout=180)
    assert "NOT delivered" not in result.stderr and "2 file(s)" in result.stderr

    steps = tansu_stack.wait_for_steps(job, STEPS - 1)
    by_step = {s["step"]: s for s in steps}
    assert by_step[SLOW_STEP]["slow"] and by_step[SLOW_STEP]["culprit_rank"] == 1, by_step[SLOW_STEP]
    rows = tansu_stack.sql(f"SELECT rank, count() AS n FROM step_rank FINAL WHERE job = '{job}' "
                           f"GROUP BY rank ORDER BY rank")
    assert [(r["rank"], r["n"]) for r in rows] == [(0, STEPS - 1), (1, STEPS - 1)]


def test_the_error_that_brought_the_job_down_is_read_from_its_ranks_file(tansu_stack, tmp_path):
    """Rank 1 raises CUDA's out-of-memory error into its stderr file; rank 0 is stopped by
    torchrun.  `first_failure` names rank 1 and its error, which the console never showed."""
    job = f"redirected-oom-{uuid.uuid4().hex[:6]}"
    script = tmp_path / "oom.py"
    script.write_text("import os, time\n"
                      "for step in range(1, 4):\n"
                      "    time.sleep(0.2)\n"
                      "    print(f'step {step}/10 loss 2.{step}', flush=True)\n"
                      "if os.environ['RANK'] == '1':\n"
                      "    raise RuntimeError('CUDA out of memory. Tried to allocate 2.00 GiB')\n"
                      "time.sleep(30)\n")
    result = cli("run", *tansu_stack.flags, "--job", job, "--no-hooks", "--", *redirected(tmp_path, str(script)),
                 timeout=180, check=False)
    assert result.returncode == 1 and "CUDA out of memory" not in result.stdout + result.stderr.split("[ridgescope]")[0]

    deadline, rows = time.monotonic() + 60, []
    while time.monotonic() < deadline:
        rows = json.loads(cli("sql", *tansu_stack.flags, "--format", "json", "--query", "first_failure",
                              "--param", f"job={job}").stdout)
        if rows and rows[0]["error"]:
            break
        time.sleep(1)
    assert rows and (rows[0]["rank"], rows[0]["victim"]) == (1, False), rows
    assert rows[0]["error"] == "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB", rows
