"""Loaded as `sitecustomize.py` for the MMDetection captures (it is not MMDetection's or MMCV's code).

mmcv-lite 2.1.0 ships the pure-Python mmcv.ops modules but no compiled
extension `mmcv._ext`, so `import mmcv.ops` (done by mmdet at import time)
fails with ModuleNotFoundError.  This file registers a stand-in module
`mmcv._ext` in sys.modules:
  * `nms(bboxes, scores, iou_threshold, offset)` -> torchvision.ops.nms
    (offset must be 0, which is what MMDetection uses);
  * every other kernel name resolves to a stub that raises
    NotImplementedError if it is ever *called* (it only needs to exist so
    that mmcv.utils.ext_loader.load_ext's hasattr() checks pass).
So MMCV's own Python code (NMSop, nms, batched_nms, ...) runs unchanged and
only the C++ NMS kernel is replaced by torchvision's.
"""
import importlib.machinery
import sys
import types


def _nms(bboxes, scores, iou_threshold=0.5, offset=0):
    if offset != 0:
        raise NotImplementedError('shim mmcv._ext.nms supports offset=0 only')
    import torchvision
    return torchvision.ops.nms(bboxes, scores, float(iou_threshold))


class _ExtShim(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith('__'):
            raise AttributeError(name)

        def _stub(*args, **kwargs):
            raise NotImplementedError(
                f'mmcv._ext.{name} is not available (capture shim: '
                'mmcv-lite has no compiled ops)')
        _stub.__name__ = name
        return _stub


_ext = _ExtShim('mmcv._ext', 'capture shim for mmcv compiled ops')
_ext.nms = _nms
# A spec with loader=None: pkgutil.find_loader('mmcv._ext') returns None, so
# mmengine's mmcv_full_available() truthfully reports False.
_ext.__spec__ = importlib.machinery.ModuleSpec('mmcv._ext', None)
sys.modules.setdefault('mmcv._ext', _ext)
