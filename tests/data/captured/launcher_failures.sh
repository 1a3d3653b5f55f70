#!/bin/sh
# Launchers' and Slurm's words when a job's process dies (see README.md): Slurm 22.05.8's srun
# and slurmstepd on one node, Open MPI 4.1.4's mpirun, each with two processes.  Run in an
# empty directory, with slurmctld and slurmd up.
srun -n 2 --label sh -c 'echo step 1 loss 2.0; if [ "$SLURM_PROCID" = 1 ]; then exit 3; fi; sleep 1' \
  > slurm-22.05.8_srun-label_task1-exit3_2task.log 2>&1
srun -n 2 --label sh -c 'echo step 1; if [ "$SLURM_PROCID" = 1 ]; then kill -9 $$; fi; sleep 2' \
  > slurm-22.05.8_srun-label_task1-sigkill_2task.log 2>&1
srun -n 2 --label sh -c 'if [ "$SLURM_PROCID" = 0 ]; then kill -SEGV $$; fi; sleep 2' \
  > slurm-22.05.8_srun-label_task0-sigsegv_2task.log 2>&1
srun -n 2 --label sh -c 'echo step 1; sleep 300' > slurm-22.05.8_srun-label_scancel_2task.log 2>&1 &
sleep 4
scancel "$(squeue -h -o %i | sort -n | tail -1)"
wait
srun -t 1 -n 2 --label sh -c 'echo step 1; sleep 600' > slurm-22.05.8_srun-label_time-limit_2task.log 2>&1
srun -n 2 --label sh -c 'echo step 1; sleep 300' > slurm-22.05.8_srun-label_node-failure_2task.log 2>&1 &
sleep 5
scontrol update nodename="$(hostname)" state=down reason=capture    # the node fails under the step
wait
sleep 10      # ReturnToService=2: the node comes back
sbatch -n 2 -o "$PWD/slurm-22.05.8_sbatch-srun-label_node-failure_2task.log" \
  --wrap "srun --label sh -c 'echo step 1; sleep 300'"
sleep 6
scontrol update nodename="$(hostname)" state=down reason=capture
sleep 20
scancel "$(squeue -h -o %i | sort -n | tail -1)"      # the job requeued after the failure
for how in kill exit; do
  mpirun --allow-run-as-root --oversubscribe -n 2 python3 -c "
import os, signal, sys, time
print('step 1', flush=True)
if os.environ['OMPI_COMM_WORLD_RANK'] == '1':
    os.kill(os.getpid(), signal.SIGKILL) if '$how' == 'kill' else sys.exit(3)
time.sleep(2)" > "openmpi-4.1.4_mpirun_rank1-${how}_2proc.log" 2>&1
done
