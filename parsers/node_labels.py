"""The node labels that launchers put before a stream's lines, read as srun's label of the node
(`1: `), so that what follows them reads as it does under srun: torchx's replicas
(`torchx.py`), SkyPilot's (`skypilot.py`), kubectl's pods (`kubectl.py`) and stern's
(`stern.py`), pdsh's hosts, and a host's name before torch's `[rankN]:` (`pdsh.py`).  A block
is looked at for each as `sighting.py` says; a line fed alone is looked at whole (its tests
cost ~0.25 us, under a tenth of what the line costs)."""
from __future__ import annotations

from .kubectl import POD, pod_labels
from .pdsh import HOST_BEFORE_RANK, HOST_BEFORE_RANK_BYTES, RANK_INSIDE, RANK_INSIDE_BYTES, RUNNER, WORLD, PdshHosts
from .sighting import EDGE, Sighting
from .skypilot import PID, as_srun_labels
from .stern import SternPods
from .torchx import TorchxRoles


class NodeLabels:
    """One stream's node labels (see the module's doc)."""

    def __init__(self) -> None:
        self.pdsh = PdshHosts()
        self.torchx = TorchxRoles()
        self.stern = SternPods()
        self.skypilot, self.pods = Sighting(PID), Sighting(POD)
        self.world, self.runner = Sighting(WORLD), Sighting(RUNNER)
        self.hosts_before_ranks = False
        self._shown = False
        """Has the stream shown a label, or named pdsh's hosts?"""
        self.marked = True
        """Has it, or are its first lines looked at for stern's pods?  (Then every line fed alone
        is relabelled, where otherwise only one that shows a label is.)"""

    def line(self, line: str | bytes) -> str | bytes:
        """One line, its label read as srun's."""
        line = self.stern.relabel(self.torchx.relabel(line))
        line = self.pdsh.relabel(pod_labels(as_srun_labels(line)), learn=True, hosts_before_ranks=True)
        self._shown = self._shown or bool(self.pdsh.nodes) or self.torchx.shown or bool(self.stern.jobs)
        self.marked = self._shown or self.stern.looking
        return line

    def block(self, data: str | bytes, young: bool) -> str | bytes:
        """A block of whole lines, their labels read as srun's (`young`: see `sighting`)."""
        data = self.stern.relabel(self.torchx.relabel(data))
        if self.skypilot.look(data, young):
            data = as_srun_labels(data)
        if self.pods.look(data, young):
            data = pod_labels(data)
        if not self.hosts_before_ranks:
            # torch's logger prints each line so: a host's lines show at a block's ends
            self.hosts_before_ranks = _hosts_before_ranks(data[:EDGE]) or _hosts_before_ranks(data[-EDGE:])
        learn = self.world.glimpse(data, young) or self.runner.glimpse(data, young)
        data = self.pdsh.relabel(data, learn, self.hosts_before_ranks)
        self._shown = self._shown or bool(self.pdsh.nodes) or self.skypilot.shown or self.pods.shown \
            or self.hosts_before_ranks or self.torchx.shown or bool(self.stern.jobs)
        self.marked = self._shown or self.stern.looking
        return data


def _hosts_before_ranks(edge: str | bytes) -> bool:
    if isinstance(edge, str):
        return RANK_INSIDE in edge and HOST_BEFORE_RANK.search(edge) is not None
    return RANK_INSIDE_BYTES in edge and HOST_BEFORE_RANK_BYTES.search(edge) is not None
