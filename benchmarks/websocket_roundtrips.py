"""WebSocket round trips for benchmarks/websocket.sh, standard library only.

  websocket_roundtrips.py upstream PORT
      an asyncio echo upstream (handshake, then every frame echoed back unmasked)
  websocket_roundtrips.py client PORT PATH SECONDS CONNECTIONS [HEADER...]
      CONNECTIONS sockets each sending a 64-byte text message and waiting for its echo, for
      SECONDS; prints the round trips per second
"""
import asyncio, base64, hashlib, os, struct, sys, time


def accept_for(key):
    return base64.b64encode(hashlib.sha1(key.encode() + b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11").digest()).decode()


def frame(opcode, payload, mask):
    head = bytes([0x80 | opcode])
    bit = 0x80 if mask else 0
    if len(payload) < 126:
        head += bytes([bit | len(payload)])
    else:
        head += bytes([bit | 126]) + struct.pack("!H", len(payload))
    if not mask:
        return head + payload
    key = os.urandom(4)
    return head + key + bytes(b ^ key[i % 4] for i, b in enumerate(payload))


async def read_frame(reader):
    head = await reader.readexactly(2)
    length = head[1] & 0x7F
    if length == 126:
        length = struct.unpack("!H", await reader.readexactly(2))[0]
    key = await reader.readexactly(4) if head[1] & 0x80 else b""
    payload = await reader.readexactly(length)
    if key:
        payload = bytes(b ^ key[i % 4] for i, b in enumerate(payload))
    return head[0] & 0x0F, payload


async def serve(reader, writer):
    try:
        head = await reader.readuntil(b"\r\n\r\n")
        key = [l.split(b":", 1)[1].strip().decode() for l in head.split(b"\r\n") if l.lower().startswith(b"sec-websocket-key:")][0]
        writer.write(("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                      "Sec-WebSocket-Accept: %s\r\n\r\n" % accept_for(key)).encode())
        while True:
            opcode, payload = await read_frame(reader)
            writer.write(frame(opcode, payload, False))
            if opcode == 8:
                break
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    writer.close()


async def upstream(port):
    server = await asyncio.start_server(serve, "127.0.0.1", port, backlog=4096)
    async with server:
        await server.serve_forever()


async def client(port, path, seconds, connections, headers):
    async def one(deadline):
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        lines = ["GET %s HTTP/1.1" % path, "Host: bench", "Upgrade: websocket", "Connection: Upgrade",
                 "Sec-WebSocket-Key: " + base64.b64encode(os.urandom(16)).decode(), "Sec-WebSocket-Version: 13"] + headers
        writer.write(("\r\n".join(lines) + "\r\n\r\n").encode())
        head = await reader.readuntil(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 101"), head
        message, count = b"x" * 64, 0
        while time.monotonic() < deadline:
            writer.write(frame(1, message, True))
            await read_frame(reader)
            count += 1
        writer.close()
        return count
    deadline = time.monotonic() + seconds
    counts = await asyncio.gather(*[one(deadline) for _ in range(connections)])
    print("%.0f" % (sum(counts) / seconds))


if __name__ == "__main__":
    if sys.argv[1] == "upstream":
        asyncio.run(upstream(int(sys.argv[2])))
    else:
        asyncio.run(client(int(sys.argv[2]), sys.argv[3], float(sys.argv[4]), int(sys.argv[5]), sys.argv[6:]))
