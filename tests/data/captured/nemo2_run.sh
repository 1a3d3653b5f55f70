#!/bin/bash
# Capture driver. Runs each training once, one at a time, capturing stdout+stderr to a file.
set -u
OUT=/tmp/cap-nemo/out
PY=/tmp/cap-nemo/venv/bin/python
V=nemo-2.7.3
export NEMO_CPU_SHIM=1
export PYTHONPATH=$OUT/shim:$OUT   # shim/sitecustomize.py: nemo2_cpu_shim.py
cd $OUT
what=${1:-all}
if [ "$what" = all ] || [ "$what" = printer ]; then
  rm -rf /tmp/cap-nemo/runs/printer
  nice -n 10 $PY nemo2_tiny_gpt_fit.py --log-dir /tmp/cap-nemo/runs/printer --max-steps 24 > $OUT/${V}_megatron-gpt-tiny_1rank-printer_cpu.log 2>&1; echo "printer rc=$?"
  nice -n 10 $PY nemo2_tiny_gpt_fit.py --log-dir /tmp/cap-nemo/runs/printer --max-steps 30 > $OUT/${V}_megatron-gpt-tiny_1rank-printer-resume_cpu.log 2>&1; echo "printer-resume rc=$?"
fi
if [ "$what" = all ] || [ "$what" = bar ]; then
  rm -rf /tmp/cap-nemo/runs/bar
  nice -n 10 $PY nemo2_tiny_gpt_fit.py --progress bar --log-dir /tmp/cap-nemo/runs/bar --max-steps 24 > $OUT/${V}_megatron-gpt-tiny_1rank-progressbar_cpu.log 2>&1; echo "bar rc=$?"
  nice -n 10 $PY nemo2_tiny_gpt_fit.py --progress bar --log-dir /tmp/cap-nemo/runs/bar --max-steps 30 > $OUT/${V}_megatron-gpt-tiny_1rank-progressbar-resume_cpu.log 2>&1; echo "bar-resume rc=$?"
fi
if [ "$what" = all ] || [ "$what" = ddp ]; then
  rm -rf /tmp/cap-nemo/runs/ddp
  timeout 240 nice -n 10 $PY -m torch.distributed.run --nproc-per-node 2 nemo2_tiny_gpt_fit.py --no-ckpt --log-dir /tmp/cap-nemo/runs/ddp --max-steps 24 > $OUT/${V}_megatron-gpt-tiny_2rank-dp-printer-nockpt_cpu.log 2>&1; echo "ddp rc=$?"
fi
if [ "$what" = all ] || [ "$what" = timers ]; then
  rm -rf /tmp/cap-nemo/runs/timers
  nice -n 10 $PY nemo2_tiny_gpt_fit.py --no-ckpt --megatron-log-level 2 --log-dir /tmp/cap-nemo/runs/timers --max-steps 24 > $OUT/${V}_megatron-gpt-tiny_1rank-printer-megatron-log-level-2-nockpt_cpu.log 2>&1; echo "timers rc=$?"
fi
