#!/usr/bin/env python3
"""Runs one shell command while watching Redis with MONITOR and prints, as JSON, the
commands the gateway sent to Redis on its own behalf: one entry per round trip (commands
that Lua scripts ran inside Redis, and the invalidation subscriber's heartbeat PINGs, are
left out).

    capture_redis_commands.py REDIS_PORT 'curl ...'   ->   [["EVALSHA", "ab12..", "1", ...], ...]
"""
import json
import shlex
import subprocess
import sys
import time

port, command = sys.argv[1], sys.argv[2]
monitor = subprocess.Popen(["redis-cli", "-p", port, "monitor"], stdout=subprocess.PIPE, text=True)
assert monitor.stdout.readline().strip() == "OK"
subprocess.run(command, shell=True, check=True, stdout=subprocess.DEVNULL)
time.sleep(0.3)
monitor.terminate()
output = monitor.communicate()[0]

commands = []
for line in output.splitlines():
    # 1700000000.123456 [0 127.0.0.1:51234] "EVALSHA" "..." ...   ([0 lua] for script calls)
    head, _, rest = line.partition("] ")
    if not rest or head.endswith("lua"):
        continue
    words = shlex.split(rest)
    if words and words[0].upper() not in ("PING", "MONITOR"):
        commands.append(words)
print(json.dumps(commands))
