"""A training loop that prints its step and loss as each step ends, and no time (as a JAX or
hand-written loop often does): `step N/T loss X`, flushed, 200 ms a step, step 12 900 ms."""
import sys
import time

STEPS, SLOW_STEP = 24, 12

for step in range(1, STEPS + 1):
    time.sleep(0.9 if step == SLOW_STEP else 0.2)
    print(f"step {step}/{STEPS} loss {2.5 - step / 100:.4f}", flush=True)
sys.exit(0)
