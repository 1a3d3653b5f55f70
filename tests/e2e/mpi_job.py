"""The spine's demo job (ridgescope.cli.demo_job) started by an MPI launcher, as HPC sites start
PyTorch (`mpirun -np N python train.py`).  Each process learns its rank from the launcher's
variables, after torch is imported, and either sets torch's `env://` variables from them, as
DeepSpeed's `mpi_discovery` does, or (`--no-rank-env`) joins the group by TCP with the rank
passed in, as a job that never sets RANK does (Horovod's, say).

    mpi_job.py MASTER_PORT [--no-rank-env]
"""
from __future__ import annotations

import faulthandler
import os
import signal
import sys

import torch.distributed as dist


MPI_VARS = (("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"),
            ("PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID"))
"""Open MPI's mpirun's, and MPICH's mpiexec's (Hydra)."""


def mpi_placement() -> tuple[int, int, int]:
    """(rank, world size, local rank) as the launcher names the process."""
    for rank, size, local in MPI_VARS:
        if rank in os.environ:
            return int(os.environ[rank]), int(os.environ[size]), int(os.environ.get(local, os.environ[rank]))
    raise SystemExit("mpi_job.py: no MPI launcher's variables: start it with mpirun or mpiexec")


HUNG_AFTER_S = 200
"""Past this (the job takes about 20 s), a rank prints where each of its threads is and ends, so
that a hang fails its test saying where, before the test's own limit (300 s).  An alarm, not a
timer thread: the DataLoader's forked workers inherit no alarm."""


if __name__ == "__main__":
    faulthandler.register(signal.SIGALRM, all_threads=True, chain=True)   # then SIGALRM ends it
    signal.alarm(HUNG_AFTER_S)
    port, rank_env = sys.argv[1], "--no-rank-env" not in sys.argv
    rank, world, local = mpi_placement()
    if rank_env:
        os.environ.update(RANK=str(rank), WORLD_SIZE=str(world), LOCAL_RANK=str(local),
                          MASTER_ADDR="127.0.0.1", MASTER_PORT=port)
    else:
        dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world)
    from ridgescope.cli.demo_job import main
    main()
