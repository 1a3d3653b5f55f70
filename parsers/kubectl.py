"""kubectl's prefix, `[pod/NAME/CONTAINER] `, on each line of `kubectl logs --prefix` (and of
`--all-pods`, `-l SELECTOR`, which set it): a Kubernetes job's pods' output in one stream.

A pod is a node, as SkyPilot's and pdsh's prefixes are, where its name gives its place:

- Kubeflow's PyTorchJob: `NAME-master-0` is node 0 and `NAME-worker-N` node N + 1, the ranks
  the operator gives them (`RANK`, and `--node-rank` where torchrun starts the workers);
- an Indexed Job's pod, `NAME-N-xxxxx`, and so a JobSet's (Kubeflow Trainer's TrainJob,
  `NAME-node-0-N-xxxxx`): node N, the pod's completion index;
- torchx's Kubernetes scheduler (Volcano): replica N of a role is the task `ROLE-N` of the
  Volcano job named by the app's id, its pod `APP-ROLE-N-0` and its container `ROLE-N`: node N.
  torchx's `dist.ddp` runs torchrun with an empty role, so its workers' `[M]:` behind such a
  pod's prefix is read as torchrun's `[defaultM]:` (as behind torchx's own prefix: `torchx.py`).

Such a prefix is read as srun's label of its node, `N: `, so that torchrun's `[defaultM]:` inside
it numbers the node's workers as it does under srun, and torch's `[rankN]:` names the job's rank.
Another pod's prefix (an MPIJob's launcher, whose mpirun tags each line with its rank) is taken
off, and its lines are read as the pod printed them.  An elastic PyTorchJob, with no master,
numbers its workers through its rendezvous, which no pod's name says: there the nodes are still
one label each, not torch's node ranks."""
from __future__ import annotations

import re

POD = "[pod/"
POD_BYTES = POD.encode()
_NAME = r"[a-z0-9](?:[a-z0-9.-]{0,251}[a-z0-9])?"
_CONTAINER_NAME = r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?"
_CONTAINER = r"/" + _CONTAINER_NAME + r"\] "
PREFIX = r"\[pod/" + _NAME + _CONTAINER
"""The prefix of any pod."""
_TEXT = re.compile(
    r"^\[pod/(?:" + _NAME + r"-(?:(?P<master>master-0)|worker-(?P<worker>[0-9]{1,6})"
    r"|(?P<index>[0-9]{1,6})-[a-z0-9]{5})" + _CONTAINER + r"|(?P<pod>" + _NAME + r")/(?P<container>"
    + _CONTAINER_NAME + r")\] (?:\[(?P<bare>[0-9]{1,7})\]:)?)", re.M)
"""The places that pods' names give, then any pod (with what may follow a torchx replica's)."""
_BYTES = re.compile(_TEXT.pattern.encode(), re.M)
_REPLICA = re.compile(r"-([0-9]{1,6})\Z")


def _node(m) -> int | None:
    if m.group("master") is not None:
        return 0
    if m.group("worker") is not None:
        return int(m.group("worker")) + 1
    index = m.group("index")
    return None if index is None else int(index)


def _torchx_replica(pod: str, container: str) -> int | None:
    """The replica of torchx's pod `APP-ROLE-N-0` whose container is `ROLE-N`, else None."""
    r = _REPLICA.search(container)
    return int(r.group(1)) if r is not None and pod.endswith(f"-{container}-0") else None


def _place(m) -> int | None:
    """The node of a prefix's pod (None: its name gives no place)."""
    pod = m.group("pod")
    if pod is None:
        return _node(m)
    container = m.group("container")
    if isinstance(pod, bytes):
        pod, container = pod.decode(), container.decode()
    return _torchx_replica(pod, container)


def _label(m) -> str:
    node, bare = _place(m), m.group("bare")       # (a worker's `[M]:` after any pod's prefix)
    if node is None:
        return "" if bare is None else f"[{bare}]:"
    return f"{node}: " if bare is None else f"{node}: [default{bare}]:"


def _label_bytes(m) -> bytes:
    node, bare = _place(m), m.group("bare")
    if node is None:
        return b"" if bare is None else b"[%s]:" % bare
    return b"%d: " % node if bare is None else b"%d: [default%s]:" % (node, bare)


def pod_labels(data: str | bytes) -> str | bytes:
    """`data` with each line's kubectl prefix as srun's label of its pod's node, or taken off;
    `data` itself where no line has one (a substring test first)."""
    if isinstance(data, str):
        return _TEXT.sub(_label, data) if POD in data else data
    return _BYTES.sub(_label_bytes, data) if POD_BYTES in data else data
