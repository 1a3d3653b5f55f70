"""Makes one utterance slow to open (ESPNET_SLOW_UTT, 0.5 s), as a cold file on a network file
system would be: ESPnet's data loader waits for it, and its interval's iter_time shows it."""
import os
import time

_SLOW = os.environ.get("ESPNET_SLOW_UTT")
if _SLOW:
    import soundfile

    _open = soundfile.SoundFile.__init__

    def _slow_open(self, file, *args, **kwargs):
        if os.path.basename(str(file)).startswith(_SLOW + "."):
            time.sleep(0.5)
        _open(self, file, *args, **kwargs)
    soundfile.SoundFile.__init__ = _slow_open
