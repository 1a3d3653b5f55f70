"""A pipeline transform that sleeps 0.5 s on the 9th sample it processes (train pipeline,
num_workers=0, batch 2): iteration 5 of the first epoch the process runs waits 0.5 s for data."""
import time
from mmcv.transforms import BaseTransform
from mmdet.registry import TRANSFORMS


@TRANSFORMS.register_module()
class SlowOnce(BaseTransform):
    def __init__(self, nth=9, seconds=0.5):
        self.nth, self.seconds, self.calls = nth, seconds, 0

    def transform(self, results):
        self.calls += 1
        if self.calls == self.nth:
            time.sleep(self.seconds)
        return results
