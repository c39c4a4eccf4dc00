#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""One STREAM message over socket(AF_INET[6], SOCK_STREAM, IPPROTO_SMBDIRECT)
with a non-blocking connect() (lab.sh's nonblocking_connect cases).

  nbconnect.py listen ADDR PORT    prints "listening", takes one connection,
                                   exit 0 when the message arrived intact
  nbconnect.py connect ADDR PORT   connect() with SOCK_NONBLOCK, poll() for
                                   POLLOUT, SO_ERROR, then the message

The message: a 4-byte big-endian length prefix and 64 KiB of a pattern.
"""
import errno
import os
import select
import socket
import sys

IPPROTO_SMBDIRECT = int(os.environ.get("SD_IPPROTO", "257"))
DATA = bytes(range(256)) * 256
MESSAGE = len(DATA).to_bytes(4, "big") + DATA


def fail(what):
    print(f"nbconnect: {what}", flush=True)
    sys.exit(1)


def main():
    mode, addr, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
    fam = socket.AF_INET6 if ":" in addr else socket.AF_INET
    if mode == "listen":
        s = socket.socket(fam, socket.SOCK_STREAM, IPPROTO_SMBDIRECT)
        s.bind((addr, port))
        s.listen(1)
        print("listening", flush=True)
        c, _ = s.accept()
        got = b""
        while len(got) < len(MESSAGE):
            b = c.recv(1 << 16)
            if not b:
                break
            got += b
        if got != MESSAGE:
            fail(f"received {len(got)} bytes, not the message")
        print(f"received {len(got)} bytes intact", flush=True)
        return
    s = socket.socket(fam, socket.SOCK_STREAM | socket.SOCK_NONBLOCK,
                      IPPROTO_SMBDIRECT)
    err = s.connect_ex((addr, port))
    if err != errno.EINPROGRESS:
        fail(f"connect: {os.strerror(err)} (want EINPROGRESS)")
    p = select.poll()
    p.register(s, select.POLLOUT)
    if not p.poll(20000):
        fail("connect: no POLLOUT within 20 s")
    err = s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
    if err:
        fail(f"connect: {os.strerror(err)}")
    s.setblocking(True)
    s.sendall(MESSAGE)
    # Until the listener has it all and closes: EOF.
    s.recv(1)
    print("connected, sent and closed by the listener", flush=True)


main()
