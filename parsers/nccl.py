"""NCCL_DEBUG=INFO output: version, communicator init (rank/nranks/device, channels, transports),
and NCCL_DEBUG_SUBSYS=COLL per-collective lines."""
from __future__ import annotations

from .base import Parser, Pattern, num, record

VERSION = Pattern(r"NCCL version (\d++\.\d++\.\d++)(?:\+cuda(\d++\.\d++))?")
_PLACE = r"([\w.-]{1,200}+):(\d++):(\d++) \[(\d++)\] "
PLACE = Pattern(_PLACE)
"""NCCL's `host:pid:tid [device]` at a line's start (a WARN's has its source after it)."""
HOST = Pattern(_PLACE + "NCCL INFO ")
# NCCL 2.19 and later name the call: `NCCL INFO ncclCommInitRank comm 0x.. rank ..`, or
# `ncclCommInitRankConfig`, `ncclCommSplit` (with `parent 0x.. color .. key ..`) and the like.
INIT = Pattern(
    r"([\w.-]{1,200}+):(\d++):(\d++) \[(\d++)\] NCCL INFO (?:ncclComm\w{1,40}+ )?comm (0x[0-9a-f]++) "
    r"rank (\d++) nranks (\d++) cudaDev (\d++)(?: nvmlDev (\d++))? busId ([0-9a-fA-F]++)"
    r"((?: \w{1,40}+ -?[\w.]{1,40}+){0,12}+) - Init COMPLETE")
# NCCL 2.23 and later, after `Init COMPLETE`: `NCCL INFO Init timings - ncclCommInitRank: rank 0 nranks 2
# total 2.13 (kernels 0.17, alloc 0.02, bootstrap 1.93, allgathers 0.00, topo 0.01, ...)`, in seconds
TIMINGS = Pattern(
    r"([\w.-]{1,200}+):(\d++):(\d++) \[(\d++)\] NCCL INFO Init timings - (\w{1,40}+): rank (\d++) nranks (\d++) "
    r"total ([\d.]++)(?: \(([^)]{0,400}+)\))?")
COLL = Pattern(
    r"NCCL INFO (\w++): opCount ([0-9a-f]++) sendbuff (0x[0-9a-f]++|\(nil\)) recvbuff (0x[0-9a-f]++|\(nil\)) "
    r"count (\d++) datatype (\d++) op (\d++) root (-?\d++) comm (0x[0-9a-f]++) \[nranks=(\d++)\] stream (0x[0-9a-f]++|\(nil\))")
CHANNELS = Pattern(r"NCCL INFO Channel \d++/(\d++) :")
NCHANNELS = Pattern(r"NCCL INFO (\d++) coll channels, (?:(\d++) \w++ channels, )*?(\d++) p2p channels")
VIA = Pattern(r"via (\w++)(?:/(\w++))?")

IB_COMPLETION = Pattern(r"NET/IB\w{0,4}+ ?: ?Got completion from peer ([\w.:-]{1,200}+)<(\d++)> with (?:status=|error )(\d++)"
                       r"[, ]{1,2}+opcode[= ](\d++)[, ]{1,2}+len[= ](\d++)[, ]{1,2}+vendor err (\d++)(?: \((\w{1,10}+)\))?+")
SOCKET_PEER = Pattern(r"(?:from|to) ([\w.:-]{1,200}+)<(\d++)> failed ?: ?(.{1,200}+)"
                      r"|(Connection closed by remote peer) ([\w.:-]{1,200}+)<(\d++)>")
"""A link's failure that names the peer at its other end: InfiniBand's completion error (`NET/IB :
Got completion from peer 10.216.210.236<54862> with status=12 opcode=0 len=0 vendor err 129
(Recv)`; before 2.19 `with error 12, opcode 0, len 0, vendor err 129`; status 12 is the
transport's retries exhausted), or a socket's (`Call to recv from 10.0.0.1<1234> failed :
Connection reset by peer`, `Connect to 10.0.0.2<45763> failed : ...`, `Connection closed by remote
peer node1<57557>`)."""

DATATYPES = {0: "int8", 1: "uint8", 2: "int32", 3: "uint32", 4: "int64", 5: "uint64", 6: "float16",
             7: "float32", 8: "float64", 9: "bfloat16", 10: "float8e4m3", 11: "float8e5m2"}
OPS = {0: "sum", 1: "prod", 2: "max", 3: "min", 4: "avg"}

READS = ("NCCL version", "opCount", "Init COMPLETE", "Init timings", " via ", "Channel", "coll channels")
"""The words of the `NCCL INFO` lines that `NcclParser.parse` reads."""


def _phases(text: str | None) -> dict | None:
    """`kernels 0.17, alloc 0.02, bootstrap 1.93` -> {name: seconds}."""
    out = {}
    for part in (text or "").split(",")[:32]:
        name, _, value = part.strip().partition(" ")
        v = num(value)
        if name and v is not None:
            out[name] = v
    return out or None


def _comm_id(more: str) -> str | None:
    """`commId 0x..` among the words an init line prints after its bus id."""
    words = more.split()
    for name, value in zip(words[::2], words[1::2]):
        if name == "commId":
            return value
    return None


def chatter(line: str) -> bool:
    """An `NCCL INFO` line that yields no record and changes no state: most of what
    NCCL_DEBUG=INFO prints (the dispatcher drops such a line after the parser looked at it).
    (READS spelt out: `any` over them took 1.67 us an NCCL line, the chain 0.50; a test checks
    that the two agree.)"""
    return "NCCL INFO" in line and not (
        "NCCL version" in line or "opCount" in line or "Init COMPLETE" in line or "Init timings" in line
        or " via " in line or "Channel" in line or "coll channels" in line)


_PLACES = 65536
"""Communicators remembered for their collectives' ranks (a stream's processes times theirs)."""


class NcclParser(Parser):
    name = "nccl"

    def __init__(self) -> None:
        self.version: str | None = None
        self.cuda: str | None = None
        self.topo: dict = {}   # (host, pid) -> {"channels": n, "transports": set}
        self.device_of: dict = {}   # (host, pid, comm) -> the device its rank is on
        self.widest: dict = {}  # (host, pid, device) -> (nranks, the device's rank) of its widest communicator

    def parse(self, line: str, rank: int | None) -> list[dict]:
        out: list = []
        if "NCCL version" in line:
            m = VERSION.search(line)
            if m:
                self.version, self.cuda = m.group(1), m.group(2)
        if "NCCL INFO" not in line:
            return out
        if "opCount" in line:
            m = COLL.search(line)
            if m:
                h = HOST.search(line)
                if rank is None and h is not None:
                    # a collective's line names no rank: its communicator's device's rank in the
                    # widest communicator on that device, the job's where that is the world's
                    # (the line's own `[N]` is the calling thread's device: one thread may call
                    # for several devices, as nccl-tests does)
                    proc = (h.group(1), int(h.group(2)))
                    device = self.device_of.get((*proc, m.group(9)))
                    rank = self.widest.get((*proc, device), (0, None))[1]
                dt, op = int(m.group(6)), int(m.group(7))
                out.append(record("nccl_coll", "nccl", rank, None, op=m.group(1), opCount=int(m.group(2), 16),
                                  count=int(m.group(5)), datatype=DATATYPES.get(dt, str(dt)), datatype_id=dt,
                                  reduce_op=OPS.get(op, str(op)), root=int(m.group(8)), comm=m.group(9),
                                  nranks=int(m.group(10)), host=h.group(1) if h else None,
                                  pid=int(h.group(2)) if h else None, device=int(h.group(4)) if h else None))
            return out
        if "Init COMPLETE" in line:
            for m in INIT.finditer(line):
                key = (m.group(1), m.group(2))
                topo = self.topo.pop(key, {})
                comm_rank, nranks = int(m.group(6)), int(m.group(7))
                device = (m.group(1), int(m.group(2)), int(m.group(8)))
                if len(self.device_of) < _PLACES:
                    self.device_of[(m.group(1), int(m.group(2)), m.group(5))] = device[2]
                    if nranks >= self.widest.get(device, (0, None))[0]:
                        self.widest[device] = (nranks, comm_rank)
                # unprefixed, a group's communicator after the world's is the device's rank in the world
                own = rank if rank is not None else self.widest.get(device, (0, comm_rank))[1]
                out.append(record("nccl_init", "nccl", own, None,
                                  version=self.version, cuda=self.cuda, comm=m.group(5), comm_rank=comm_rank,
                                  nranks=nranks, device=device[2], bus_id=m.group(10),
                                  comm_id=_comm_id(m.group(11)), host=m.group(1), pid=int(m.group(2)),
                                  channels=topo.get("channels"),
                                  transports=sorted(topo["transports"]) if topo.get("transports") else None))
            return out
        if "Init timings" in line:
            m = TIMINGS.search(line)
            if m:
                out.append(self._timings(m, rank))
            return out
        self.topology(line)
        return out

    def topology(self, line: str) -> bool:
        """Read an `NCCL INFO` line of a communicator's topology (a channel, the transport
        between two ranks, the number of channels) into what its `Init COMPLETE` record will
        say; False for any other line.  Such a line gives no record: the dispatcher hands it
        here straight, where it starts with NCCL's own `host:pid:tid [dev]`."""
        via = " via " in line
        slash = not via and "Channel" in line and "/" in line
        coll = not via and "coll channels" in line
        if not (via or slash or coll) or "opCount" in line or "Init " in line or "NCCL version" in line:
            return False
        h = HOST.match(line)
        if not h:
            return False
        key = (h.group(1), h.group(2))
        topo = self.topo.get(key)
        if topo is None:
            if len(self.topo) > 4096:
                self.topo.pop(next(iter(self.topo)))
            topo = self.topo[key] = {"channels": None, "transports": set()}
        if via:
            v = VIA.search(line, h.end())
            if v:
                topo["transports"].add(v.group(1))
        elif slash:
            m = CHANNELS.search(line, h.start())
            if m:
                topo["channels"] = max(topo["channels"] or 0, int(m.group(1)))
        else:
            m = NCHANNELS.search(line, h.start())
            if m:
                topo["channels"] = int(m.group(1))
        return True

    def _timings(self, m, rank) -> dict:
        """How long the communicator's init took, and in what (a slow `bootstrap`: the network
        or a late rank): a second `nccl_init` record for it, with `phase: timings`."""
        comm_rank = int(m.group(6))
        return record("nccl_init", "nccl", rank if rank is not None else comm_rank, None, phase="timings",
                      call=m.group(5), comm_rank=comm_rank, nranks=int(m.group(7)), init_s=num(m.group(8)),
                      init_phases_s=_phases(m.group(9)), host=m.group(1), pid=int(m.group(2)),
                      device=int(m.group(4)))


def net_failure(warning: str) -> dict | None:
    """The fields of an `NCCL WARN` that names the peer of a failed link (`IB_COMPLETION`,
    `SOCKET_PEER`), the warning's host and device among them; None for another warning."""
    m = IB_COMPLETION.search(warning)
    if m is not None:
        fields = {"peer": m.group(1), "peer_port": int(m.group(2)), "ib_status": int(m.group(3)),
                  "vendor_err": int(m.group(6)), "direction": m.group(7)}
    else:
        m = SOCKET_PEER.search(warning) if "<" in warning else None
        if m is None:
            return None
        closed = m.group(4) is not None
        fields = {"peer": m.group(5 if closed else 1), "peer_port": int(m.group(6 if closed else 2)),
                  "reason": (m.group(4) if closed else m.group(3)).strip()}
    h = PLACE.match(warning)
    if h is not None:
        fields.update(host=h.group(1), device=int(h.group(4)))
    return fields
