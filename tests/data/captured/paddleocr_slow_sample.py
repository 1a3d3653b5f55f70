# Makes one training sample of a PaddleOCR run slow, to capture how its log shows it.  Loaded as
# `sitecustomize.py` (its folder on PYTHONPATH): once `ppocr.data.simple_dataset` is imported, the
# train dataset sleeps PO_SLOW_SECONDS (0.5) s, once a process, before sample PO_SLOW_IDX loads.
# PaddleOCR's own files are not changed.
import importlib.abc, importlib.machinery, os, sys, time

_TARGET = "ppocr.data.simple_dataset"
_IDX = os.environ.get("PO_SLOW_IDX")
_SECS = float(os.environ.get("PO_SLOW_SECONDS", "0.5"))
_done = [False]

def _patch(mod):
    cls = mod.SimpleDataSet
    orig = cls.__getitem__
    def __getitem__(self, idx):
        if self.mode == "train" and not _done[0] and idx == int(_IDX):
            _done[0] = True
            time.sleep(_SECS)
        return orig(self, idx)
    cls.__getitem__ = __getitem__

class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path, target=None):
        if fullname != _TARGET:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None:
            return None
        real_exec = spec.loader.exec_module
        def exec_module(module):
            real_exec(module)
            _patch(module)
        spec.loader.exec_module = exec_module
        return spec

if _IDX is not None:
    sys.meta_path.insert(0, _Finder())
