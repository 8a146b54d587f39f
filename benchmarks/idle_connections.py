"""Holds N idle keep-alive HTTP/1.1 connections to a server and reports what they cost it.

Usage: idle_connections.py HOST PORT PATH COUNT PID [PID...]

Opens COUNT connections, sends one request on each and reads its response, then leaves them
idle; prints the resident memory of the PIDs (summed) before and after, per connection; then
sends a second request on every connection and counts the 200s. Prints one JSON object.
"""
import asyncio
import json
import sys


def rss_kib(pids):
    total = 0
    for pid in pids:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
    return total


async def request(reader, writer, host, path):
    writer.write(f"GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
    await writer.drain()
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    length = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":", 1)[1])
    if length:
        await reader.readexactly(length)
    return status


async def main():
    host, port, path, count = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
    pids = [int(p) for p in sys.argv[5:]]
    before = rss_kib(pids)
    connections = []

    async def open_one():
        reader, writer = await asyncio.open_connection(host, port)
        status = await request(reader, writer, host, path)
        connections.append((reader, writer))
        return status

    first = []
    for start in range(0, count, 500):
        first += await asyncio.gather(*(open_one() for _ in range(min(500, count - start))))
    # Let the server settle (buffers released after the first responses).
    await asyncio.sleep(2)
    held = rss_kib(pids)
    # In batches, as the connections were opened: a reverse proxy needs an upstream connection
    # per request in flight, and thousands at once would measure its upstream limits instead.
    second = []
    for start in range(0, count, 500):
        batch = connections[start:start + 500]
        second += await asyncio.gather(*(request(r, w, host, path) for r, w in batch), return_exceptions=True)
    for _, writer in connections:
        writer.close()
    print(json.dumps({
        "connections": count,
        "first_ok": sum(1 for s in first if s == 200),
        "rss_before_kib": before,
        "rss_held_kib": held,
        "kib_per_connection": round((held - before) / count, 2),
        "second_ok": sum(1 for s in second if s == 200),
    }))


asyncio.run(main())
