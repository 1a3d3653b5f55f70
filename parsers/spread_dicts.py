"""A dict that `pprint` spread over lines, one item a line: EasyLM's and the other JAX trainers
built on mlxu log each step's metrics as `tqdm.write("\\n" + pprint.pformat(log_metrics) + "\\n")`:

    {'accuracy': np.float32(0.3212),
     'learning_rate': np.float32(0.0003),
     'loss': np.float32(3.2101),
     'step': 100}

`pformat` puts a dict wider than 80 characters on one line per item, the first behind `{`, the
others behind one space, a value too long for its line on more lines indented deeper, and the
last item's line ends with `}`.  The lines are held until then, and read as one printed dict."""
from __future__ import annotations

MAX_LINES = 256
"""A dict of more lines is no step's metrics (a config's dump): it is dropped."""


class SpreadDicts:
    """Each rank's dict whose lines are being read."""

    def __init__(self) -> None:
        self.open: dict = {}
        """rank -> the dict's lines so far, stripped"""

    def opens(self, line: str, rank) -> bool:
        """Is `line` (stripped) the first line of a spread dict, `{'accuracy': 0.3212,`?  If so,
        it is held as the rank's."""
        if not (line.startswith("{'") and line.endswith(",") and "': " in line):
            return False
        self.open[rank] = [line]
        return True

    def add(self, line: str, rank) -> bool:
        """Hold `line` as the next of `rank`'s open dict; False where it is none of its lines
        (not indented as pformat indents them, or a key's quote where a launcher's prefix took
        the space, `[rank1]: 'loss': 3.2,`): the dict is dropped."""
        lines = self.open[rank]
        if not line.startswith((" ", "'")) or len(lines) >= MAX_LINES:
            del self.open[rank]
            return False
        lines.append(line.strip())
        return True

    def closed(self, rank) -> str | None:
        """The whole dict, on one line, once its last line came; None while it goes on."""
        lines = self.open[rank]
        if not lines[-1].endswith("}"):
            return None
        del self.open[rank]
        return " ".join(lines)
