#!/usr/bin/env python3
"""Free loopback ports for the checks' own servers: `free_ports.py N` prints N of them, or
import free_ports.

They come from 10000-14999 and are held together while they are picked, so no two are the
same. That range is below the kernel's ephemeral range (32768-60999), where a port picked by
a bind to port 0 can become some outgoing connection's source port before its server binds
it (the server then fails with EADDRINUSE), and below the Swift tests' ports (15000-32767).

A port handed out is leased for half an hour (a file in /tmp/pg-port-leases, written under a
lock): the checks scripts/test.sh runs side by side each pick ports and bind them seconds or
minutes later, and a port free at one check's pick could be another's that was not bound yet."""
import fcntl
import os
import pathlib
import random
import socket
import sys
import time

LEASES = "/tmp/pg-port-leases"
LEASE_SECONDS = 1800


def leased(port, now):
    try:
        return now - os.stat(os.path.join(LEASES, str(port))).st_mtime < LEASE_SECONDS
    except FileNotFoundError:
        return False


def free_ports(count):
    os.makedirs(LEASES, exist_ok=True)
    with open(os.path.join(LEASES, ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        now = time.time()
        held, port = [], random.randrange(10000, 15000)
        for _ in range(5000):
            if len(held) == count:
                break
            port = port + 1 if port < 14999 else 10000
            if leased(port, now):
                continue
            s = socket.socket()
            try:
                s.bind(("127.0.0.1", port))
                held.append(s)
            except OSError:
                s.close()
        if len(held) < count:
            raise SystemExit(f"free_ports: only {len(held)} of {count} ports free in 10000-14999")
        ports = [s.getsockname()[1] for s in held]
        for port in ports:
            pathlib.Path(LEASES, str(port)).touch()
        for s in held:
            s.close()
        return ports


if __name__ == "__main__":
    print(*free_ports(int(sys.argv[1])))
