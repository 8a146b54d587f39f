#!/usr/bin/env python3
"""Prints one of docs/edges.md's edge configurations (the block after <!-- nginx-edge --> or
<!-- haproxy-edge -->) with its addresses replaced: what the edge tests and
benchmarks/forward-auth.sh run, so the document is the configuration that is run and cannot
drift from it.

    scripts/lib/edge-config.py nginx --listen 127.0.0.1:8080 --authz 127.0.0.1:9191 --app 127.0.0.1:9001 [--keepalive 1024]
    scripts/lib/edge-config.py haproxy --listen 127.0.0.1:8080 --authz 127.0.0.1:9191 --app 127.0.0.1:9001 [--lua DIR]

nginx's --keepalive sets the idle connections nginx keeps to each upstream (the block's
`keepalive`), for a benchmark with more concurrent clients than the documented value.
HAProxy's --lua names the folder holding auth-request.lua and haproxy-lua-http/http.lua in place
of /usr/share/haproxy/ (default: scripts/lib/haproxy, the copies the tests use).
"""
import argparse
import pathlib
import re
import sys

REPOSITORY = pathlib.Path(__file__).resolve().parents[2]
DOCUMENT = REPOSITORY / "docs" / "edges.md"
# Per edge: its code block's language, and the lines that name addresses, each replaced once.
EDGES = {
    "nginx": ("nginx", {
        "listen": ("    listen 80;", "    listen {};"),
        "authz": ("    server gateway-authz.internal:9191;", "    server {};"),
        "app": ("    server app.internal:8080;", "    server {};"),
    }),
    "haproxy": ("haproxy", {
        "listen": ("    bind :80", "    bind {}"),
        "authz": ("    server authz gateway-authz.internal:9191", "    server authz {}"),
        "app": ("    server app app.internal:8080", "    server app {}"),
    }),
}


def block(text, edge, language):
    match = re.search(rf"<!-- {edge}-edge -->\n```{language}\n(.*?)\n```", text, re.S)
    if not match:
        sys.exit(f"{DOCUMENT}: no ```{language} block after <!-- {edge}-edge -->")
    return match.group(1)


def replace_once(config, line, replacement):
    if config.count(line) != 1:
        sys.exit(f"{DOCUMENT}: the block must hold {line.strip()!r} once")
    return config.replace(line, replacement)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("edge", choices=sorted(EDGES))
    for name in ("listen", "authz", "app"):
        parser.add_argument(f"--{name}", required=True, metavar="HOST:PORT")
    parser.add_argument("--keepalive", type=int, metavar="N", help="nginx only")
    parser.add_argument("--lua", metavar="DIR", default=str(REPOSITORY / "scripts" / "lib" / "haproxy"), help="HAProxy only")
    arguments = parser.parse_args()
    language, places = EDGES[arguments.edge]
    config = block(DOCUMENT.read_text(), arguments.edge, language)
    if arguments.edge == "nginx" and arguments.keepalive is not None:
        if config.count("    keepalive 32;") != 2:
            sys.exit(f"{DOCUMENT}: the nginx block's two upstreams must each say keepalive 32;")
        config = config.replace("    keepalive 32;", f"    keepalive {arguments.keepalive};")
    if arguments.edge == "haproxy":
        lua = arguments.lua.rstrip("/") + "/"
        config = replace_once(config, "    lua-prepend-path /usr/share/haproxy/?/http.lua", f"    lua-prepend-path {lua}?/http.lua")
        config = replace_once(config, "    lua-load /usr/share/haproxy/auth-request.lua", f"    lua-load {lua}auth-request.lua")
    for name, (line, replacement) in places.items():
        config = replace_once(config, line, replacement.format(getattr(arguments, name)))
    print(config)


if __name__ == "__main__":
    main()
