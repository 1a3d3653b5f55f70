# A small wrapper that makes the data loader sleep when it fetches the
# first sample of a chosen training step, so one step is deliberately slow.
import os
import sys
import time

from torch.utils.data import Dataset


class SlowAtSample(Dataset):
    """Wraps a map-style dataset; sleeps `delay` s when sample `slow_index` is fetched.

    With NeMo's MegatronPretrainingSampler the step NeMo prints as `global_step: k` (from 0)
    reads samples k*GBS ... (k+1)*GBS-1; each rank its MBS of them from k*GBS + rank*MBS.
    """

    def __init__(self, ds, slow_index, delay=0.5):
        self.ds, self.slow_index, self.delay = ds, slow_index, delay

    def __len__(self):
        return len(self.ds)

    def __getitem__(self, idx):
        if idx == self.slow_index:
            if os.environ.get("SLOW_NOTE") == "1":
                print(f"[slow_data] sleeping {self.delay}s on sample {idx}", file=sys.stderr, flush=True)
            time.sleep(self.delay)
        return self.ds[idx]

    def __getattr__(self, name):  # collate_fn etc. come from the wrapped dataset
        return getattr(self.ds, name)
