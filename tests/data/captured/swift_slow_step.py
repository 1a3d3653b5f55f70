"""ms-swift external plugin: registers a TrainerCallback that sleeps 0.5 s once, inside training step 5.

Loaded without editing ms-swift via its own plugin API:
  swift sft ... --external_plugins swift_slow_step.py --callbacks slow_step
ms-swift imports this file (BaseArguments._import_external_plugins), and SwiftMixin builds
callbacks_map[name](args, trainer) for every name in --callbacks.
"""
import time

from swift.callbacks import TrainerCallback, callbacks_map

SLOW_STEP = 5  # 1-based optimizer step that is made slow
SLEEP_S = 0.5


class SlowStepCallback(TrainerCallback):
    """on_step_begin fires with state.global_step == number of steps already finished,
    so global_step == SLOW_STEP - 1 means the step about to run is step SLOW_STEP."""

    def on_step_begin(self, args, state, control, **kwargs):
        if state.global_step == SLOW_STEP - 1:
            time.sleep(SLEEP_S)


callbacks_map['slow_step'] = SlowStepCallback
