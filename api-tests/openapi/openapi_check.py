"""Checks real HTTP responses against docs/openapi.yaml.

Used by conformance.py (scripted scenarios) and bad_input.py (the error shape). Only the
standard library plus PyYAML and jsonschema.
"""
from __future__ import annotations

import http.client
import json
import re
import socket
import sys
import urllib.parse
from dataclasses import dataclass, field

import yaml
from jsonschema import Draft202012Validator, FormatChecker


@dataclass
class Reply:
    status: int
    headers: list[tuple[str, str]]
    body: bytes

    def header(self, name: str) -> str | None:
        name = name.lower()
        for key, value in self.headers:
            if key.lower() == name:
                return value
        return None

    def json(self):
        return json.loads(self.body)


def request(base: str, method: str, path: str, *, body=None, headers: dict | None = None, timeout: float = 10) -> Reply:
    """One request on a fresh connection. `body`: bytes, str, or a JSON-encodable value."""
    url = urllib.parse.urlsplit(base)
    connection = http.client.HTTPConnection(url.hostname, url.port, timeout=timeout)
    data = None
    sent_headers = dict(headers or {})
    if body is not None:
        if isinstance(body, bytes):
            data = body
        elif isinstance(body, str):
            data = body.encode()
        else:
            data = json.dumps(body).encode()
            sent_headers.setdefault("Content-Type", "application/json")
    try:
        connection.request(method, path, body=data, headers=sent_headers)
        response = connection.getresponse()
        payload = response.read()
        return Reply(response.status, response.getheaders(), payload)
    finally:
        connection.close()


class OpenAPIDocument:
    def __init__(self, path: str):
        with open(path, encoding="utf-8") as handle:
            self.spec = yaml.safe_load(handle)
        # The whole document is the root schema, so "#/components/..." references resolve.
        self._root = Draft202012Validator(self.spec, format_checker=FormatChecker())
        self._templates = []
        for template, item in self.spec["paths"].items():
            pattern = "^" + re.sub(r"\\\{[^}]+\\\}", "([^/]+)", re.escape(template)) + "$"
            self._templates.append((re.compile(pattern), template, item))
        self.error_schema = self.spec["components"]["schemas"]["Error"]

    def deref(self, obj):
        while isinstance(obj, dict) and "$ref" in obj and obj["$ref"].startswith("#/"):
            node = self.spec
            for part in obj["$ref"][2:].split("/"):
                node = node[part.replace("~1", "/").replace("~0", "~")]
            obj = node
        return obj

    def operation(self, method: str, path: str):
        path = urllib.parse.urlsplit(path).path
        for pattern, template, item in self._templates:
            if pattern.match(path) and method.lower() in item:
                return template, item[method.lower()]
        return None, None

    def schema_errors(self, schema, instance) -> list[str]:
        validator = self._root.evolve(schema=schema)
        return [f"{'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message[:300]}" for e in validator.iter_errors(instance)]

    def check(self, method: str, path: str, reply: Reply) -> list[str]:
        """Everything about `reply` that the document does not allow."""
        template, operation = self.operation(method, path)
        if operation is None:
            return [f"{method} {path}: no such operation in the document"]
        problems = []
        where = f"{method} {template} -> {reply.status}"
        responses = operation["responses"]
        documented = responses.get(str(reply.status)) or responses.get(f"{str(reply.status)[0]}XX") or responses.get("default")
        if documented is None:
            return [f"{where}: status not documented (documented: {', '.join(sorted(responses))}); body {reply.body[:200]!r}"]
        documented = self.deref(documented)
        for name, header in (documented.get("headers") or {}).items():
            header = self.deref(header)
            value = reply.header(name)
            if value is None:
                if header.get("required"):
                    problems.append(f"{where}: required header {name} missing")
                continue
            schema = header.get("schema", {})
            instance: object = value
            if self.deref(schema).get("type") == "integer":
                try:
                    instance = int(value)
                except ValueError:
                    problems.append(f"{where}: header {name}={value!r} is not an integer")
                    continue
            problems += [f"{where}: header {name}: {e}" for e in self.schema_errors(schema, instance)]
        content = documented.get("content")
        if not content:
            if reply.body:
                problems.append(f"{where}: documented without a body, got {reply.body[:100]!r}")
            return problems
        content_type = (reply.header("Content-Type") or "").split(";")[0].strip().lower()
        if content_type not in content:
            return problems + [f"{where}: Content-Type {content_type!r} not documented ({', '.join(content)})"]
        schema = content[content_type].get("schema")
        if schema is None:
            return problems
        if content_type == "application/json":
            try:
                instance = json.loads(reply.body)
            except ValueError:
                return problems + [f"{where}: body is not JSON: {reply.body[:200]!r}"]
        else:
            instance = reply.body.decode("utf-8", "replace")
        problems += [f"{where}: body {e}" for e in self.schema_errors(schema, instance)]
        return problems

    def error_shape_problems(self, reply: Reply) -> list[str]:
        """For any error answer: the gateway's error JSON shape and Content-Type."""
        problems = []
        content_type = (reply.header("Content-Type") or "").split(";")[0].strip().lower()
        if content_type != "application/json":
            problems.append(f"Content-Type {content_type!r}, not application/json")
        try:
            instance = json.loads(reply.body)
        except ValueError:
            return problems + [f"body is not JSON: {reply.body[:120]!r}"]
        return problems + self.schema_errors(self.error_schema, instance)


@dataclass
class Recorder:
    """Collects problems and which documented statuses were seen per operation."""
    document: OpenAPIDocument
    problems: list[str] = field(default_factory=list)
    seen: dict = field(default_factory=dict)
    count: int = 0

    def check(self, method: str, path: str, reply: Reply, expect=None, label: str = "") -> Reply:
        self.count += 1
        template, _ = self.document.operation(method, path)
        self.seen.setdefault((method.upper(), template), set()).add(reply.status)
        for problem in self.document.check(method, path, reply):
            self.problems.append(f"{label}: {problem}" if label else problem)
        if expect is not None:
            allowed = expect if isinstance(expect, (set, tuple, list)) else {expect}
            if reply.status not in allowed:
                self.problems.append(f"{label or method + ' ' + path}: expected {sorted(allowed)}, got {reply.status} {reply.body[:200]!r}")
        return reply

    def coverage(self) -> list[str]:
        lines = []
        for template, item in self.document.spec["paths"].items():
            for method, operation in item.items():
                if method not in ("get", "post", "put", "patch", "delete", "head", "options"):
                    continue
                documented = set(operation["responses"])
                seen = {str(s) for s in self.seen.get((method.upper(), template), set())}
                missing = sorted(documented - seen)
                lines.append(f"  {method.upper():5} {template:40} seen {','.join(sorted(seen)) or '-':24} not exercised {','.join(missing) or '-'}")
        return lines


def fail(message: str) -> None:
    print(message, file=sys.stderr)
    sys.exit(1)


def raw_exchange(host: str, port: int, data: bytes, timeout: float = 5) -> bytes:
    """Sends raw bytes and reads until the server closes or goes quiet."""
    with socket.create_connection((host, port), timeout=timeout) as sock:
        sock.sendall(data)
        chunks = []
        try:
            while True:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                chunks.append(chunk)
        except (socket.timeout, ConnectionResetError):
            pass
        return b"".join(chunks)
