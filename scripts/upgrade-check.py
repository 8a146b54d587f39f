#!/usr/bin/env python3
"""Upgrades that drop nothing, measured against real processes on loopback (docs/deploy.md,
"Upgrades"). scripts/upgrade-check.sh runs it; scripts/test.sh runs that.

    upgrade-check.py BIN_DIR            both checks below, with BIN_DIR's PartnerGateway
    upgrade-check.py upstream PORT      the test upstream alone (the checks start it)

1. A rolling upgrade on one host (`server.reuse_port: true`), five times in a row: while 64
   connections send bearer GETs and keyed POSTs (an API key and an Idempotency-Key) without
   pause, 50 WebSockets exchange messages and 20 event streams (SSE) receive events, a second
   gateway starts on the same ports; once it says READY=1 (sd_notify, as systemd hears it)
   the first one is sent SIGTERM. It must exit 0 within server.drain_timeout, and the clients
   must see no failed request and no reset; every WebSocket is sent 1001 and reconnects (to
   the new gateway, the only one left), every event stream ends cleanly (a whole chunked
   response ending after a whole event) and starts again; at the end the upstream must have
   seen every keyed POST exactly once.
2. Two gateways behind HAProxy (health-checking /readyz), one killed with SIGKILL under the
   same load: the failed requests are counted and printed, and no keyed POST reached the
   upstream twice.

The clients are HTTP/1.1 clients as browsers and HTTP libraries are: they reuse keep-alive
connections, open a new one after a response that says `Connection: close`, and send a
request again on a new connection when a reused one closed before any byte of its answer
(RFC 9112, section 9.3.1; only idempotent and keyed requests, as Go's and OkHttp's do).
Those are counted and printed as "resent"; a reset, a response cut short, an unexpected
status or a request without an answer is a failure.
"""
import asyncio
import base64
import hashlib
import json
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from free_ports import free_ports  # noqa: E402

REPETITIONS = 5
LOAD_CONNECTIONS = 64
WEBSOCKETS = 50
EVENT_STREAMS = 20
DRAIN_TIMEOUT = 20  # seconds: server.drain_timeout of the gateways started here
REQUEST_TIMEOUT = 30

WS_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


# ---------------------------------------------------------------- HTTP/1.1 on asyncio streams

async def read_head(reader):
    """The status or request line and the fields (lowercase names); None at EOF before any byte."""
    data = await reader.readuntil(b"\r\n\r\n")
    lines = data.decode("latin-1").split("\r\n")
    fields = {}
    for line in lines[1:]:
        if line:
            name, _, value = line.partition(":")
            fields.setdefault(name.strip().lower(), []).append(value.strip())
    return lines[0], fields


async def read_chunked(reader, on_chunk=None):
    body = b""
    while True:
        size_line = await reader.readuntil(b"\r\n")
        size = int(size_line.split(b";")[0].strip(), 16)
        if size == 0:
            await reader.readuntil(b"\r\n")
            return body
        chunk = await reader.readexactly(size)
        await reader.readexactly(2)
        if on_chunk:
            on_chunk(chunk)
        else:
            body += chunk


async def read_body(reader, fields):
    if "chunked" in ",".join(fields.get("transfer-encoding", [])).lower():
        return await read_chunked(reader)
    length = int(fields.get("content-length", ["0"])[0])
    return await reader.readexactly(length)


def closes(fields):
    return "close" in ",".join(fields.get("connection", [])).lower()


# ---------------------------------------------------------------- the test upstream

class Upstream:
    """An HTTP/1.1 upstream: GET /user/... answers at once, POST /orders counts each
    Idempotency-Key it receives and answers 20 ms later, /ws echoes WebSocket frames, /events streams an event every
    50 ms, GET /_counts (called directly, not through the gateway) returns the counts."""

    def __init__(self):
        self.counts = {}

    async def serve(self, reader, writer):
        try:
            while True:
                try:
                    line, fields = await read_head(reader)
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                method, target, _ = line.split(" ", 2)
                body = await read_body(reader, fields)
                if "websocket" in ",".join(fields.get("upgrade", [])).lower():
                    await self.websocket(reader, writer, fields)
                    return
                if target.startswith("/events"):
                    await self.events(writer)
                    return
                if method == "POST" and target.startswith("/orders"):
                    key = fields.get("idempotency-key", [""])[0]
                    self.counts[key] = self.counts.get(key, 0) + 1
                    # A little work, so that some are in flight whenever a gateway stops.
                    await asyncio.sleep(0.02)
                    answer, status = json.dumps({"order": key, "bytes": len(body)}), "201 Created"
                elif target.startswith("/_counts"):
                    answer, status = json.dumps(self.counts), "200 OK"
                else:
                    answer, status = '{"ok":true}', "200 OK"
                payload = answer.encode()
                writer.write(b"HTTP/1.1 %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % (status.encode(), len(payload)) + payload)
                await writer.drain()
        except ConnectionError:
            pass
        finally:
            writer.close()

    async def events(self, writer):
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n\r\n")
        number = 0
        try:
            while True:
                # An event in two writes: a stream cut between them would end mid-event.
                first, second = b"id: %d\n" % number, b"data: tick %d\n\n" % number
                for part in (first, second):
                    writer.write(b"%x\r\n%s\r\n" % (len(part), part))
                    await writer.drain()
                    await asyncio.sleep(0.025)
                number += 1
        except ConnectionError:
            pass

    async def websocket(self, reader, writer, fields):
        key = fields["sec-websocket-key"][0]
        accept = base64.b64encode(hashlib.sha1((key + WS_GUID).encode()).digest()).decode()
        writer.write(("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                      "Sec-WebSocket-Accept: %s\r\n\r\n" % accept).encode())
        try:
            while True:
                opcode, payload = await read_frame(reader)
                if opcode == 0x8:
                    writer.write(frame(0x8, payload[:2], mask=False))
                    await writer.drain()
                    return
                writer.write(frame(opcode, payload, mask=False))
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass


def frame(opcode, payload, mask):
    head = bytes([0x80 | opcode])
    length = len(payload)
    if length < 126:
        head += bytes([(0x80 if mask else 0) | length])
    else:
        head += bytes([(0x80 if mask else 0) | 126]) + length.to_bytes(2, "big")
    if not mask:
        return head + payload
    key = os.urandom(4)
    return head + key + bytes(b ^ key[i % 4] for i, b in enumerate(payload))


async def read_frame(reader):
    first, second = await reader.readexactly(2)
    length = second & 0x7F
    if length == 126:
        length = int.from_bytes(await reader.readexactly(2), "big")
    elif length == 127:
        length = int.from_bytes(await reader.readexactly(8), "big")
    key = await reader.readexactly(4) if second & 0x80 else None
    payload = await reader.readexactly(length)
    if key:
        payload = bytes(b ^ key[i % 4] for i, b in enumerate(payload))
    return first & 0x0F, payload


async def run_upstream(port):
    upstream = Upstream()
    server = await asyncio.start_server(upstream.serve, "127.0.0.1", port, backlog=1024)
    async with server:
        await server.serve_forever()


# ---------------------------------------------------------------- the clients

class Tally:
    def __init__(self):
        self.done = 0
        self.failed = []  # what went wrong, one line each
        self.resets = 0
        self.resent = 0
        self.keys_sent = []
        self.keys_failed = []
        self.ws_closes = {}  # close code → how many
        self.ws_reconnects = 0
        self.sse_clean_ends = 0
        self.sse_empty_ends = 0

    def fail(self, what):
        self.failed.append(what)


class Load:
    """64 keep-alive connections sending bearer GETs and keyed POSTs without pause, 50
    WebSockets and 20 event streams, against host:port, until stopped."""

    def __init__(self, port, access_token, api_key, websockets=True, resend=True):
        self.port = port
        self.access_token = access_token
        self.api_key = api_key
        self.websockets = websockets
        self.resend = resend
        self.tally = Tally()
        self.stopping = False
        self.tasks = []
        # Per WebSocket and event stream: when it last heard from the gateway, and whether it
        # is connected now.
        self.ws_heard = [0.0] * WEBSOCKETS
        self.sse_heard = [0.0] * EVENT_STREAMS

    def start(self):
        self.tasks = [asyncio.create_task(self.worker(index)) for index in range(LOAD_CONNECTIONS)]
        if self.websockets:
            self.tasks += [asyncio.create_task(self.websocket(index)) for index in range(WEBSOCKETS)]
            self.tasks += [asyncio.create_task(self.event_stream(index)) for index in range(EVENT_STREAMS)]

    async def stop(self):
        self.stopping = True
        await asyncio.gather(*self.tasks)

    async def connect(self):
        return await asyncio.wait_for(asyncio.open_connection("127.0.0.1", self.port), REQUEST_TIMEOUT)

    async def worker(self, index):
        connection, used, number = None, 0, 0
        while not self.stopping:
            number += 1
            if number % 2:
                key = "k-%d-%d-%s" % (index, number, os.urandom(6).hex())
                body = json.dumps({"ride": number, "worker": index}).encode()
                request = (b"POST /orders HTTP/1.1\r\nHost: gateway\r\nX-API-Key: %s\r\nIdempotency-Key: %s\r\n"
                           b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" % (self.api_key.encode(), key.encode(), len(body))) + body
                self.tally.keys_sent.append(key)
                want = "201"
            else:
                key = None
                request = b"GET /user/profile HTTP/1.1\r\nHost: gateway\r\nAuthorization: Bearer %s\r\n\r\n" % self.access_token.encode()
                want = "200"
            for attempt in (0, 1):
                if connection is None:
                    try:
                        connection, used = await self.connect(), 0
                    except (OSError, asyncio.TimeoutError) as error:
                        self.tally.fail("connect: %r" % error)
                        connection = None
                        break
                reader, writer = connection
                got_any = False
                try:
                    writer.write(request)
                    await writer.drain()
                    line, fields = await asyncio.wait_for(read_head(reader), REQUEST_TIMEOUT)
                    got_any = True
                    await asyncio.wait_for(read_body(reader, fields), REQUEST_TIMEOUT)
                    used += 1
                    status = line.split(" ")[1]
                    if status == want:
                        self.tally.done += 1
                    else:
                        self.tally.fail("%s answered %s" % ("POST" if key else "GET", status))
                        if key:
                            self.tally.keys_failed.append(key)
                    if closes(fields):
                        writer.close()
                        connection = None
                    break
                except ConnectionResetError:
                    self.tally.resets += 1
                    self.tally.fail("reset")
                    if key:
                        self.tally.keys_failed.append(key)
                    connection = None
                    break
                except (asyncio.IncompleteReadError, BrokenPipeError, ConnectionError) as error:
                    writer.close()
                    connection = None
                    if not got_any and used > 0 and attempt == 0 and self.resend:
                        # A reused connection closed before any byte of the answer: send again.
                        self.tally.resent += 1
                        continue
                    self.tally.fail("connection closed %s: %r" % ("mid-answer" if got_any else "before an answer", error))
                    if key:
                        self.tally.keys_failed.append(key)
                    break
                except asyncio.TimeoutError:
                    writer.close()
                    connection = None
                    self.tally.fail("no answer within %d s" % REQUEST_TIMEOUT)
                    if key:
                        self.tally.keys_failed.append(key)
                    break
        if connection:
            connection[1].close()

    async def websocket(self, index):
        while not self.stopping:
            try:
                reader, writer = await self.connect()
                key = base64.b64encode(os.urandom(16)).decode()
                writer.write(("GET /ws HTTP/1.1\r\nHost: gateway\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                              "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\nAuthorization: Bearer %s\r\n\r\n"
                              % (key, self.access_token)).encode())
                await writer.drain()
                line, fields = await asyncio.wait_for(read_head(reader), REQUEST_TIMEOUT)
            except ConnectionResetError:
                self.tally.resets += 1
                self.tally.fail("websocket reset in its handshake")
                continue
            except (OSError, asyncio.IncompleteReadError, asyncio.TimeoutError) as error:
                self.tally.fail("websocket handshake: %r" % error)
                await asyncio.sleep(0.1)
                continue
            if line.split(" ")[1] != "101":
                self.tally.fail("websocket handshake answered %s" % line)
                writer.close()
                await asyncio.sleep(0.1)
                continue
            number = 0
            try:
                while not self.stopping:
                    number += 1
                    message = ("ws %d message %d" % (index, number)).encode()
                    writer.write(frame(0x1, message, mask=True))
                    await writer.drain()
                    opcode, payload = await asyncio.wait_for(read_frame(reader), REQUEST_TIMEOUT)
                    if opcode == 0x8:
                        code = int.from_bytes(payload[:2], "big") if len(payload) >= 2 else None
                        self.tally.ws_closes[code] = self.tally.ws_closes.get(code, 0) + 1
                        writer.write(frame(0x8, payload[:2], mask=True))
                        await writer.drain()
                        # The server closes the TCP connection first (RFC 6455, section 7.1.1).
                        rest = await asyncio.wait_for(reader.read(), REQUEST_TIMEOUT)
                        if rest:
                            self.tally.fail("websocket: bytes after the close frame")
                        self.tally.ws_reconnects += 1
                        break
                    if payload != message:
                        self.tally.fail("websocket: echo %r for %r" % (payload[:40], message))
                    self.ws_heard[index] = time.monotonic()
                    await asyncio.sleep(0.1)
                else:
                    writer.write(frame(0x8, (1000).to_bytes(2, "big"), mask=True))
                    await writer.drain()
            except ConnectionResetError:
                self.tally.resets += 1
                self.tally.fail("websocket reset")
            except (asyncio.IncompleteReadError, BrokenPipeError, ConnectionError) as error:
                self.tally.fail("websocket closed without a close frame: %r" % error)
            except asyncio.TimeoutError:
                self.tally.fail("websocket: no echo within %d s" % REQUEST_TIMEOUT)
            finally:
                self.ws_heard[index] = 0.0
                writer.close()

    async def event_stream(self, index):
        connection, reused = None, False
        while not self.stopping:
            try:
                if connection is None:
                    connection, reused = await self.connect(), False
                reader, writer = connection
                writer.write(b"GET /events HTTP/1.1\r\nHost: gateway\r\nAccept: text/event-stream\r\nAuthorization: Bearer %s\r\n\r\n"
                             % self.access_token.encode())
                await writer.drain()
                line, fields = await asyncio.wait_for(read_head(reader), REQUEST_TIMEOUT)
            except ConnectionResetError:
                self.tally.resets += 1
                self.tally.fail("event stream reset before its answer")
                connection = None
                continue
            except (OSError, asyncio.IncompleteReadError, asyncio.TimeoutError) as error:
                if connection is not None:
                    connection[1].close()
                if reused and isinstance(error, (asyncio.IncompleteReadError, BrokenPipeError)):
                    # A keep-alive connection the gateway closed while idle: again on a new one.
                    self.tally.resent += 1
                else:
                    self.tally.fail("event stream request: %r" % error)
                connection = None
                continue
            if line.split(" ")[1] != "200":
                self.tally.fail("event stream answered %s" % line)
                connection[1].close()
                connection = None
                await asyncio.sleep(0.1)
                continue
            pending = bytearray()
            events = 0

            def on_chunk(chunk):
                nonlocal events
                pending.extend(chunk)
                while b"\n\n" in pending:
                    del pending[:pending.index(b"\n\n") + 2]
                    events += 1
                    self.sse_heard[index] = time.monotonic()

            try:
                if not await self.read_stream(reader, on_chunk):
                    connection[1].close()
                    connection = None
                    break
                reused = True
                # The gateway ended the stream: cleanly only after a whole event.
                if pending:
                    self.tally.fail("event stream ended inside an event: %r" % bytes(pending[:40]))
                elif events:
                    self.tally.sse_clean_ends += 1
                else:
                    self.tally.sse_empty_ends += 1
                if closes(fields):
                    connection[1].close()
                    connection = None
            except ConnectionResetError:
                self.tally.resets += 1
                self.tally.fail("event stream reset")
                connection = None
            except (asyncio.IncompleteReadError, ConnectionError) as error:
                self.tally.fail("event stream cut: %r" % error)
                connection = None
            finally:
                self.sse_heard[index] = 0.0
        if connection:
            connection[1].close()

    async def read_stream(self, reader, on_chunk):
        """True once the gateway ended the stream, false when the load stops first."""
        reading = asyncio.create_task(read_chunked(reader, on_chunk))
        while not reading.done():
            if self.stopping:
                reading.cancel()
                return False
            await asyncio.wait({reading}, timeout=0.2)
        reading.result()
        return True


# ---------------------------------------------------------------- processes

class Notifications:
    """A NOTIFY_SOCKET of our own per gateway: what systemd would hear from it."""

    def __init__(self, path):
        self.path = path
        self.socket = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.socket.bind(path)
        self.socket.setblocking(False)
        self.received = []

    async def wait_for(self, message, timeout, process):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                while True:
                    self.received.append(self.socket.recv(4096).decode())
            except BlockingIOError:
                pass
            if any(message in line for line in self.received):
                return True
            if process.returncode is not None:
                return False
            await asyncio.sleep(0.02)
        return False


class Stack:
    def __init__(self, bin_dir, work):
        self.bin_dir = bin_dir
        self.work = work
        self.processes = []
        (self.port, self.admin_port, self.redis_port, self.upstream_port,
         self.lb_port, self.port_b, self.admin_port_b) = free_ports(7)
        self.environment = dict(os.environ)
        for name in list(self.environment):
            if name.startswith("GATEWAY_") or name == "NOTIFY_SOCKET":
                del self.environment[name]
        self.environment.update({
            "GATEWAY_JWT_SECRET": os.urandom(32).hex(),
            "GATEWAY_PHONE_KEY": os.urandom(32).hex(),
            "GATEWAY_ADMIN_TOKEN": os.urandom(24).hex(),
        })
        self.config = os.path.join(work, "gateway.yaml")
        with open(self.config, "w") as file:
            file.write(f"""listen: 127.0.0.1:{self.port}
admin:
  listen: 127.0.0.1:{self.admin_port}
redis:
  url: redis://127.0.0.1:{self.redis_port}/0
  timeout: 5s
tokens:
  issuer: upgrade-check
otp:
  mode: uat
server:
  reuse_port: true
  drain_timeout: {DRAIN_TIMEOUT}s
  max_websockets_per_user: 200
log:
  access_log: false
routes:
  - {{name: profile, path_prefix: /user, upstream: "http://127.0.0.1:{self.upstream_port}", auth: bearer}}
  - {{name: orders, path_prefix: /orders, upstream: "http://127.0.0.1:{self.upstream_port}", auth: api_key, idempotency: {{}}}}
  - {{name: socket, path_prefix: /ws, upstream: "http://127.0.0.1:{self.upstream_port}", auth: bearer, websocket: true}}
  - {{name: events, path_prefix: /events, upstream: "http://127.0.0.1:{self.upstream_port}", auth: bearer}}
""")

    def spawn(self, name, arguments, **extra):
        log = open(os.path.join(self.work, name + ".log"), "ab")
        process = subprocess.Popen(arguments, stdout=log, stderr=subprocess.STDOUT, **extra)
        process.name = name
        self.processes.append(process)
        return process

    def start_redis(self):
        self.spawn("redis", ["redis-server", "--port", str(self.redis_port), "--bind", "127.0.0.1", "--save", "",
                             "--appendonly", "no", "--dir", self.work])
        wait_until(lambda: accepting(self.redis_port), 10, "redis-server")

    def start_upstream(self):
        self.spawn("upstream", [sys.executable, os.path.abspath(__file__), "upstream", str(self.upstream_port)])
        wait_until(lambda: accepting(self.upstream_port), 10, "the upstream")

    async def start_gateway(self, name, listen=None, admin=None):
        """A gateway on the configuration's ports (or `listen`/`admin`); returns once it sent
        READY=1, with its notifications."""
        environment = dict(self.environment)
        notifications = Notifications(os.path.join(self.work, name + ".notify"))
        environment["NOTIFY_SOCKET"] = notifications.path
        if listen:
            environment["GATEWAY_LISTEN"] = "127.0.0.1:%d" % listen
            environment["GATEWAY_ADMIN_LISTEN"] = "127.0.0.1:%d" % admin
        log = open(os.path.join(self.work, name + ".log"), "ab")
        process = await asyncio.create_subprocess_exec(
            os.path.join(self.bin_dir, "PartnerGateway"), "--config", self.config,
            env=environment, stdout=log, stderr=subprocess.STDOUT)
        process.name = name
        self.processes.append(process)
        if not await notifications.wait_for("READY=1", 60, process):
            raise Failure("%s did not say READY=1 (exit %s); its log: %s" % (name, process.returncode, self.tail(name)))
        return process, notifications

    def admin(self, method, path, body=None):
        request = urllib.request.Request(
            "http://127.0.0.1:%d%s" % (self.admin_port, path), method=method,
            data=json.dumps(body).encode() if body is not None else None,
            headers={"Authorization": "Bearer " + self.environment["GATEWAY_ADMIN_TOKEN"], "Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.load(response)

    def credentials(self):
        partner = self.admin("POST", "/v1/partners", {"name": "UpgradeCheck", "rate": 1000000, "burst": 10000000})
        key = self.admin("POST", "/v1/partners/%s/keys" % partner["partner_id"], {"name": "load"})["key"]

        def public(path, body):
            request = urllib.request.Request("http://127.0.0.1:%d%s" % (self.port, path), data=json.dumps(body).encode(),
                                             headers={"Content-Type": "application/json"})
            with urllib.request.urlopen(request, timeout=30) as response:
                return json.load(response)

        public("/auth/otp/trigger", {"phone": "9876543210"})
        token = public("/auth/otp/verify", {"phone": "9876543210", "otp": "123456"})["access_token"]
        return token, key

    def upstream_counts(self):
        with urllib.request.urlopen("http://127.0.0.1:%d/_counts" % self.upstream_port, timeout=30) as response:
            return json.load(response)

    def tail(self, name, lines=30):
        try:
            with open(os.path.join(self.work, name + ".log"), errors="replace") as file:
                return "\n" + "".join(file.readlines()[-lines:])
        except OSError:
            return "(no log)"

    def stop_all(self):
        for process in self.processes:
            try:
                if process.returncode is None:
                    process.kill()
            except ProcessLookupError:
                pass


class Failure(Exception):
    pass


def accepting(port):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True
    except OSError:
        return False


def wait_until(condition, timeout, what):
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise Failure("%s did not start within %d s" % (what, timeout))
        time.sleep(0.05)


async def until(condition, timeout):
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.05)
    return True


# ---------------------------------------------------------------- 1. rolling upgrade on one host

async def rolling_upgrades(stack):
    old, _ = await stack.start_gateway("gateway-0")
    token, key = stack.credentials()
    load = Load(stack.port, token, key)
    load.start()
    problems = []
    if not await until(lambda: all(load.ws_heard) and all(load.sse_heard), 60):
        raise Failure("the WebSockets and event streams did not all start")
    print("rolling upgrade: %d connections of bearer GETs and keyed POSTs, %d WebSockets, %d event streams, reuse_port"
          % (LOAD_CONNECTIONS, WEBSOCKETS, EVENT_STREAMS))
    for repetition in range(1, REPETITIONS + 1):
        before = (load.tally.done, len(load.tally.failed), load.tally.resets, load.tally.resent,
                  dict(load.tally.ws_closes), load.tally.ws_reconnects, load.tally.sse_clean_ends)
        new, _ = await stack.start_gateway("gateway-%d" % repetition)
        await asyncio.sleep(1.0)
        stopped = time.monotonic()
        old.send_signal(signal.SIGTERM)
        try:
            code = await asyncio.wait_for(old.wait(), DRAIN_TIMEOUT + 10)
        except asyncio.TimeoutError:
            raise Failure("%s still ran %d s after SIGTERM" % (old.name, DRAIN_TIMEOUT + 10))
        exited = time.monotonic()
        drain = exited - stopped
        # Everything back, on the new gateway (the only one left): each socket and stream has
        # heard from it since the old one exited.
        back = await until(lambda: min(load.ws_heard) > exited and min(load.sse_heard) > exited, 30)
        await asyncio.sleep(0.5)
        tally = load.tally
        closes_1001 = tally.ws_closes.get(1001, 0) - before[4].get(1001, 0)
        other_closes = sum(tally.ws_closes.values()) - sum(before[4].values()) - closes_1001
        for what in tally.failed[before[1]:]:
            print("    failed: " + what)
        print("  upgrade %d: old gateway exited %d after %.2f s; %d requests answered, %d failed, %d resets, %d resent; "
              "%d WebSockets sent 1001 and reconnected, %d other closes; %d event streams ended cleanly; all back on the new gateway: %s"
              % (repetition, code, drain, tally.done - before[0], len(tally.failed) - before[1], tally.resets - before[2],
                 tally.resent - before[3], closes_1001, other_closes, tally.sse_clean_ends - before[6], "yes" if back else "NO"))
        if code != 0:
            problems.append("upgrade %d: the old gateway exited %d" % (repetition, code))
        if drain > DRAIN_TIMEOUT:
            problems.append("upgrade %d: the old gateway took %.2f s, more than drain_timeout" % (repetition, drain))
        if closes_1001 != WEBSOCKETS or other_closes:
            problems.append("upgrade %d: %d WebSockets were sent 1001 (%d others), not %d" % (repetition, closes_1001, other_closes, WEBSOCKETS))
        if tally.sse_clean_ends - before[6] < EVENT_STREAMS:
            problems.append("upgrade %d: %d event streams ended cleanly, not %d" % (repetition, tally.sse_clean_ends - before[6], EVENT_STREAMS))
        if not back:
            problems.append("upgrade %d: not every WebSocket and event stream came back" % repetition)
        if tally.done - before[0] == 0:
            problems.append("upgrade %d: no request was answered" % repetition)
        old = new
    await load.stop()
    tally = load.tally
    counts = stack.upstream_counts()
    sent = tally.keys_sent
    twice = [k for k in sent if counts.get(k, 0) > 1]
    never = [k for k in sent if counts.get(k, 0) == 0 and k not in tally.keys_failed]
    print("rolling upgrade, %d in a row: %d requests answered, %d failed, %d resets seen by the clients, %d resent on a new "
          "connection after a reused one closed before any answer; %d keyed POSTs, %d reached the upstream once, %d more than once"
          % (REPETITIONS, tally.done, len(tally.failed), tally.resets, tally.resent, len(sent),
             sum(1 for k in sent if counts.get(k, 0) == 1), len(twice)))
    if tally.failed:
        problems.append("%d failed requests, e.g. %s" % (len(tally.failed), "; ".join(sorted(set(tally.failed))[:5])))
    if tally.resets:
        problems.append("%d resets" % tally.resets)
    if twice:
        problems.append("%d keyed POSTs reached the upstream more than once, e.g. %s" % (len(twice), twice[:3]))
    if never:
        problems.append("%d answered keyed POSTs never reached the upstream, e.g. %s" % (len(never), never[:3]))
    await stop_gateway(old)
    return problems


async def stop_gateway(process):
    if process.returncode is None:
        process.send_signal(signal.SIGTERM)
        try:
            await asyncio.wait_for(process.wait(), DRAIN_TIMEOUT + 10)
        except asyncio.TimeoutError:
            process.kill()


# ---------------------------------------------------------------- 2. SIGKILL behind a load balancer

async def killed_behind_haproxy(stack):
    first, _ = await stack.start_gateway("lb-gateway-a")
    second, _ = await stack.start_gateway("lb-gateway-b", listen=stack.port_b, admin=stack.admin_port_b)
    token, key = stack.credentials()
    config = os.path.join(stack.work, "haproxy.cfg")
    with open(config, "w") as file:
        file.write(f"""global
    maxconn 4096
defaults
    mode http
    timeout connect 2s
    timeout client 30s
    timeout server 30s
    retries 3
    option redispatch
    # Idempotent requests go to the other gateway when one dies before answering; a POST
    # never does: it may have reached the upstream already.
    retry-on conn-failure empty-response response-timeout
frontend public
    bind 127.0.0.1:{stack.lb_port}
    default_backend gateways
backend gateways
    balance roundrobin
    http-request disable-l7-retry if METH_POST
    option httpchk GET /readyz
    http-check expect status 200
    timeout check 2s
    default-server inter 500ms fall 2 rise 2
    server a 127.0.0.1:{stack.port} check
    server b 127.0.0.1:{stack.port_b} check
""")
    stack.spawn("haproxy", ["haproxy", "-db", "-f", config])
    wait_until(lambda: accepting(stack.lb_port), 10, "haproxy")
    load = Load(stack.lb_port, token, key, websockets=False, resend=False)
    load.start()
    await asyncio.sleep(2.0)
    answered_before = load.tally.done
    first.kill()
    await first.wait()
    await asyncio.sleep(4.0)
    await load.stop()
    tally = load.tally
    counts = stack.upstream_counts()
    twice = [k for k in tally.keys_sent if counts.get(k, 0) > 1]
    failed_twice = [k for k in tally.keys_failed if counts.get(k, 0) > 1]
    failed_reached = sum(1 for k in tally.keys_failed if counts.get(k, 0) == 1)
    print("SIGKILL of one of two gateways behind HAProxy (health checks on /readyz every 500 ms): %d requests answered "
          "(%d before the kill), %d failed (%s), %d resets; of the %d failed keyed POSTs %d had reached the upstream once, "
          "%d more than once; keyed POSTs seen twice by the upstream: %d"
          % (tally.done, answered_before, len(tally.failed), ", ".join("%s: %d" % (what, tally.failed.count(what)) for what in sorted(set(tally.failed))) or "none",
             tally.resets, len(tally.keys_failed), failed_reached, len(failed_twice), len(twice)))
    await stop_gateway(second)
    problems = []
    if twice:
        problems.append("%d keyed POSTs reached the upstream twice behind HAProxy" % len(twice))
    if len(tally.failed) > LOAD_CONNECTIONS:
        # Only the requests under way on the killed gateway can fail: one per connection at most.
        problems.append("%d requests failed behind HAProxy, more than were under way" % len(tally.failed))
    if tally.done - answered_before == 0:
        problems.append("no request was answered after the kill")
    return problems


async def main(bin_dir):
    work = tempfile.mkdtemp(prefix="pg-upgrade-check.")
    stack = Stack(bin_dir, work)
    problems = []
    try:
        stack.start_redis()
        stack.start_upstream()
        problems += await rolling_upgrades(stack)
        problems += await killed_behind_haproxy(stack)
    except Failure as failure:
        problems.append(str(failure))
    finally:
        stack.stop_all()
    if problems:
        for problem in problems:
            print("FAILED: " + problem, file=sys.stderr)
        for name in ("gateway-0", "gateway-1", "lb-gateway-a", "haproxy", "upstream"):
            print("--- %s.log, last lines:%s" % (name, stack.tail(name, 15)), file=sys.stderr)
        print("logs kept in " + work, file=sys.stderr)
        return 1
    subprocess.run(["rm", "-rf", work])
    print("upgrade checks passed")
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "upstream":
        asyncio.run(run_upstream(int(sys.argv[2])))
    elif len(sys.argv) == 2:
        sys.exit(asyncio.run(main(sys.argv[1])))
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
