#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""af_smbdirect's generic netlink family checked from raw netlink.

The half of tests/userspace/genl.sh that does not trust `smbdirect ss`:
it speaks NETLINK_GENERIC itself (socket + struct, python3's standard
library only), makes SMB-Direct sockets through ctypes and ioctl, and
compares what the kernel reports with what it did.

  genl_check.py serve DIR          make the sockets (a listener with one
                                   accepted and one waiting connection over
                                   rxe 10.77.0.1, a SOCK_STREAM pair over siw
                                   fd77::2, an unconnected inet socket, a live
                                   registration, known messages), write
                                   DIR/state.json, print "ready", then run the
                                   commands written to the FIFO DIR/cmd, one a
                                   line, printing "done NAME RC" (details in
                                   DIR/NAME.log; NAME.TAG runs NAME again):
      fields                       every attribute of every socket
      filters                      STATE_MASK and DEV_NAME
      tool FILE                    `smbdirect ss -a -e -p --json` == raw dump
      users FILE                   `smbdirect ss -a -p` names us, pid and fd
      transfer                     messages and an RDMA write over rxe0;
                                   DIR/transfer.json says what moved
      stats-tool FILE              `smbdirect stats --json` == raw STATS_GET
      stats-delta BEFORE AFTER     the totals grew by exactly the transfer
      stats-zero FILE              after STATS_RESET: every total 0
      tool-filters TOOL            `smbdirect ss` filters select what they say
      text FILE                    `smbdirect ss -a -e -p`: every column, the -e lines
      unpriv TOOL                  unpriv (below) in a child that became uid 65534
      netns TOOL                   netns_child (below) in a child in a new network
                                   namespace; init_net's totals stay as they were
      malformed, fuzz SEED COUNT   as below, while the sockets exist
      close                        close them all: they leave the dump
      quit
  genl_check.py stats-delta BEFORE AFTER TRANSFER   counters grew by exactly that
  genl_check.py stats-zero FILE    after STATS_RESET: every total 0
  genl_check.py unpriv TOOL INODES (run as an unprivileged user) only its own
                                   sockets, raw and through TOOL (its library
                                   beside it); EPERM on reset
  genl_check.py netns TOOL         (as root, in a fresh network namespace of its
                                   own: unshares it) that namespace's counters only,
                                   root's and uid 65534's, raw and through TOOL
  genl_check.py malformed          bad requests get errors, not crashes
  genl_check.py fuzz SEED COUNT    mutated requests, then the family still answers
  genl_check.py gone INODES        those sockets leave the dump after close

Exit status 0 when every check held; what failed is printed.
"""
import ctypes
import errno
import fcntl
import json
import mmap
import os
import random
import select
import socket
import struct
import sys
import time

# --- netlink ---------------------------------------------------------------------

NETLINK_GENERIC = 16
SOL_NETLINK = 270
NETLINK_EXT_ACK = 11
NLM_F_REQUEST, NLM_F_MULTI, NLM_F_ACK, NLM_F_ECHO = 1, 2, 4, 8
NLM_F_DUMP_INTR = 0x10
NLM_F_ROOT, NLM_F_MATCH = 0x100, 0x200
NLM_F_DUMP = NLM_F_ROOT | NLM_F_MATCH
NLM_F_CAPPED, NLM_F_ACK_TLVS = 0x100, 0x200
NLMSG_NOOP, NLMSG_ERROR, NLMSG_DONE = 1, 2, 3
GENL_ID_CTRL = 0x10
CTRL_CMD_GETFAMILY = 3
CTRL_ATTR_FAMILY_ID, CTRL_ATTR_FAMILY_NAME = 1, 2
NLMSGERR_ATTR_MSG = 1

# <linux/smbdirect_genl.h>
FAMILY_NAME = b"af_smbdirect"
VERSION = 1
CMD_SOCK_GET, CMD_STATS_GET, CMD_STATS_RESET = 1, 2, 3
A_SOCK_STATE_MASK, A_SOCK_DEV_NAME, A_SOCK_UID = 24, 13, 5
A_STATS_TOP_MODULE, A_STATS_TOP_DEVICE = 1, 2
A_DEV_NAME, A_DEV_INDEX, A_DEV_STATS = 1, 2, 3

# Attribute number -> (key, kind); kinds: u8 u16 u32 u64 addr str nest:<set>.
SOCK_ATTRS = {
    1: ("pad", "pad"), 2: ("state", "u8"), 3: ("type", "u8"), 4: ("family", "u16"),
    5: ("uid", "u32"), 6: ("inode", "u64"), 7: ("cookie", "u64"),
    8: ("addr_family", "u16"), 9: ("local_addr", "addr"), 10: ("local_port", "u16"),
    11: ("peer_addr", "addr"), 12: ("peer_port", "u16"), 13: ("dev", "str"),
    14: ("dev_port", "u32"), 15: ("transport", "u8"), 16: ("params", "nest:params"),
    17: ("credits", "nest:credits"), 18: ("rx_queued", "u32"), 19: ("tx_queued", "u32"),
    20: ("registrations", "u32"), 21: ("pinned_bytes", "u64"), 22: ("stats", "nest:stats"),
    23: ("accept", "nest:accept"),
}
PARAMS = ["version", "max_send_size", "max_receive_size", "max_fragmented_send_size",
          "max_fragmented_receive_size", "max_read_write_size", "send_credit_target",
          "receive_credit_max", "initiator_depth", "responder_resources",
          "keepalive_interval"]
CREDITS = ["send", "send_target", "peer", "receives_posted", "receives_held",
           "receive_target", "sends_in_flight"]
STATS = ["msgs_tx", "msgs_rx", "pdus_tx", "pdus_rx", "bytes_tx", "bytes_rx", "rdma_reads",
         "rdma_read_bytes", "rdma_writes", "rdma_write_bytes", "registrations",
         "remote_invalidations", "send_invalidates", "keepalives_tx", "credit_stalls",
         "err_protocol", "err_timeout", "err_refused", "err_transport", "err_device",
         "err_rdma", "sockets", "connections", "listen_overflows", "listen_half_open_drops"]
# sockets and connections: module and devices only; the listen_ ones: those
# and listeners
LISTEN_STATS = ["listen_overflows", "listen_half_open_drops"]
SOCK_STATS = [k for k in STATS if k not in ["sockets", "connections"] + LISTEN_STATS]
ACCEPT = ["pending", "ready", "backlog"]
NESTS = {
    "params": {i + 1: (k, "u32") for i, k in enumerate(PARAMS)},
    "credits": {i + 1: (k, "u32") for i, k in enumerate(CREDITS)},
    "stats": {**{1: ("pad", "pad")}, **{i + 2: (k, "u64") for i, k in enumerate(STATS)}},
    "accept": {i + 1: (k, "u32") for i, k in enumerate(ACCEPT)},
    "dev": {1: ("name", "str"), 2: ("index", "u32"), 3: ("stats", "nest:stats")},
    "top": {1: ("module", "nest:stats"), 2: ("device", "nest:dev")},
}
STATE_NAMES = {0: "UNCONN", 1: "LISTEN", 2: "CONNECTING", 3: "ESTAB", 4: "CLOSED"}
UNCONNECTED, LISTENING, CONNECTING, CONNECTED, CLOSED = range(5)
TRANSPORTS = {1: "ib", 2: "roce", 3: "iwarp"}
TYPES = {1: "stream", 5: "seqpacket"}
SIZES = {"u8": 1, "u16": 2, "u32": 4, "u64": 8}


def nla(atype, data):
    size = 4 + len(data)
    return struct.pack("=HH", size, atype) + data + b"\0" * ((4 - size % 4) % 4)


def attrs_of(buf):
    """[(type, payload)] of an attribute stream; raises on a malformed one."""
    out, off = [], 0
    while off < len(buf):
        if len(buf) - off < 4:
            raise ValueError(f"{len(buf) - off} stray bytes after the attributes")
        size, atype = struct.unpack_from("=HH", buf, off)
        if size < 4 or off + size > len(buf):
            raise ValueError(f"attribute {atype & 0x3fff} of length {size} at {off} "
                             f"overruns {len(buf)}")
        out.append((atype & 0x3fff, bytes(buf[off + 4:off + size])))
        off += (size + 3) & ~3
    return out


def decode(buf, table, where="top"):
    """Attributes as a dict by key, each checked for its exact size; repeated
    attributes (multi-attr nests) become lists under key + "s"."""
    out = {}
    for atype, data in attrs_of(buf):
        if atype not in table:
            raise ValueError(f"{where}: unknown attribute {atype}")
        key, kind = table[atype]
        if kind == "pad":
            continue
        if kind in SIZES:
            if len(data) != SIZES[kind]:
                raise ValueError(f"{where}.{key}: {len(data)} bytes, want {SIZES[kind]}")
            value = int.from_bytes(data, sys.byteorder)
        elif kind == "addr":
            if len(data) not in (4, 16):
                raise ValueError(f"{where}.{key}: {len(data)} bytes, want 4 or 16")
            value = socket.inet_ntop(socket.AF_INET if len(data) == 4 else socket.AF_INET6,
                                     data)
        elif kind == "str":
            if not data.endswith(b"\0") or b"\0" in data[:-1]:
                raise ValueError(f"{where}.{key}: not one NUL-terminated string: {data!r}")
            value = data[:-1].decode()
        else:
            value = decode(data, NESTS[kind[5:]], f"{where}.{key}")
        if key == "device":
            out.setdefault("devices", []).append(value)
            continue
        if key in out:
            raise ValueError(f"{where}.{key} twice")
        out[key] = value
    return out


class NetlinkError(Exception):
    def __init__(self, err, msg=""):
        super().__init__(f"{errno.errorcode.get(err, err)}{': ' + msg if msg else ''}")
        self.errno = err
        self.msg = msg


class Genl:
    def __init__(self, timeout=10):
        self.s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_GENERIC)
        self.s.bind((0, 0))
        self.s.setsockopt(SOL_NETLINK, NETLINK_EXT_ACK, 1)
        self.s.settimeout(timeout)
        self.seq = random.randrange(1, 1 << 30)
        self.buf = bytearray(1 << 18)
        self.family = self.resolve(FAMILY_NAME)

    def close(self):
        self.s.close()

    def next_seq(self):
        self.seq += 1
        return self.seq

    def send_raw(self, data):
        self.s.send(bytes(data))

    def message(self, mtype, flags, payload, seq):
        return struct.pack("=IHHII", 16 + len(payload), mtype, flags, seq, 0) + payload

    def genl(self, cmd, flags, attrs=b"", seq=None, version=VERSION, mtype=None):
        seq = self.next_seq() if seq is None else seq
        payload = struct.pack("=BBH", cmd, version, 0) + attrs
        return self.message(self.family if mtype is None else mtype,
                            NLM_F_REQUEST | flags, payload, seq), seq

    def messages(self):
        """One datagram's messages: [(type, flags, seq, payload)]."""
        n = self.s.recv_into(self.buf)
        out, off = [], 0
        while off + 16 <= n:
            size, mtype, flags, seq, _pid = struct.unpack_from("=IHHII", self.buf, off)
            if size < 16 or off + size > n:
                raise ValueError(f"reply message of length {size} in a {n}-byte datagram")
            out.append((mtype, flags, seq, bytes(self.buf[off + 16:off + size])))
            off += (size + 3) & ~3
        return out

    @staticmethod
    def error_of(payload, flags):
        err = struct.unpack_from("=i", payload)[0]
        text = ""
        if flags & NLM_F_ACK_TLVS and len(payload) >= 20:
            orig_len = struct.unpack_from("=I", payload, 4)[0]
            off = 20 if flags & NLM_F_CAPPED else 4 + ((orig_len + 3) & ~3)
            try:
                for atype, data in attrs_of(payload[off:]):
                    if atype == NLMSGERR_ATTR_MSG:
                        text = data.rstrip(b"\0").decode(errors="replace")
            except ValueError:
                pass
        return -err, text

    def collect(self, seq):
        """Replies to seq until its DONE, ACK or error: (errno, [genl payloads])."""
        replies = []
        while True:
            for mtype, flags, mseq, payload in self.messages():
                if mseq != seq:
                    continue
                if mtype == NLMSG_ERROR:
                    err, text = self.error_of(payload, flags)
                    if err:
                        raise NetlinkError(err, text)
                    return replies
                if mtype == NLMSG_DONE:
                    return replies
                if flags & NLM_F_DUMP_INTR:
                    raise NetlinkError(errno.EINTR, "dump interrupted")
                replies.append(payload)
                if not flags & NLM_F_MULTI and not self.expect_ack:
                    return replies

    def request(self, cmd, flags, attrs=b""):
        msg, seq = self.genl(cmd, flags, attrs)
        self.expect_ack = bool(flags & NLM_F_ACK) and not flags & NLM_F_DUMP
        self.send_raw(msg)
        return self.collect(seq)

    def resolve(self, name):
        msg, seq = self.genl(CTRL_CMD_GETFAMILY, NLM_F_ACK,
                             nla(CTRL_ATTR_FAMILY_NAME, name + b"\0"), mtype=GENL_ID_CTRL)
        self.expect_ack = True
        self.send_raw(msg)
        for payload in self.collect(seq):
            for atype, data in attrs_of(payload[4:]):
                if atype == CTRL_ATTR_FAMILY_ID:
                    return struct.unpack("=H", data[:2])[0]
        raise NetlinkError(errno.ENOENT, "no family id in the reply")

    def dump_socks(self, mask=None, dev=None):
        attrs = b""
        if mask is not None:
            attrs += nla(A_SOCK_STATE_MASK, struct.pack("=I", mask))
        if dev is not None:
            attrs += nla(A_SOCK_DEV_NAME, dev.encode() + b"\0")
        for _ in range(3):
            try:
                return [decode(p[4:], SOCK_ATTRS, "sock")
                        for p in self.request(CMD_SOCK_GET, NLM_F_DUMP, attrs)]
            except NetlinkError as e:
                if e.errno != errno.EINTR:
                    raise
        raise NetlinkError(errno.EINTR, "three dumps interrupted")

    def stats(self):
        replies = self.request(CMD_STATS_GET, NLM_F_ACK)
        if len(replies) != 1:
            raise ValueError(f"STATS_GET: {len(replies)} replies, want 1")
        return decode(replies[0][4:], NESTS["top"], "stats")

    def reset(self):
        self.request(CMD_STATS_RESET, NLM_F_ACK)


# --- SMB-Direct sockets through libc ------------------------------------------------

libc = ctypes.CDLL(None, use_errno=True)
SOL_SMBDIRECT = 0x5344
OPT_KEEPALIVE_INTERVAL, OPT_INFO = 7, 16
SO_COOKIE = 57
IPPROTO_SMBDIRECT = 257
IOC_GET_PARAMS = 0xC038D501
IOC_REGISTER = 0xC028D502
IOC_RDMA_WRITEV = 0xC028D505
ACCESS_PEER_WRITE = 0x2
INFO_KEYS = ["state", "send_credits", "peer_credits", "receives_posted", "receives_held",
             "sends_in_flight", "rx_queued", "tx_queued"]
PARAMS_STRUCT = ["size"] + PARAMS + ["transport", "reserved"]


def oserror(what):
    e = ctypes.get_errno()
    return OSError(e, f"{what}: {os.strerror(e)}")


def sockaddr(host, port):
    if ":" in host:
        return struct.pack("=H", socket.AF_INET6) + struct.pack("!HI", port, 0) + \
            socket.inet_pton(socket.AF_INET6, host) + struct.pack("=I", 0)
    return struct.pack("=H", socket.AF_INET) + struct.pack("!H", port) + \
        socket.inet_aton(host) + b"\0" * 8


def parse_sockaddr(raw):
    family = struct.unpack_from("=H", raw)[0]
    port = struct.unpack_from("!H", raw, 2)[0]
    if family == socket.AF_INET:
        return family, socket.inet_ntop(family, raw[4:8]), port
    if family == socket.AF_INET6:
        return family, socket.inet_ntop(family, raw[8:24]), port
    return family, None, port


def name_of(fd, peer=False):
    buf = ctypes.create_string_buffer(128)
    size = ctypes.c_uint32(128)
    fn = libc.getpeername if peer else libc.getsockname
    if fn(fd, buf, ctypes.byref(size)) < 0:
        raise oserror("getpeername" if peer else "getsockname")
    return parse_sockaddr(buf.raw[:size.value])


def sd_family():
    with open("/sys/module/af_smbdirect/parameters/family") as f:
        return int(f.read())


def inet_protocol():
    try:
        with open("/sys/module/af_smbdirect/parameters/inet_protocol") as f:
            return int(f.read())
    except OSError:
        return 0


def new_socket(family, stype, proto=0, keepalive_off=True):
    s = socket.socket(family, stype | socket.SOCK_CLOEXEC, proto)
    if keepalive_off:
        s.setsockopt(SOL_SMBDIRECT, OPT_KEEPALIVE_INTERVAL, 0)
    return s


def listen_on(family, stype, host, port, backlog):
    s = new_socket(family, stype)
    a = sockaddr(host, port)
    if libc.bind(s.fileno(), a, len(a)) < 0:
        raise oserror(f"bind {host}:{port}")
    if libc.listen(s.fileno(), backlog) < 0:
        raise oserror("listen")
    return s


def connect_to(family, stype, host, port):
    s = new_socket(family, stype)
    a = sockaddr(host, port)
    if libc.connect(s.fileno(), a, len(a)) < 0:
        raise oserror(f"connect {host}:{port}")
    return s


def accept_on(listener, timeout=60):
    if not select.select([listener], [], [], timeout)[0]:
        raise TimeoutError("nothing to accept")
    fd = libc.accept4(listener.fileno(), None, None, socket.SOCK_CLOEXEC)
    if fd < 0:
        raise oserror("accept")
    return socket.socket(fileno=fd)


def info_of(s):
    return dict(zip(INFO_KEYS, struct.unpack("=8I",
                                             s.getsockopt(SOL_SMBDIRECT, OPT_INFO, 32))))


def params_of(s):
    buf = bytearray(struct.pack("=14I", 56, *[0] * 13))
    fcntl.ioctl(s.fileno(), IOC_GET_PARAMS, buf, True)
    return dict(zip(PARAMS_STRUCT, struct.unpack("=14I", buf)))


def cookie_of(s):
    return struct.unpack("=Q", s.getsockopt(socket.SOL_SOCKET, SO_COOKIE, 8))[0]


def inode_of(fd):
    link = os.readlink(f"/proc/self/fd/{fd}")
    ino = os.fstat(fd).st_ino
    if link != f"socket:[{ino}]":
        raise ValueError(f"fd {fd}: /proc/self/fd says {link}, fstat {ino}")
    return ino


class Buffer:
    """Page-aligned memory whose address the ioctls take."""

    def __init__(self, size):
        self.size = size
        self.map = mmap.mmap(-1, size)
        self.obj = ctypes.c_char.from_buffer(self.map)
        self.addr = ctypes.addressof(self.obj)

    def iovec(self):
        self.iov = ctypes.create_string_buffer(struct.pack("=QQ", self.addr, self.size))
        return ctypes.addressof(self.iov)


def register(s, buf, flags=ACCESS_PEER_WRITE):
    desc = ctypes.create_string_buffer(16 * 16)
    arg = bytearray(struct.pack("=IIQIIQQ", 40, flags, buf.iovec(), 1, 16,
                                ctypes.addressof(desc), 0))
    fcntl.ioctl(s.fileno(), IOC_REGISTER, arg, True)
    count = struct.unpack_from("=I", arg, 20)[0]
    return desc.raw[:16 * count], count, struct.unpack_from("=Q", arg, 32)[0]


def rdma_write(s, buf, desc, count):
    d = ctypes.create_string_buffer(desc)
    arg = bytearray(struct.pack("=IIQIIQQ", 40, 0, buf.iovec(), 1, count,
                                ctypes.addressof(d), 0))
    fcntl.ioctl(s.fileno(), IOC_RDMA_WRITEV, arg, True)
    return struct.unpack_from("=Q", arg, 32)[0]


def recv_exact(s, n):
    got = b""
    while len(got) < n:
        chunk = s.recv(n - len(got))
        if not chunk:
            raise EOFError(f"EOF after {len(got)} of {n} bytes")
        got += chunk
    return got


# --- serve: the sockets and the checks that need them ----------------------------------

RXE, SIW = "10.77.0.1", "fd77::2"
C1_MSGS = [100, 1000, 3000, 10, 64]       # C1 -> A1, read by A1
A1_MSGS = [200, 300, 5000]                # A1 -> C1, left unread
C3_MSGS = [50, 2000, 7, 1200]             # C3 -> A3, SOCK_STREAM, read by A3
REG_BYTES = 65536
TRANSFER_MSGS, TRANSFER_SIZE = 10, 1000


class Holder:
    def __init__(self, directory, port):
        self.dir = directory
        self.family = sd_family()
        self.socks = {}      # name -> socket
        self.expect = {}     # name -> dict of exact expectations
        self.counts = {}     # name -> expected counters
        self.build(port)

    def add(self, name, s, **expect):
        self.socks[name] = s
        self.expect[name] = expect
        self.counts[name] = {k: 0 for k in SOCK_STATS}

    def count(self, name, **deltas):
        for k, v in deltas.items():
            self.counts[name][k] += v

    def mark(self, step):
        now = time.monotonic()
        self.timing.append(f"{step} {now - self.last:.1f}")
        self.last = now

    def build(self, port):
        F, SEQ, STREAM = self.family, socket.SOCK_SEQPACKET, socket.SOCK_STREAM
        self.timing, self.last = [], time.monotonic()
        self.ports = {"L": port, "L6": port + 1}
        self.add("L", listen_on(F, SEQ, RXE, port, 8), state=LISTENING, type=SEQ,
                 family=F, dev="rxe0", transport=2)
        self.add("C1", connect_to(F, SEQ, RXE, port), state=CONNECTED, type=SEQ, family=F,
                 dev="rxe0", transport=2)
        self.add("A1", accept_on(self.socks["L"]), state=CONNECTED, type=SEQ, family=F,
                 dev="rxe0", transport=2)
        self.mark("C1")
        # C2 is never accepted: the listener shows it ready.
        self.add("C2", connect_to(F, SEQ, RXE, port), state=CONNECTED, type=SEQ, family=F,
                 dev="rxe0", transport=2)
        if not select.select([self.socks["L"]], [], [], 30)[0]:
            raise TimeoutError("C2 never became ready to accept")
        self.mark("C2")
        self.add("L6", listen_on(F, STREAM, SIW, port + 1, 4), state=LISTENING, type=STREAM,
                 family=F, dev="siw1", transport=3)
        self.add("C3", connect_to(F, STREAM, SIW, port + 1), state=CONNECTED, type=STREAM,
                 family=F, dev="siw1", transport=3)
        self.add("A3", accept_on(self.socks["L6"]), state=CONNECTED, type=STREAM, family=F,
                 dev="siw1", transport=3)
        self.mark("C3")
        if inet_protocol():
            u = new_socket(socket.AF_INET, STREAM, inet_protocol(), keepalive_off=False)
            self.add("U", u, state=UNCONNECTED, type=STREAM, family=socket.AF_INET)
        else:
            self.add("U", new_socket(F, STREAM, keepalive_off=False), state=UNCONNECTED,
                     type=STREAM, family=F)

        c1, a1, c3, a3 = (self.socks[n] for n in ("C1", "A1", "C3", "A3"))
        for n in C1_MSGS:
            c1.send(os.urandom(n))
            self.count("C1", msgs_tx=1, bytes_tx=n)
            self.count("A1", msgs_rx=1, bytes_rx=n)
        for n in C1_MSGS:
            got = len(a1.recv(65536))
            if got != n:
                raise ValueError(f"A1 read {got} bytes, want {n}")
        for n in A1_MSGS:
            a1.send(os.urandom(n))
            self.count("A1", msgs_tx=1, bytes_tx=n)
            self.count("C1", msgs_rx=1, bytes_rx=n)
        stream = b"".join(struct.pack("!I", n) + os.urandom(n) for n in C3_MSGS)
        c3.sendall(stream)
        self.count("C3", msgs_tx=len(C3_MSGS), bytes_tx=sum(C3_MSGS))
        self.count("A3", msgs_rx=len(C3_MSGS), bytes_rx=sum(C3_MSGS))
        if recv_exact(a3, len(stream)) != stream:
            raise ValueError("A3 read other bytes than C3 sent")
        # C1 registers REG_BYTES for the peer; A1 writes into them.
        self.reg = Buffer(REG_BYTES)
        self.desc, self.ndesc, _ = register(c1, self.reg)
        self.count("C1", registrations=1)
        self.expect["C1"].update(registrations=1, pinned_bytes=REG_BYTES)
        src = Buffer(REG_BYTES)
        src.map[:] = os.urandom(REG_BYTES)
        moved = rdma_write(a1, src, self.desc, self.ndesc)
        if moved != REG_BYTES or self.reg.map[:] != src.map[:]:
            raise ValueError(f"RDMA write moved {moved} bytes, or other bytes")
        self.count("A1", rdma_writes=1, rdma_write_bytes=REG_BYTES)
        self.mark("data")
        # C1's unread messages arrive in the background.
        self.settle(lambda: info_of(c1)["rx_queued"] == sum(A1_MSGS), "C1's rx_queued")
        self.expect["C1"]["rx_queued"] = sum(A1_MSGS)
        self.settle_infos()
        self.mark("settle")

    def settle(self, cond, what, timeout=30):
        deadline = time.monotonic() + timeout
        while not cond():
            if time.monotonic() > deadline:
                raise TimeoutError(f"{what} did not settle in {timeout} s")
            time.sleep(0.1)

    def connected(self):
        return [n for n, e in self.expect.items() if e["state"] == CONNECTED]

    def infos(self):
        return {n: info_of(self.socks[n]) for n in self.connected()}

    def settle_infos(self):
        """Until the credits and queues stop moving (late credit grants)."""
        last = self.infos()
        for _ in range(40):
            time.sleep(0.25)
            now = self.infos()
            if now == last:
                return now
            last = now
        return last

    def state(self):
        out = {"pid": os.getpid(), "comm": open("/proc/self/comm").read().strip(),
               "family": self.family, "ports": self.ports, "socks": {}}
        for name, s in self.socks.items():
            out["socks"][name] = {"fd": s.fileno(), "inode": inode_of(s.fileno()),
                                  "cookie": cookie_of(s)}
        return out

    # -- fields --

    def expected(self, name):
        s = self.socks[name]
        e = dict(self.expect[name])
        e["uid"] = os.geteuid()
        e["inode"] = inode_of(s.fileno())
        e["cookie"] = cookie_of(s)
        e.setdefault("registrations", 0)
        e.setdefault("pinned_bytes", 0)
        if e["state"] != UNCONNECTED:
            fam, host, port = name_of(s.fileno())
            e.update(addr_family=fam, local_addr=host, local_port=port)
        if e["state"] == CONNECTED:
            fam, host, port = name_of(s.fileno(), peer=True)
            e.update(peer_addr=host, peer_port=port, dev_port=1)
            p = params_of(s)
            e["params"] = {k: p[k] for k in PARAMS}
            if p["transport"] != e["transport"]:
                raise ValueError(f"{name}: GET_PARAMS transport {p['transport']}")
        return e

    def check_sock(self, name, d, e, info, bad):
        def want(key, value):
            if d.get(key) != value:
                bad.append(f"{name}.{key} = {d.get(key)!r}, want {value!r}")

        for key, value in e.items():
            if key != "dev_port" or d.get("dev") is not None:
                want(key, value)
        if e["state"] == LISTENING:
            want("dev_port", 1)
        present = set(d)
        must_not = set()
        if e["state"] != CONNECTED:
            must_not |= {"peer_addr", "peer_port", "params", "credits"}
        if e["state"] != LISTENING:
            must_not |= {"accept"}
        if e["state"] == UNCONNECTED:
            must_not |= {"local_addr", "local_port", "addr_family", "dev", "dev_port",
                         "transport"}
        for key in sorted(present & must_not):
            bad.append(f"{name}: {key} present ({d[key]!r}) on a socket in state "
                       f"{STATE_NAMES[e['state']]}")
        for key in ("rx_queued", "tx_queued", "registrations", "pinned_bytes", "stats"):
            if key not in d:
                bad.append(f"{name}: no {key}")
        st = d.get("stats", {})
        keys = set(SOCK_STATS) | (set(LISTEN_STATS) if e["state"] == LISTENING else set())
        if set(st) != keys:
            bad.append(f"{name}.stats keys {sorted(set(st) ^ keys)} differ")
        for key, value in self.counts[name].items():
            if key in ("pdus_tx", "pdus_rx", "keepalives_tx"):
                continue
            if st.get(key) != value:
                bad.append(f"{name}.stats.{key} = {st.get(key)}, want {value}")
        if st.get("pdus_tx", 0) < st.get("msgs_tx", 0) or \
                st.get("keepalives_tx", 0) > st.get("pdus_tx", 0):
            bad.append(f"{name}.stats: pdus_tx {st.get('pdus_tx')} < msgs_tx "
                       f"{st.get('msgs_tx')} or keepalives_tx {st.get('keepalives_tx')} more")
        if e["state"] == CONNECTED:
            c = d.get("credits", {})
            mapping = {"send": "send_credits", "peer": "peer_credits",
                       "receives_posted": "receives_posted", "receives_held": "receives_held",
                       "sends_in_flight": "sends_in_flight"}
            for key, ikey in mapping.items():
                if c.get(key) != info[ikey]:
                    bad.append(f"{name}.credits.{key} = {c.get(key)}, "
                               f"SMBDIRECT_OPT_INFO says {info[ikey]}")
            if c.get("send_target") != e["params"]["send_credit_target"]:
                bad.append(f"{name}.credits.send_target {c.get('send_target')} != params "
                           f"send_credit_target {e['params']['send_credit_target']}")
            if not 0 < c.get("receive_target", 0) <= e["params"]["receive_credit_max"]:
                bad.append(f"{name}.credits.receive_target {c.get('receive_target')} not in "
                           f"1..receive_credit_max")
            for key in ("rx_queued", "tx_queued"):
                if d.get(key) != info[key]:
                    bad.append(f"{name}.{key} = {d.get(key)}, OPT_INFO says {info[key]}")

    def cmd_fields(self, log):
        bad = []
        for attempt in range(5):
            before = self.infos()
            dump = Genl().dump_socks()
            after = self.infos()
            if before == after:
                break
            log.write(f"attempt {attempt}: the credits moved during the dump\n")
            time.sleep(0.5)
        by_inode = {}
        for d in dump:
            if d.get("inode"):
                by_inode.setdefault(d["inode"], []).append(d)
        checked = 0
        for name in self.socks:
            e = self.expected(name)
            found = by_inode.get(e["inode"], [])
            if len(found) != 1:
                bad.append(f"{name}: inode {e['inode']} appears {len(found)} times")
                continue
            self.check_sock(name, found[0], e, after.get(name), bad)
            checked += 1
        # The pairs: what one end sent the other received, PDU for PDU.
        for a, b in (("C1", "A1"), ("C3", "A3")):
            da, db = (by_inode[self.expected(n)["inode"]][0] for n in (a, b))
            for x, y, dx, dy in ((a, b, da, db), (b, a, db, da)):
                if dx["stats"]["pdus_tx"] != dy["stats"]["pdus_rx"]:
                    bad.append(f"{x}.pdus_tx {dx['stats']['pdus_tx']} != "
                               f"{y}.pdus_rx {dy['stats']['pdus_rx']}")
        # C2's peer: a connected child waiting in L's queue, no file yet.
        c2 = self.expected("C2")
        kids = [d for d in dump if d.get("peer_port") == c2["local_port"] and
                d.get("local_port") == self.ports["L"] and d.get("peer_addr") == RXE]
        if len(kids) != 1:
            bad.append(f"C2's unaccepted peer appears {len(kids)} times")
        else:
            k = kids[0]
            if (k.get("state"), k.get("dev"), k.get("uid"), k.get("family")) != \
                    (CONNECTED, "rxe0", os.geteuid(), self.family):
                bad.append(f"C2's unaccepted peer: {k}")
            if k["stats"]["pdus_rx"] != by_inode[c2["inode"]][0]["stats"]["pdus_tx"]:
                bad.append("C2's peer did not receive what C2 sent")
            checked += 1
        L = by_inode.get(self.expected("L")["inode"], [{}])[0]
        if L.get("accept") != {"pending": 0, "ready": 1, "backlog": 8}:
            bad.append(f"L.accept = {L.get('accept')}, want pending 0 ready 1 backlog 8")
        L6 = by_inode.get(self.expected("L6")["inode"], [{}])[0]
        if L6.get("accept") != {"pending": 0, "ready": 0, "backlog": 4}:
            bad.append(f"L6.accept = {L6.get('accept')}, want pending 0 ready 0 backlog 4")
        log.write(f"{len(dump)} sockets in the dump, {checked} checked\n")
        for d in dump:
            log.write(json.dumps(d, sort_keys=True) + "\n")
        return bad

    # -- filters --

    def cmd_filters(self, log):
        g, bad = Genl(), []
        ours = {self.expected(n)["inode"]: n for n in self.socks}

        def names(dump):
            return sorted(ours[d["inode"]] for d in dump if d.get("inode") in ours)

        cases = [
            ({"mask": 1 << LISTENING}, ["L", "L6"], lambda d: d["state"] == LISTENING),
            ({"mask": 1 << CONNECTED}, ["A1", "A3", "C1", "C2", "C3"],
             lambda d: d["state"] == CONNECTED),
            ({"mask": 1 << UNCONNECTED}, ["U"], lambda d: d["state"] == UNCONNECTED),
            ({"mask": (1 << UNCONNECTED) | (1 << LISTENING)}, ["L", "L6", "U"],
             lambda d: d["state"] in (UNCONNECTED, LISTENING)),
            ({"mask": 0}, [], lambda d: False),
            ({"dev": "siw1"}, ["A3", "C3", "L6"], lambda d: d.get("dev") == "siw1"),
            ({"dev": "rxe0", "mask": 1 << LISTENING}, ["L"],
             lambda d: d.get("dev") == "rxe0" and d["state"] == LISTENING),
            ({"dev": "nosuchdev0"}, [], lambda d: False),
            ({"dev": ""}, [], lambda d: False),
            ({}, sorted(self.socks), lambda d: True),
        ]
        for args, want, pred in cases:
            dump = g.dump_socks(**args)
            got = names(dump)
            if got != want:
                bad.append(f"{args}: ours {got}, want {want}")
            stray = [d for d in dump if not pred(d)]
            if stray:
                bad.append(f"{args}: {len(stray)} sockets that do not match, e.g. {stray[0]}")
            log.write(f"{args}: {len(dump)} sockets, ours {got}\n")
        return bad

    # -- the tool --

    @staticmethod
    def as_tool(d):
        """A raw dump entry as `smbdirect ss --json` names it."""
        t = dict(d)
        t["state"] = STATE_NAMES.get(d["state"], f"STATE-{d['state']}")
        t["type"] = TYPES.get(d["type"], str(d["type"]))
        if "transport" in d:
            t["transport"] = TRANSPORTS.get(d["transport"], f"unknown-{d['transport']}")
        if "params" in d:
            t["params"] = dict(d["params"])
            v = d["params"]["version"]
            t["params"]["version"] = f"{v >> 8 & 0xff}.{v & 0xff}"
        return t

    def cmd_tool(self, log, path):
        bad = []
        tool = json.load(open(path))
        dump = Genl().dump_socks()
        st = self.state()
        raw = {(d.get("inode"), d.get("cookie")): self.as_tool(d) for d in dump}
        seen = set()
        for t in tool:
            key = (t.get("inode"), t.get("cookie"))
            users = t.pop("users", None)
            if users is None:
                bad.append(f"inode {key[0]}: no users (ran without -p?)")
            if key not in raw:
                bad.append(f"the tool shows a socket the raw dump does not: {t}")
                continue
            seen.add(key)
            if t != raw[key]:
                diff = sorted(k for k in set(t) | set(raw[key]) if t.get(k) != raw[key].get(k))
                bad.append(f"inode {key[0]}: tool and raw dump differ in {diff}: "
                           f"{[(k, t.get(k), raw[key].get(k)) for k in diff]}")
            for name, s in st["socks"].items():
                if s["inode"] == key[0]:
                    want = [{"comm": st["comm"], "pid": st["pid"], "fd": s["fd"]}]
                    if users != want:
                        bad.append(f"{name}: users {users}, want {want}")
        missing = set(raw) - seen
        if missing:
            bad.append(f"the raw dump has {len(missing)} sockets the tool does not show")
        ours = {s["inode"] for s in st["socks"].values()}
        if not ours <= {t.get("inode") for t in tool}:
            bad.append("some of our sockets are missing from the tool's output")
        log.write(f"{len(tool)} sockets from the tool, {len(dump)} in the raw dump\n")
        return bad

    def cmd_users(self, log, path):
        text = open(path).read()
        st, bad = self.state(), []
        for name, s in st["socks"].items():
            want = f'users:(("{st["comm"]}",pid={st["pid"]},fd={s["fd"]}))'
            if want not in text:
                bad.append(f"{name}: no {want}")
            else:
                log.write(f"{name}: {want}\n")
        return bad

    # -- transfer and stats --

    def cmd_transfer(self, log):
        c1, a1 = self.socks["C1"], self.socks["A1"]
        for _ in range(TRANSFER_MSGS):
            c1.send(os.urandom(TRANSFER_SIZE))
        for _ in range(TRANSFER_MSGS):
            if len(a1.recv(65536)) != TRANSFER_SIZE:
                return ["A1 read a message of another size"]
        self.count("C1", msgs_tx=TRANSFER_MSGS, bytes_tx=TRANSFER_MSGS * TRANSFER_SIZE)
        self.count("A1", msgs_rx=TRANSFER_MSGS, bytes_rx=TRANSFER_MSGS * TRANSFER_SIZE)
        src = Buffer(REG_BYTES)
        src.map[:] = os.urandom(REG_BYTES)
        if rdma_write(a1, src, self.desc, self.ndesc) != REG_BYTES:
            return ["the RDMA write moved less"]
        self.count("A1", rdma_writes=1, rdma_write_bytes=REG_BYTES)
        self.settle_infos()
        moved = {"dev": "rxe0", "msgs_tx": TRANSFER_MSGS, "msgs_rx": TRANSFER_MSGS,
                 "bytes_tx": TRANSFER_MSGS * TRANSFER_SIZE,
                 "bytes_rx": TRANSFER_MSGS * TRANSFER_SIZE,
                 "rdma_writes": 1, "rdma_write_bytes": REG_BYTES}
        json.dump(moved, open(os.path.join(self.dir, "transfer.json"), "w"))
        log.write(json.dumps(moved) + "\n")
        return []

    def cmd_stats_tool(self, log, path):
        tool = json.load(open(path))
        raw = Genl().stats()
        want = {"module": raw["module"],
                "devices": [{"name": d["name"], "index": d["index"], "stats": d["stats"]}
                            for d in raw.get("devices", [])]}
        log.write(json.dumps(raw) + "\n")
        if tool != want:
            return [f"tool {json.dumps(tool)} != raw {json.dumps(want)}"]
        return []

    def cmd_unpriv(self, log, tool, uid="65534"):
        """unpriv() in a child that became uid 65534 (no privileges)."""
        inodes = ",".join(str(self.expected(n)["inode"]) for n in self.socks)
        path = os.path.join(self.dir, "unpriv.child")
        log.flush()
        sys.stdout.flush()
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                with open(path, "w") as out:
                    try:
                        os.setgroups([])
                        os.setgid(int(uid))
                        os.setuid(int(uid))
                        # The uid change made us undumpable: /proc/self/fd
                        # would be root's. PR_SET_DUMPABLE.
                        libc.prctl(4, 1, 0, 0, 0)
                        bad = unpriv(tool, inodes, out)
                    except Exception as e:
                        bad = [f"{type(e).__name__}: {e}"]
                    for b in bad:
                        out.write(f"FAIL {b}\n")
                    code = 1 if bad else 0
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        text = open(path).read()
        log.write(text)
        bad = [line[5:] for line in text.splitlines() if line.startswith("FAIL ")]
        if os.waitstatus_to_exitcode(status) and not bad:
            bad.append(f"the child ended with status {status}")
        return bad

    def cmd_netns(self, log, tool, uid="65534"):
        """netns_child() in a child that unshares its network namespace, while
        init_net holds our sockets and their traffic: the child sees only its
        namespace's counters, and its reset leaves init_net's totals alone."""
        g = Genl()
        before = g.stats()["module"]
        bad = []
        if before.get("sockets", 0) < 8 or not before.get("msgs_tx"):
            bad.append(f"init_net's totals {before}: want our sockets and their traffic")
        path = os.path.join(self.dir, "netns.child")
        log.flush()
        sys.stdout.flush()
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                with open(path, "w") as out:
                    try:
                        child_bad = netns_child(tool, int(uid), out)
                    except Exception as e:
                        child_bad = [f"{type(e).__name__}: {e}"]
                    for b in child_bad:
                        out.write(f"FAIL {b}\n")
                    code = 1 if child_bad else 0
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        text = open(path).read()
        log.write(text)
        bad += [line[5:] for line in text.splitlines() if line.startswith("FAIL ")]
        if os.waitstatus_to_exitcode(status) and not bad:
            bad.append(f"the child ended with status {status}")
        after = g.stats()["module"]
        for k in STATS:
            if k != "sockets" and after.get(k, 0) < before.get(k, 0):
                bad.append(f"init_net's {k} went from {before.get(k)} to {after.get(k)}: "
                           f"another namespace's reset reached it")
        if after.get("sockets") != before.get("sockets"):
            bad.append(f"init_net's sockets went from {before.get('sockets')} to "
                       f"{after.get('sockets')}: another namespace's socket counted here?")
        log.write(f"init_net before and after: sockets {before.get('sockets')} "
                  f"msgs_tx {before.get('msgs_tx')} -> {after.get('msgs_tx')}\n")
        g.close()
        return bad

    def cmd_text(self, log, path):
        """`smbdirect ss -a -e -p`: every column of every row, and the -e lines."""
        import re
        text = open(path).read()
        log.write(text)
        lines = text.splitlines()
        st, bad = self.state(), []
        head = r"State\s+Recv-Q\s+Send-Q\s+Local Address:Port\s+Peer Address:Port\s+Dev\s+Transport\s+Process$"
        if not lines or not re.match(head, lines[0]):
            bad.append(f"header: {lines[:1]}")

        def ep(fam, addr, port):
            if addr is None:
                addr = {socket.AF_INET: "0.0.0.0", socket.AF_INET6: "::"}.get(fam, "*")
            if fam == socket.AF_INET6:
                addr = f"[{addr}]"
            return f"{addr}:{port or '*'}"

        def extended(i):
            out = []
            for line in lines[i + 1:]:
                if not line.startswith("\t "):
                    break
                out.append(line[2:])
            return out

        by_users = {}
        for i, line in enumerate(lines):
            m = re.search(r'users:\(\("[^"]*",pid=\d+,fd=(\d+)\)\)$', line)
            if m:
                by_users[int(m.group(1))] = i
        for name, s in self.socks.items():
            e, fd = self.expected(name), s.fileno()
            if fd not in by_users:
                bad.append(f"{name}: no row with fd={fd}")
                continue
            i = by_users[fd]
            state = e["state"]
            if state == LISTENING:
                queues = (1, 8) if name == "L" else (0, 4)
                peer = ep(e["addr_family"], None, None)
            else:
                queues = (e.get("rx_queued", 0), 0)
                peer = ep(e.get("addr_family"), e.get("peer_addr"), e.get("peer_port"))
            local = ep(e.get("addr_family"), e.get("local_addr"), e.get("local_port"))
            if state == UNCONNECTED:
                local = peer = "*:*"
            dev = f"{e['dev']}/1" if "dev" in e else "-"
            transport = {2: "RoCE", 3: "iWARP"}.get(e.get("transport"), "-")
            users = f'users:(("{st["comm"]}",pid={st["pid"]},fd={fd}))'
            want = [STATE_NAMES[state], str(queues[0]), str(queues[1]), local, peer, dev,
                    transport, users]
            if lines[i].split() != want:
                bad.append(f"{name}: row {lines[i].split()}, want {want}")
            ext = extended(i)
            kind = TYPES[e["type"]]
            first = f"uid:0 ino:{e['inode']} cookie:{e['cookie']} family:{e['family']} " \
                    f"type:{kind}"
            queue = f"rx_queued:{e.get('rx_queued', 0)} tx_queued:0 " \
                    f"registrations:{e['registrations']} pinned_bytes:{e['pinned_bytes']}"
            c = self.counts[name]
            want_ext = [first, queue,
                        f"errors: err_protocol:0 err_timeout:0 err_refused:0 err_transport:0 "
                        f"err_device:0 err_rdma:0"]
            if state == CONNECTED:
                p = e["params"]
                want_ext.append("params: " + " ".join(
                    f"{k}:{'1.0' if k == 'version' else p[k]}" for k in PARAMS))
            if state == LISTENING:
                want_ext.append(f"accept: pending:0 ready:{queues[0]} backlog:{queues[1]}")
            for w in want_ext:
                if w not in ext:
                    bad.append(f"{name}: no -e line '{w}' in {ext}")
            msgs = [x for x in ext if x.startswith("messages: ")]
            wm = (f"msgs_tx:{c['msgs_tx']} msgs_rx:{c['msgs_rx']}",
                  f"bytes_tx:{c['bytes_tx']} bytes_rx:{c['bytes_rx']}")
            if not msgs or not all(x in msgs[0] for x in wm):
                bad.append(f"{name}: messages line {msgs}, want {wm}")
            rdma = [x for x in ext if x.startswith("rdma: ")]
            wr = f"rdma_writes:{c['rdma_writes']} rdma_write_bytes:{c['rdma_write_bytes']} " \
                 f"registrations:{c['registrations']} "
            if not rdma or wr not in rdma[0]:
                bad.append(f"{name}: rdma line {rdma}, want '{wr}'")
            if state == CONNECTED and not any(x.startswith("credits: send:") for x in ext):
                bad.append(f"{name}: no credits line")
        # C2's peer, waiting in L's queue: a row of its own, no process.
        c2 = self.expected("C2")
        want = ["ESTAB", "0", "0", f"{RXE}:{self.ports['L']}", f"{RXE}:{c2['local_port']}",
                "rxe0/1", "RoCE"]
        if want not in [line.split() for line in lines]:
            bad.append(f"no row {want} for C2's unaccepted peer")
        return bad

    def cmd_close(self, log):
        """Closes every socket; they must leave the dump."""
        inodes = ",".join(str(self.expected(n)["inode"]) for n in self.socks)
        for s in self.socks.values():
            s.close()
        self.socks = {}
        return gone(inodes, log=log)

    def cmd_tool_filters(self, log, tool):
        """`smbdirect ss` filters: the kernel's (--dev, states) and the tool's own."""
        import subprocess
        st, bad = self.state(), []
        ours = {v["inode"]: k for k, v in st["socks"].items()}
        port = self.ports["L"]
        cases = [
            (["-a", "--dev", "siw1"], ["A3", "C3", "L6"], lambda s: s.get("dev") == "siw1"),
            (["--src", f"10.77.0.1:{port}"], ["A1"],
             lambda s: s["local_port"] == port and s["state"] != "LISTEN"),
            (["-4"], ["A1", "C1", "C2"],
             lambda s: s["addr_family"] == 2 and s["state"] == "ESTAB"),
            (["-a", "-6", "dport", "=", str(port + 1), "src", "fd77::/16"], ["C3"],
             lambda s: s.get("peer_port") == port + 1 and s["addr_family"] == 10),
        ]
        out = subprocess.run([tool, "ss", "-H", "-l"], capture_output=True, text=True,
                             timeout=60)
        rows = [line.split() for line in out.stdout.splitlines()]
        lports = sorted(r[3] for r in rows if r and r[3].endswith((f":{port}", f":{port + 1}")))
        if out.returncode or any(r[0] != "LISTEN" for r in rows) or \
                lports != sorted([f"{RXE}:{port}", f"[{SIW}]:{port + 1}"]):
            bad.append(f"ss -H -l: exit {out.returncode}, {out.stdout!r}")
        log.write(f"ss -H -l: {len(rows)} rows, all LISTEN, no header\n")
        for args, want, pred in cases:
            out = subprocess.run([tool, "ss", "--json", *args], capture_output=True, text=True,
                                 timeout=60)
            if out.returncode:
                bad.append(f"ss {' '.join(args)}: exit {out.returncode} {out.stderr}")
                continue
            got = json.loads(out.stdout)
            names = sorted(ours[s["inode"]] for s in got if s.get("inode") in ours)
            if names != want:
                bad.append(f"ss {' '.join(args)}: ours {names}, want {want}")
            stray = [s for s in got if not pred(s)]
            if stray:
                bad.append(f"ss {' '.join(args)}: {len(stray)} that do not match: {stray[0]}")
            log.write(f"ss {' '.join(args)}: {names}\n")
        return bad

    def cmd_stats_delta(self, log, before, after):
        return stats_delta(before, after, os.path.join(self.dir, "transfer.json"), log)

    def cmd_stats_zero(self, log, path):
        return stats_zero(path, log)

    def cmd_malformed(self, log):
        return malformed(log)

    def cmd_fuzz(self, log, seed, count):
        return fuzz(int(seed), int(count), log)

    def serve(self):
        fifo = os.path.join(self.dir, "cmd")
        fd = os.open(fifo, os.O_RDWR)
        with os.fdopen(fd) as commands:
            for line in commands:
                words = line.split()
                if not words:
                    continue
                if words[0] == "quit":
                    print("done quit 0", flush=True)
                    return
                name = words[0].split(".")[0].replace("-", "_")
                with open(os.path.join(self.dir, f"{words[0]}.log"), "w") as log:
                    try:
                        bad = getattr(self, f"cmd_{name}")(log, *words[1:])
                    except Exception as e:  # report, keep serving
                        bad = [f"{type(e).__name__}: {e}"]
                    for b in bad:
                        log.write(f"FAIL {b}\n")
                print(f"done {words[0]} {1 if bad else 0}", flush=True)


def serve(directory, port=7801):
    h = Holder(directory, port)
    st = h.state()
    with open(os.path.join(directory, "state.json"), "w") as f:
        json.dump(st, f)
    print("sockets " + " ".join(f"{k}:fd{v['fd']}/ino{v['inode']}"
                                for k, v in st["socks"].items()))
    print("inodes " + ",".join(str(v["inode"]) for v in st["socks"].values()))
    print(f"pid {st['pid']}")
    print("seconds " + ", ".join(h.timing))
    print("ready", flush=True)
    h.serve()
    return 0


# --- stats --------------------------------------------------------------------------------


def by_device(stats):
    return {d.get("name"): d.get("stats", {}) for d in stats.get("devices", [])}


def stats_delta(before_path, after_path, transfer_path, log=sys.stdout):
    before, after = json.load(open(before_path)), json.load(open(after_path))
    moved = json.load(open(transfer_path))
    bad = []
    bdev, adev = by_device(before), by_device(after)
    columns = [("module", before["module"], after["module"], True)]
    for name in sorted(set(bdev) | set(adev)):
        columns.append((name, bdev.get(name, {}), adev.get(name, {}), name == moved["dev"]))
    for name, b, a, carried in columns:
        delta = {k: a.get(k, 0) - b.get(k, 0) for k in STATS}
        for k in STATS:
            if k in ("pdus_tx", "pdus_rx"):
                continue
            want = moved.get(k, 0) if carried else 0
            if delta[k] != want:
                bad.append(f"{name}.{k} grew by {delta[k]}, want {want}")
        low = TRANSFER_MSGS if carried else 0
        if delta["pdus_tx"] != delta["pdus_rx"] or delta["pdus_tx"] < low or \
                (not carried and delta["pdus_tx"]):
            bad.append(f"{name}: pdus_tx grew by {delta['pdus_tx']}, pdus_rx by "
                       f"{delta['pdus_rx']} (want equal, at least {low})")
        log.write(f"{name}: " + " ".join(f"{k}+{v}" for k, v in delta.items() if v) + "\n")
    if moved["dev"] not in adev:
        bad.append(f"no device {moved['dev']} in {after_path}")
    return bad


def stats_zero(path, log=sys.stdout):
    s, bad = json.load(open(path)), []
    log.write(f"after the reset: module {s['module']}\n")
    for name, st in [("module", s["module"])] + sorted(by_device(s).items()):
        for k in STATS:
            if k != "sockets" and st.get(k) != 0:
                bad.append(f"{name}.{k} = {st.get(k)} after the reset, want 0")
    if s["module"].get("sockets", 0) < 8:
        bad.append(f"module.sockets = {s['module'].get('sockets')}: the live ones are gone?")
    return bad


# --- an unprivileged user -----------------------------------------------------------


def unpriv(tool, root_inodes, log=sys.stdout):
    import subprocess
    bad = []
    if os.geteuid() == 0:
        return ["run me as an unprivileged user"]
    root_inodes = {int(x) for x in root_inodes.split(",")}
    # The tool's copy has its library beside it.
    env = dict(os.environ, LD_LIBRARY_PATH=os.path.dirname(os.path.abspath(tool)))
    g = Genl()
    before = g.dump_socks()
    if before:
        bad.append(f"before it has a socket, the dump shows {len(before)}: {before[0]}")
    mine = new_socket(sd_family(), socket.SOCK_SEQPACKET, keepalive_off=False)
    ino = inode_of(mine.fileno())
    for args in ({}, {"mask": 1 << UNCONNECTED}):
        dump = g.dump_socks(**args)
        inodes = [d.get("inode") for d in dump]
        if inodes != [ino]:
            bad.append(f"{args}: inodes {inodes}, want only mine {ino}")
        if any(d.get("uid") != os.geteuid() for d in dump):
            bad.append(f"{args}: another user's socket: {dump}")
        if root_inodes & set(inodes):
            bad.append(f"{args}: root's sockets {root_inodes & set(inodes)} shown")
    out = subprocess.run([tool, "ss", "-a", "--json"], capture_output=True, text=True,
                         timeout=60, env=env)
    shown = json.loads(out.stdout) if out.returncode == 0 else None
    if shown is None or [t.get("inode") for t in shown] != [ino] or \
            shown[0].get("uid") != os.geteuid():
        bad.append(f"smbdirect ss -a --json: exit {out.returncode}, {out.stdout!r} "
                   f"{out.stderr!r}, want only inode {ino}")
    try:
        g.reset()
        bad.append("STATS_RESET worked without CAP_NET_ADMIN")
    except NetlinkError as e:
        if e.errno != errno.EPERM:
            bad.append(f"STATS_RESET: {e}, want EPERM")
    try:
        g.stats()
    except (NetlinkError, ValueError) as e:
        bad.append(f"STATS_GET refused to an unprivileged user: {e}")
    out = subprocess.run([tool, "stats", "--reset"], capture_output=True, text=True,
                         timeout=60, env=env)
    if out.returncode != 1 or "CAP_NET_ADMIN" not in out.stderr or out.stdout:
        bad.append(f"smbdirect stats --reset: exit {out.returncode}, {out.stderr!r}, "
                   f"stdout {out.stdout[:80]!r}")
    log.write(f"uid {os.geteuid()}: raw dump and ss -a --json show its own socket {ino} "
              f"only; STATS_RESET EPERM, stats --reset: {out.stderr.strip()}\n")
    mine.close()
    return bad


# --- another network namespace ------------------------------------------------------

CLONE_NEWNET = 0x40000000


def netns_totals_bad(s, sockets, who):
    """What in STATS_GET reply s is not a namespace's own: `sockets` live
    sockets, no traffic, no device."""
    bad = []
    module = s.get("module", {})
    if module.get("sockets") != sockets:
        bad.append(f"{who}: sockets {module.get('sockets')}, want {sockets} (its own)")
    moved = {k: module.get(k) for k in STATS if k != "sockets" and module.get(k)}
    if moved:
        bad.append(f"{who}: counters of traffic it never had: {moved}")
    if s.get("devices"):
        bad.append(f"{who}: devices it never used: {[d.get('name') for d in s['devices']]}")
    return bad


def netns_child(tool, uid, log=sys.stdout):
    """In a network namespace of its own (unshared here, as root), while
    init_net has live connections and traffic: STATS_GET shows nothing but
    this namespace's sockets (one it makes, then none), root resets this
    namespace's totals, and uid 65534 sees the same as root did and may not
    reset; `smbdirect stats --json` as uid 65534 says the same."""
    import subprocess
    bad = []
    if os.geteuid() != 0:
        return ["run me as root"]
    if libc.unshare(CLONE_NEWNET):
        return [f"unshare(CLONE_NEWNET): {os.strerror(ctypes.get_errno())}"]
    g = Genl()
    bad += netns_totals_bad(g.stats(), 0, "root in a new namespace")
    mine = new_socket(sd_family(), socket.SOCK_SEQPACKET, keepalive_off=False)
    bad += netns_totals_bad(g.stats(), 1, "root in a new namespace with one socket")
    try:
        g.reset()
    except NetlinkError as e:
        bad.append(f"STATS_RESET by root in its namespace: {e}")
    mine.close()
    end = time.monotonic() + 10
    while g.stats()["module"].get("sockets") and time.monotonic() < end:
        time.sleep(0.1)
    g.close()
    os.setgroups([])
    os.setgid(uid)
    os.setuid(uid)
    g = Genl()
    s = g.stats()
    bad += netns_totals_bad(s, 0, f"uid {uid} in a new namespace")
    try:
        g.reset()
        bad.append(f"STATS_RESET worked for uid {uid} without CAP_NET_ADMIN")
    except NetlinkError as e:
        if e.errno != errno.EPERM:
            bad.append(f"STATS_RESET by uid {uid}: {e}, want EPERM")
    env = dict(os.environ, LD_LIBRARY_PATH=os.path.dirname(os.path.abspath(tool)))
    out = subprocess.run([tool, "stats", "--json"], capture_output=True, text=True,
                         timeout=60, env=env)
    try:
        shown = json.loads(out.stdout) if out.returncode == 0 else None
    except ValueError:
        shown = None
    if shown is None:
        bad.append(f"smbdirect stats --json as uid {uid}: exit {out.returncode}, "
                   f"{out.stdout[:200]!r} {out.stderr[:200]!r}")
    else:
        bad += netns_totals_bad(shown, 0, f"smbdirect stats --json as uid {uid}")
    log.write(f"a new namespace: root's and uid {uid}'s STATS_GET show its own sockets only "
              f"(sockets {s['module'].get('sockets')}, msgs_tx {s['module'].get('msgs_tx')}, "
              f"devices {[d.get('name') for d in s.get('devices', [])]}); "
              f"stats --json: {out.stdout.strip()[:160]}\n")
    return bad


# --- malformed requests and the fuzzer -----------------------------------------------


def exchange(g, data, seq, wait_dump=True):
    """Sends data, then a NOOP with ACK as a sentinel; returns (errno or None,
    messages for seq, dump finished?)."""
    err, replies, multi, done, synced = None, 0, False, False, False
    try:
        g.send_raw(data)
    except OSError as e:  # refused by send() itself (an empty datagram: ENODATA)
        err = e.errno
    sentinel = g.next_seq()
    g.send_raw(g.message(NLMSG_NOOP, NLM_F_REQUEST | NLM_F_ACK, b"", sentinel))
    while not synced or (wait_dump and multi and not done and err is None):
        for mtype, flags, mseq, payload in g.messages():
            if mseq == sentinel and mtype == NLMSG_ERROR:
                synced = True
            elif mseq == seq:
                if mtype == NLMSG_ERROR:
                    e, _ = Genl.error_of(payload, flags)
                    err = e if e else err
                    done = True
                elif mtype == NLMSG_DONE:
                    done = True
                else:
                    replies += 1
                    multi = multi or bool(flags & NLM_F_MULTI)
    return err, replies, done


def quick_exchange(g, data, seq, timeout=5):
    """As exchange(), without a sentinel: netlink handles a request within
    the send() that carries it, so its answer (error, ACK, reply, a dump's
    first part) is queued when send() returns; a dump's next parts come
    with each recv(). g's socket is non-blocking."""
    err, replies, multi, done = None, 0, False, False
    try:
        g.send_raw(data)
    except OSError as e:  # refused by send() itself (an empty datagram: ENODATA)
        return e.errno, 0, True
    while not done:
        try:
            msgs = g.messages()
        except BlockingIOError:
            if not multi:
                break
            if not select.select([g.s], [], [], timeout)[0]:
                raise TimeoutError("a dump stopped half-way")
            continue
        for mtype, flags, mseq, payload in msgs:
            if mseq != seq:
                continue
            if mtype == NLMSG_ERROR:
                e, _ = Genl.error_of(payload, flags)
                err = e if e else err
                done = True
            elif mtype == NLMSG_DONE:
                done = True
            else:
                replies += 1
                multi = multi or bool(flags & NLM_F_MULTI)
    return err, replies, done


def malformed(log=sys.stdout):
    g, bad = Genl(timeout=5), []
    fam = g.family
    EINVAL, ERANGE, EOPNOTSUPP = errno.EINVAL, errno.ERANGE, errno.EOPNOTSUPP

    def req(cmd, flags, attrs=b"", **kw):
        return g.genl(cmd, flags, attrs, **kw)

    def raw(build):
        seq = g.next_seq()
        return build(seq), seq

    def hdr(length, flags, seq, payload):
        return struct.pack("=IHHII", length, fam, flags, seq, 0) + payload

    genl_hdr = struct.pack("=BBH", CMD_SOCK_GET, VERSION, 0)
    mask = nla(A_SOCK_STATE_MASK, struct.pack("=I", 0xffffffff))
    cases = [
        # name, (message, seq), errors accepted (None: success), must stay silent
        ("state_mask_u8", req(CMD_SOCK_GET, NLM_F_DUMP, nla(A_SOCK_STATE_MASK, b"\x01")),
         {EINVAL, ERANGE}),
        ("state_mask_u64", req(CMD_SOCK_GET, NLM_F_DUMP,
                               nla(A_SOCK_STATE_MASK, struct.pack("=Q", 2))), {EINVAL, ERANGE}),
        ("state_mask_empty", req(CMD_SOCK_GET, NLM_F_DUMP, nla(A_SOCK_STATE_MASK, b"")),
         {EINVAL, ERANGE}),
        ("dev_name_no_nul", req(CMD_SOCK_GET, NLM_F_DUMP, nla(A_SOCK_DEV_NAME, b"rxe0")),
         {EINVAL, ERANGE}),
        ("dev_name_too_long", req(CMD_SOCK_GET, NLM_F_DUMP,
                                  nla(A_SOCK_DEV_NAME, b"r" * 200 + b"\0")), {EINVAL, ERANGE}),
        ("unknown_attribute", req(CMD_SOCK_GET, NLM_F_DUMP, nla(200, b"\0\0\0\0")),
         {EINVAL, ERANGE, EOPNOTSUPP}),
        ("reply_attribute_in_request", req(CMD_SOCK_GET, NLM_F_DUMP,
                                           nla(A_SOCK_UID, struct.pack("=I", 0))),
         {EINVAL, ERANGE, EOPNOTSUPP}),
        ("attribute_type_0", req(CMD_SOCK_GET, NLM_F_DUMP, nla(0, b"\0\0\0\0")),
         {EINVAL, ERANGE, EOPNOTSUPP}),
        ("nested_flag_on_u32", req(CMD_SOCK_GET, NLM_F_DUMP,
                                   struct.pack("=HH", 8, A_SOCK_STATE_MASK | 0x8000) +
                                   b"\0\0\0\0"), {EINVAL, ERANGE}),
        ("attribute_len_below_header", req(CMD_SOCK_GET, NLM_F_DUMP,
                                           struct.pack("=HH", 2, A_SOCK_STATE_MASK) +
                                           b"\0\0\0\0"), {EINVAL, ERANGE}),
        ("attribute_overruns_message", req(CMD_SOCK_GET, NLM_F_DUMP,
                                           struct.pack("=HH", 64, A_SOCK_STATE_MASK) +
                                           b"\0\0\0\0"), {EINVAL, ERANGE}),
        ("trailing_bytes", req(CMD_SOCK_GET, NLM_F_DUMP, mask + b"\x01\x02\x03"),
         {EINVAL, ERANGE}),
        ("stats_get_with_attribute", req(CMD_STATS_GET, NLM_F_ACK, nla(1, b"\0\0\0\0")),
         {EINVAL, ERANGE, EOPNOTSUPP}),
        ("stats_get_unknown_attribute", req(CMD_STATS_GET, NLM_F_ACK, nla(77, b"\0" * 8)),
         {EINVAL, ERANGE, EOPNOTSUPP}),
        ("stats_reset_with_attribute", req(CMD_STATS_RESET, NLM_F_ACK, nla(1, b"\0" * 4)),
         {EINVAL, ERANGE, EOPNOTSUPP}),
        ("unknown_command_0", req(0, NLM_F_ACK), {EOPNOTSUPP, EINVAL}),
        ("unknown_command_4", req(4, NLM_F_ACK), {EOPNOTSUPP, EINVAL}),
        ("unknown_command_255", req(255, NLM_F_ACK | NLM_F_DUMP), {EOPNOTSUPP, EINVAL}),
        ("sock_get_without_dump", req(CMD_SOCK_GET, NLM_F_ACK), {EOPNOTSUPP, EINVAL}),
        ("stats_get_as_dump", req(CMD_STATS_GET, NLM_F_DUMP), {EOPNOTSUPP, EINVAL}),
        ("genl_header_truncated", raw(lambda s: hdr(18, NLM_F_REQUEST | NLM_F_ACK, s,
                                                     genl_hdr[:2] + b"\0\0")),
         {EINVAL}),
        ("genl_header_missing", raw(lambda s: hdr(16, NLM_F_REQUEST | NLM_F_ACK, s, b"")),
         {EINVAL}),
        # Shorter than their own header or longer than the datagram:
        # netlink drops them without an answer.
        ("nlmsg_len_beyond_datagram", raw(lambda s: hdr(400, NLM_F_REQUEST | NLM_F_ACK, s,
                                                        genl_hdr + mask)), "silent"),
        ("nlmsg_len_below_header", raw(lambda s: hdr(8, NLM_F_REQUEST | NLM_F_ACK, s,
                                                     genl_hdr)), "silent"),
        ("datagram_of_10_bytes", raw(lambda s: hdr(16, NLM_F_REQUEST | NLM_F_ACK, s,
                                                   b"")[:10]), "silent"),
        # Well-formed edge cases answer normally.
        ("state_mask_0", req(CMD_SOCK_GET, NLM_F_DUMP,
                             nla(A_SOCK_STATE_MASK, struct.pack("=I", 0))), "empty"),
        ("dev_name_empty", req(CMD_SOCK_GET, NLM_F_DUMP, nla(A_SOCK_DEV_NAME, b"\0")),
         "empty"),
        ("other_version", req(CMD_STATS_GET, NLM_F_ACK, version=200), None),
        # genetlink's header check (genlmsghdr.reserved 0, no nlmsg_flags
        # beyond REQUEST, ACK, ECHO and DUMP), which a new family gets on
        # every command (resv_start_op 0).
        ("genl_reserved_nonzero", raw(lambda s: hdr(20, NLM_F_REQUEST | NLM_F_ACK, s,
                                                    struct.pack("=BBH", CMD_STATS_GET,
                                                                VERSION, 1))),
         {EINVAL}),
        ("ambiguous_nlmsg_flags", req(CMD_STATS_GET, NLM_F_ACK | NLM_F_MULTI), {EINVAL}),
        ("reserved_nlmsg_flag_on_dump", req(CMD_SOCK_GET, NLM_F_DUMP | 0x20), {EINVAL}),
    ]
    for name, (msg, seq), want in cases:
        try:
            err, replies, done = exchange(g, msg, seq)
        except (socket.timeout, TimeoutError):
            bad.append(f"{name}: no answer (not even to the sentinel) within 5 s")
            g = Genl(timeout=5)
            continue
        if want == "silent":
            ok = err is None and replies == 0 and not done
        elif want == "empty":
            ok = err is None and replies == 0 and done
        elif want is None:
            ok = err is None and replies >= 1
        else:
            ok = err in want
        verdict = "ok" if ok else "FAIL"
        log.write(f"{verdict} {name}: error {errno.errorcode.get(err, err)}, "
                  f"{replies} replies, done {done}\n")
        if not ok:
            bad.append(f"{name}: error {errno.errorcode.get(err, err)}, {replies} replies, "
                       f"want {want}")
    bad += still_answers(log)
    return bad


def still_answers(log=sys.stdout):
    g, bad = Genl(timeout=10), []
    try:
        dump = g.dump_socks()
        g.stats()
        log.write(f"the family still answers: {len(dump)} sockets, stats\n")
    except Exception as e:
        bad.append(f"the family does not answer any more: {type(e).__name__}: {e}")
    return bad


def mutate(msg, rnd, fam, seq):
    m = bytearray(msg)
    for _ in range(rnd.randint(1, 3)):
        op = rnd.randrange(9)
        if op == 0 and len(m) > 16:             # flip bits past the nlmsghdr
            i = rnd.randrange(16, len(m))
            m[i] ^= 1 << rnd.randrange(8)
        elif op == 1 and len(m) >= 4:            # nlmsg_len anything
            struct.pack_into("=I", m, 0, rnd.choice([0, 4, 15, 16, 17, 18, 19, 20,
                                                     len(m) - 1, len(m) + 4,
                                                     rnd.randrange(0, len(m) + 64)]))
        elif op == 2:                            # truncate
            del m[rnd.randrange(0, len(m) + 1):]
        elif op == 3:                            # a random attribute
            t = rnd.choice([0, 1, 5, 13, 24, 25, 31, 200, rnd.randrange(0, 1 << 16)])
            data = rnd.randbytes(rnd.choice([0, 1, 2, 4, 8, 17]))
            size = 4 + len(data) if rnd.random() < 0.8 else rnd.randrange(0, 64)
            m += struct.pack("=HH", size & 0xffff, t) + data + \
                b"\0" * ((4 - len(data) % 4) % 4)
        elif op == 4 and len(m) >= 17:           # another command
            m[16] = rnd.choice([0, 1, 2, 3, 4, 5, 255, rnd.randrange(256)])
        elif op == 5 and len(m) >= 8:            # other flags
            flags = NLM_F_REQUEST * (rnd.random() < 0.9)
            for f in (NLM_F_ACK, NLM_F_DUMP, NLM_F_ROOT, NLM_F_ECHO, NLM_F_MULTI, 0x800):
                if rnd.random() < 0.3:
                    flags |= f
            struct.pack_into("=H", m, 6, flags)
        elif op == 6 and len(m) >= 22:           # an attribute's length
            struct.pack_into("=H", m, 20, rnd.randrange(0, 80))
        elif op == 7:                            # random bytes appended
            m += rnd.randbytes(rnd.randrange(1, 12))
        elif op == 8 and len(m) > 20:            # duplicate the attributes
            m += m[20:]
        if len(m) >= 4 and op != 1 and op != 2 and rnd.random() < 0.7:
            struct.pack_into("=I", m, 0, len(m))  # usually a consistent length
    # Never another family's message; the seq we wait for.
    if len(m) >= 6:
        struct.pack_into("=H", m, 4, fam)
    if len(m) >= 12:
        struct.pack_into("=I", m, 8, seq)
    # netlink reads a second message from what follows the first one's
    # length: that one's type would be random bytes, perhaps another
    # family's command. The first message takes the whole datagram then.
    if len(m) >= 4:
        size = struct.unpack_from("=I", m)[0]
        if 16 <= size and ((size + 3) & ~3) + 16 <= len(m):
            struct.pack_into("=I", m, 0, len(m))
    return bytes(m)


def fuzz(seed, count, log=sys.stdout, budget=60.0):
    """count mutated requests (fewer if budget seconds run out first: the
    TCG guest's speed varies with the host's load)."""
    rnd = random.Random(seed)
    g, bad = Genl(timeout=5), []
    g.s.setblocking(False)
    mask = lambda: nla(A_SOCK_STATE_MASK, struct.pack("=I", rnd.randrange(1 << 32)))
    bases = [
        lambda s: g.genl(CMD_SOCK_GET, NLM_F_DUMP, mask() + nla(A_SOCK_DEV_NAME, b"rxe0\0"),
                         seq=s)[0],
        lambda s: g.genl(CMD_SOCK_GET, NLM_F_DUMP, mask(), seq=s)[0],
        lambda s: g.genl(CMD_SOCK_GET, NLM_F_DUMP, seq=s)[0],
        lambda s: g.genl(CMD_STATS_GET, NLM_F_ACK, seq=s)[0],
    ]
    start = time.monotonic()
    errors, answered, silent = {}, 0, 0
    done = 0
    for i in range(count):
        if time.monotonic() - start > budget:
            break
        seq = g.next_seq()
        msg = mutate(rnd.choice(bases)(seq), rnd, g.family, seq)
        try:
            err, replies, finished = quick_exchange(g, msg, seq)
        except (socket.timeout, TimeoutError) as e:
            bad.append(f"request {i} ({msg.hex()}): {e}")
            break
        except ValueError as e:
            bad.append(f"request {i} ({msg.hex()}): malformed reply: {e}")
            break
        if err is not None:
            errors[err] = errors.get(err, 0) + 1
        elif replies or finished:
            answered += 1
        else:
            silent += 1
        done += 1
    took = time.monotonic() - start
    if done < count // 4:
        bad.append(f"only {done} of {count} requests in {budget} s")
    log.write(f"seed {seed}: {done} requests in {took:.1f} s; answered {answered}, "
              f"silent {silent}, errors " +
              ", ".join(f"{errno.errorcode.get(e, e)} {n}" for e, n in sorted(errors.items())) +
              "\n")
    bad += still_answers(log)
    return bad


def gone(inodes, timeout=30, log=sys.stdout):
    inodes = {int(x) for x in inodes.split(",")}
    g = Genl()
    start = time.monotonic()
    while True:
        left = inodes & {d.get("inode") for d in g.dump_socks()}
        if not left:
            log.write(f"all {len(inodes)} closed sockets left the dump in "
                      f"{time.monotonic() - start:.1f} s\n")
            return []
        deadline = start + timeout
        if time.monotonic() > deadline:
            return [f"{len(left)} closed sockets still in the dump after {timeout} s: {left}"]
        time.sleep(0.5)


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    cmd, args = argv[1], argv[2:]
    if cmd == "serve":
        return serve(*args[:1], *(int(a) for a in args[1:2]))
    funcs = {"stats-delta": stats_delta, "stats-zero": stats_zero,
             "unpriv": lambda tool, inodes: unpriv(tool, inodes),
             "netns": lambda tool: netns_child(tool, 65534),
             "malformed": malformed, "gone": gone,
             "fuzz": lambda seed, count: fuzz(int(seed), int(count))}
    bad = funcs[cmd](*args)
    for b in bad:
        print(f"FAIL {b}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
