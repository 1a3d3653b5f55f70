"""An MLPerf-style run logged through mlcommons' own logger (mlperf-logging 4.1.68): the
compliance keys around a tiny regression trained with torch, `tracked_stats` (throughput, loss,
lr, the step in the metadata) every 5 steps as NVIDIA's and others' submissions print them, and an
evaluation at the end of each of 2 blocks of 20 steps."""
import time

import torch
from mlperf_logging import mllog
from mlperf_logging.mllog import constants

mllogger = mllog.get_mllogger()
mllog.config(root_dir="/job")
mllogger.event(key=constants.CACHE_CLEAR, value=True)
mllogger.start(key=constants.INIT_START)
torch.manual_seed(0)
x, y = torch.randn(4096, 16), torch.randn(4096, 1)
model = torch.nn.Linear(16, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
batch = 64
mllogger.event(key=constants.GLOBAL_BATCH_SIZE, value=batch)
mllogger.end(key=constants.INIT_STOP)
mllogger.start(key=constants.RUN_START)
step = 0
for block in range(2):
    mllogger.start(key=constants.BLOCK_START, metadata={constants.FIRST_EPOCH_NUM: block + 1,
                                                        constants.EPOCH_COUNT: 1})
    started = time.perf_counter()
    for i in range(20):
        j = (step * batch) % 4096
        loss = torch.nn.functional.mse_loss(model(x[j:j + batch]), y[j:j + batch])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        step += 1
        if step % 5 == 0:
            throughput = 5 * batch / (time.perf_counter() - started)
            mllogger.event(key="tracked_stats", value={"throughput": throughput, "loss": loss.item(),
                                                       "lr": optimizer.param_groups[0]["lr"]},
                           metadata={"step": step})
            started = time.perf_counter()
    mllogger.start(key=constants.EVAL_START, metadata={constants.EPOCH_NUM: block + 1})
    with torch.no_grad():
        accuracy = 1.0 / (1.0 + torch.nn.functional.mse_loss(model(x), y).item())
    mllogger.event(key=constants.EVAL_ACCURACY, value=accuracy, metadata={constants.EPOCH_NUM: block + 1})
    mllogger.end(key=constants.EVAL_STOP, metadata={constants.EPOCH_NUM: block + 1})
    mllogger.end(key=constants.BLOCK_STOP, metadata={constants.FIRST_EPOCH_NUM: block + 1})
mllogger.end(key=constants.RUN_STOP, metadata={constants.STATUS: constants.SUCCESS})
