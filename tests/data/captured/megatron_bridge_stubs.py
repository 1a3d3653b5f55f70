"""Scoped stand-ins for transformer_engine / modelopt / nvidia_resiliency_ext.

megatron.bridge 0.3.1 imports these at module level (peft/lora*.py, models/gpt_full_te_layer_
autocast_spec.py, training/checkpointing.py, training/train.py, training/gpt_step.py,
training/pretrain.py, ...).  None can be installed on this CPU-only Python 3.11 box.

builtins.__import__ is wrapped: when the *importing module* is megatron.bridge.* and the
requested top-level name is one of STUBBED, a stub object is returned WITHOUT touching
sys.modules; every other importer (megatron.core's `try: import transformer_engine`
probes, etc.) still gets the real ModuleNotFoundError, so HAVE_TE / HAVE_MODELOPT stay False.

Stub semantics: Capitalised attributes are empty classes (usable as base classes and in
isinstance checks, which are then always False); lowercase attributes are nested stubs
that are also callable and return None.  For a model that is not ModelOpt-converted the
real modelopt calls used on this path (save_modelopt_state, save_sharded_modelopt_state,
restore_modelopt_state, get_tensor_shapes_adjust_fn_for_distillation) are no-ops / return
None too.
"""
import builtins
import sys

STUBBED = ("transformer_engine", "modelopt", "nvidia_resiliency_ext")


class _Stub:
    def __init__(self, name):
        self.__name__ = name
        self.__path__ = []
        self.__version__ = "0.0.0+stub"
        self._cache = {}

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        c = self._cache
        if attr not in c:
            if attr[:1].isupper():
                c[attr] = type(attr, (), {"__init__": lambda self, *a, **k: None,
                                          "__module__": self.__name__})
            else:
                c[attr] = _Stub(self.__name__ + "." + attr)
        return c[attr]

    def __call__(self, *a, **k):
        return None

    def __repr__(self):
        return f"<bridge_stubs stub {self.__name__}>"


_ROOTS = {n: _Stub(n) for n in STUBBED}
_orig_import = builtins.__import__


def _resolve(name):
    parts = name.split(".")
    obj = _ROOTS[parts[0]]
    for p in parts[1:]:
        obj = getattr(obj, p)
    return obj


def _import(name, globals=None, locals=None, fromlist=(), level=0):
    if level == 0 and name.split(".")[0] in STUBBED:
        importer = (globals or {}).get("__name__", "") or ""
        if importer.startswith("megatron.bridge"):
            try:
                return _orig_import(name, globals, locals, fromlist, level)
            except ImportError:
                if fromlist:
                    return _resolve(name)
                return _ROOTS[name.split(".")[0]]
    return _orig_import(name, globals, locals, fromlist, level)


builtins.__import__ = _import
