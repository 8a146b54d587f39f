#!/usr/bin/env python3
"""Runs one shell command while watching Redis and prints, as JSON, what the gateway sent to
Redis on its own behalf: its commands (MONITOR; commands that Lua scripts ran inside Redis,
and the invalidation subscriber's heartbeat PINGs, are left out) and its round trips.

    capture_redis_commands.py REDIS_PORT 'curl ...'
      ->   {"round_trips": 3, "commands": [["EVALSHA", "ab12..", "1", ...], ...]}

Round trips are the read events Redis processed meanwhile (`total_reads_processed`, counted
on a connection of this script's own): commands the gateway sends together, in one write,
are one read; a command that waits for an earlier reply is another.
"""
import json
import shlex
import socket
import subprocess
import sys
import time

port, command = sys.argv[1], sys.argv[2]


def reads_processed(connection):
    """Redis's count of read events, which this INFO's own read is part of."""
    connection.sendall(b"INFO stats\r\n")
    # A bulk string, "$<length>\r\n<text>\r\n": read to its end, however it arrives.
    reply = b""
    while b"\r\n" not in reply:
        reply += connection.recv(65536)
    header, _, text = reply.partition(b"\r\n")
    while len(text) < int(header[1:]) + 2:
        text += connection.recv(65536)
    for line in text.decode().splitlines():
        if line.startswith("total_reads_processed:"):
            return int(line.split(":")[1])
    raise SystemExit("Redis reports no total_reads_processed")


info = socket.create_connection(("127.0.0.1", int(port)))
monitor = subprocess.Popen(["redis-cli", "-p", port, "monitor"], stdout=subprocess.PIPE, text=True)
assert monitor.stdout.readline().strip() == "OK"
before = reads_processed(info)
subprocess.run(command, shell=True, check=True, stdout=subprocess.DEVNULL)
time.sleep(0.3)
# Minus the second INFO's own read.
reads = reads_processed(info) - before - 1
monitor.terminate()
output = monitor.communicate()[0]

commands = []
heartbeats = 0
for line in output.splitlines():
    # 1700000000.123456 [0 127.0.0.1:51234] "EVALSHA" "..." ...   ([0 lua] for script calls)
    head, _, rest = line.partition("] ")
    if not rest or head.endswith("lua"):
        continue
    words = shlex.split(rest)
    if not words or words[0].upper() in ("MONITOR", "INFO"):
        continue
    if words[0].upper() == "PING":
        heartbeats += 1
    else:
        commands.append(words)
print(json.dumps({"round_trips": reads - heartbeats, "commands": commands}))
