"""Rank 0 of a 2-rank gloo job whose rank 1 never starts: the store's wait for its clients
times out (a node that never came up, a wrong address on it)."""
from datetime import timedelta

import torch.distributed as dist

dist.init_process_group("gloo", rank=0, world_size=2, init_method="tcp://127.0.0.1:29555",
                        timeout=timedelta(seconds=5))
