#!/bin/sh
# The c10d rendezvous numbers the nodes by their agents' descriptors (host, then pid) as
# strings: task 0 forks 20 times before it starts its torchrun, whose pid is then the higher.
CMD="python -m torch.distributed.run --nnodes 2 --nproc-per-node 2 --rdzv-backend c10d --rdzv-endpoint 127.0.0.1:29633 --rdzv-id cap-srun-c10d --tee 3 log_dir_steps.py"
if [ "$SLURM_PROCID" = 0 ]; then
  for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do /bin/true; done
  $CMD
else
  exec $CMD
fi
