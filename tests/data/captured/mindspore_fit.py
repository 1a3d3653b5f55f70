"""A tiny MindSpore run on the CPU, to capture what `Model.train`'s callbacks print:
LossMonitor each step and TimeMonitor each epoch.

SINK=N trains with dataset sinking, N steps a sink (an 'epoch' of TimeMonitor's); DIST=1 joins
the job msrun starts (`msrun --worker_num=2 --local_worker_num=2 ... mindspore_fit.py`)."""
import os
import time

import numpy as np
import mindspore as ms
from mindspore import nn
from mindspore.dataset import GeneratorDataset
from mindspore.train import LossMonitor, Model, TimeMonitor

ms.set_context(mode=ms.PYNATIVE_MODE)
ms.set_device("CPU")
shard = (0, 1)
if os.environ.get("DIST"):
    from mindspore.communication import get_group_size, get_rank, init
    init()
    ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.DATA_PARALLEL, gradients_mean=True)
    shard = (get_rank(), get_group_size())


class Slow(nn.Cell):
    """A linear layer whose 7th call sleeps 0.3 s: a slow step."""

    def __init__(self):
        super().__init__()
        self.dense = nn.Dense(8, 1)
        self.calls = 0

    def construct(self, x):
        self.calls += 1
        if self.calls == 7:
            time.sleep(0.3)
        return self.dense(x)


rng = np.random.default_rng(0)
data = [(rng.standard_normal(8).astype(np.float32), rng.standard_normal(1).astype(np.float32)) for _ in range(96)]
ds = GeneratorDataset(data, ["x", "y"], shuffle=False, num_shards=shard[1], shard_id=shard[0]).batch(8)
net = Slow()
model = Model(net, nn.MSELoss(), nn.SGD(net.trainable_params(), 0.01))
sink = int(os.environ.get("SINK", "0"))
model.train(2 if not sink else 2 * ds.get_dataset_size() // sink, ds, callbacks=[LossMonitor(), TimeMonitor()],
            dataset_sink_mode=bool(sink), sink_size=sink or -1)
