"""stern's prefix, `POD CONTAINER `, on each line of `stern QUERY` (the pod's namespace before it
where stern tails more than one, `NAMESPACE POD CONTAINER `; each name coloured on a terminal):
a Kubernetes job's pods' output in one stream, as `kubectl logs --prefix` gives it.

No fixed text marks such a prefix, so it is learnt, from a line whose pod's name gives its place
in a job and whose container is the one that job's pods run (`kubectl.py` reads the place):

- a Kubeflow PyTorchJob's `NAME-master-0 pytorch ` and `NAME-worker-N pytorch ` (its operator
  requires the container to be named `pytorch`);
- an Indexed Job's or JobSet's `NAME-N-xxxxx CONTAINER ` (N its completion index, then the five
  characters Kubernetes draws a pod's suffix from);
- torchx's `APP-ROLE-N-0 ROLE-N ` (its Kubernetes scheduler's pod and container of replica N).

stern's own notice of each container it begins or ends tailing, `+ POD › CONTAINER` (on its
stderr, often in the same file), teaches the same.  The job's name is then known, and each line
behind a prefix of one of its pods is read as kubectl's `[pod/POD/CONTAINER] `, and so as
srun's label of the pod's node.  The stream's first LOOK lines are looked at; a line of another
shape there, or any line of a job not learnt, is read as it is.  stern's notices are looked for
all through the stream (a block without its `›` costs one search): stern started before the
job's pods, or tailing others too, tells of them as they come.  (`stern --timestamps` puts the
time after the prefix: `ingest` reads it there, `cli/log_blocks.py`.)"""
from __future__ import annotations

import re

from .kubectl import pod_labels

LOOK = 64
"""Lines of a stream looked at for a job's pods (a job's pods print from their first lines)."""
_COLOUR, _END = r"(?:\x1b\[[0-9;]{1,8}m)?", r"(?:\x1b\[0m)?"
_TOKEN = r"([a-z0-9][a-z0-9.-]{0,252})"
_HEAD = re.compile(_COLOUR + _TOKEN + _END + " " + _COLOUR + _TOKEN + _END + " (?:" + _COLOUR + _TOKEN + _END + " )?")
"""The first two or three names of a line, maybe coloured: pod and container, or namespace, pod
and container."""
_NOTICE = re.compile(_COLOUR + "[+-]" + _END + " (?:" + _COLOUR + _TOKEN + _END + " )?" + _COLOUR + _TOKEN + _END
                     + " (?:\u203a|\xe2\x80\xba) " + _COLOUR + _TOKEN + _END + r"\s*\Z")
"""stern's notice of a container it tails, `+ [NAMESPACE ]POD › CONTAINER` (in text, or in UTF-8
read as Latin-1)."""
_MARK, _MARK_LATIN1, _MARK_BYTES = "\u203a", "\xe2\x80\xba", b"\xe2\x80\xba"
"""The `›` of stern's notice: in text, in UTF-8 read as Latin-1, and in bytes."""
_WORKER = re.compile(r"-(?:master-0|worker-[0-9]{1,6})\Z")
_INDEXED = re.compile(r"-[0-9]{1,6}-[bcdfghjklmnpqrstvwxz2456789]{5}\Z")
_REPLICA = re.compile(r"-[0-9]{1,6}\Z")


def job_of(pod: str, container: str) -> str | None:
    """The job's name that a pod's name and its container's give, where they give its place."""
    if container == "pytorch":
        m = _WORKER.search(pod)
        if m is not None:
            return pod[:m.start()] or None
    if _REPLICA.search(container) is not None and pod.endswith(f"-{container}-0"):
        return pod[:-len(container) - 3] or None
    m = _INDEXED.search(pod)
    return pod[:m.start()] or None if m is not None else None


class SternPods:
    """The jobs whose pods stern's prefix names on one stream (see the module's doc)."""

    def __init__(self) -> None:
        self.jobs: list[str] = []
        self.namespaces: list[str] = []
        self.coloured = False
        self.looked = 0
        self._text: re.Pattern | None = None
        self._bytes: re.Pattern | None = None

    @property
    def looking(self) -> bool:
        """Are the stream's lines still looked at for a job's pods?"""
        return self.looked < LOOK

    def relabel(self, data: str | bytes) -> str | bytes:
        """`data` with each known job's pod's prefix as srun's label of its node (through
        kubectl's), the jobs first learnt from its lines while the stream is looked at."""
        if self.looked < LOOK:
            self._learn(data)
        if self.looked >= LOOK and ((_MARK in data) if isinstance(data, str) else (_MARK_BYTES in data)):
            self._learn(data, notices=True)
        text, raw = self._text, self._bytes
        if text is None or raw is None:
            return data
        if isinstance(data, str):
            return pod_labels(text.sub(self._as_kubectl, data))
        return pod_labels(raw.sub(self._as_kubectl_bytes, data))

    def _learn(self, data: str | bytes, notices: bool = False) -> None:
        """Learn jobs from the stream's first lines not looked at yet, or (`notices`) from each
        of stern's notices in `data`."""
        if notices:
            text = data if isinstance(data, str) else bytes(data).decode("latin-1")
            lines = [line for line in text.split("\n") if _MARK in line or _MARK_LATIN1 in line]
        else:
            text = data if isinstance(data, str) else bytes(data[:1 << 16]).decode("latin-1")
            lines = text.split("\n", LOOK - self.looked)[:LOOK - self.looked]
            if lines and lines[-1] == "":
                lines.pop()
            self.looked += len(lines)
        learnt = False
        for line in lines:
            notice = _NOTICE.match(line) if _MARK in line or _MARK_LATIN1 in line else None
            if notice is not None:
                namespace, pod, container = notice.groups()
                job = job_of(pod, container)
            elif notices:
                continue
            else:
                m = _HEAD.match(line)
                if m is None:
                    continue
                first, second, third = m.groups()
                job, namespace = job_of(first, second), None
                if job is None and third is not None:
                    job, namespace = job_of(second, third), first
            if job is None or (job in self.jobs and namespace in self.namespaces + [None]):
                continue
            if job not in self.jobs:
                self.jobs.append(job)
            if namespace is not None and namespace not in self.namespaces:
                self.namespaces.append(namespace)
            self.coloured = self.coloured or line.startswith("\x1b[")
            learnt = True
        if learnt:
            self._text = _relabelling(self.jobs, self.namespaces, self.coloured)
            self._bytes = re.compile(self._text.pattern.encode())

    @staticmethod
    def _as_kubectl(m: re.Match) -> str:
        at, text = m.start(), m.string
        if at and text[at - 1] != "\n":
            return m.group(0)       # a line's text that names a pod
        return f"[pod/{m.group(1)}/{m.group(2)}] "

    @staticmethod
    def _as_kubectl_bytes(m: re.Match) -> bytes:
        at, text = m.start(), m.string
        if at and text[at - 1:at] != b"\n":
            return m.group(0)
        return b"[pod/%s/%s] " % (m.group(1), m.group(2))


def _relabelling(jobs: list[str], namespaces: list[str], coloured: bool) -> re.Pattern:
    """The prefix of a known job's pod, beginning with a name (or the colour before it), so that a
    search skips to it: a pattern anchored at each line's start tries every byte of a block."""
    def either(names: list[str]) -> str:
        return "(?:%s)" % "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    pod = "(" + either(jobs) + r"-[a-z0-9.-]{1,200})"
    container = r"([a-z0-9][a-z0-9-]{0,62})"
    if coloured:
        colour = r"\x1b\[[0-9;]{1,8}m"
        namespace = f"(?:{either(namespaces)}\\x1b\\[0m {colour})?" if namespaces else ""
        return re.compile(colour + namespace + pod + r"\x1b\[0m " + colour + container + r"\x1b\[0m ")
    namespace = either(namespaces) + " " if namespaces else ""
    return re.compile(namespace + pod + " " + container + " ")
