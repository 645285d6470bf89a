#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""Checked TCP transfers for the IPoIB tests.

  scire_tcp.py sum ADDR [PORT]        accept one connection on ADDR:PORT and
                                      print the byte count and SHA-256 of all
                                      it received up to its end
  scire_tcp.py send ADDR FILE [PORT]  send FILE to ADDR:PORT, then wait for
                                      the receiver to close

PORT is 5301 unless given. The sender's bytes and the receiver's line are
compared by the calling test (`stat -c %s` and sha256sum of FILE).
"""
import hashlib
import socket
import sys


def tcp_sum(addr, port):
    srv = socket.create_server((addr, port))
    conn, _ = srv.accept()
    digest, total = hashlib.sha256(), 0
    while True:
        chunk = conn.recv(1 << 16)
        if not chunk:
            break
        digest.update(chunk)
        total += len(chunk)
    print(total, digest.hexdigest())


def tcp_send(addr, path, port):
    conn = socket.create_connection((addr, port), timeout=60)
    with open(path, "rb") as f:
        conn.sendfile(f)
    conn.shutdown(socket.SHUT_WR)
    conn.recv(1)


def main(argv):
    if len(argv) >= 3 and argv[1] == "sum":
        tcp_sum(argv[2], int(argv[3]) if len(argv) > 3 else 5301)
    elif len(argv) >= 4 and argv[1] == "send":
        tcp_send(argv[2], argv[3], int(argv[4]) if len(argv) > 4 else 5301)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
