#!/usr/bin/env python3
"""Prints docs/edges.md's nginx configuration (the block after <!-- nginx-edge -->) with its
three addresses replaced: what the edge tests and benchmarks/forward-auth.sh run, so the
document is the configuration that is run and cannot drift from it.

    scripts/lib/nginx-edge.py --listen 127.0.0.1:8080 --authz 127.0.0.1:9191 --app 127.0.0.1:9001 [--keepalive 1024]

--keepalive sets the idle connections nginx keeps to each upstream (the block's `keepalive`),
for a benchmark with more concurrent clients than the documented value.
"""
import argparse
import pathlib
import re
import sys

DOCUMENT = pathlib.Path(__file__).resolve().parents[2] / "docs" / "edges.md"
# The lines of the block that name addresses, each replaced once.
PLACES = {
    "listen": "    listen 80;",
    "authz": "    server gateway-authz.internal:9191;",
    "app": "    server app.internal:8080;",
}


def block(text):
    match = re.search(r"<!-- nginx-edge -->\n```nginx\n(.*?)\n```", text, re.S)
    if not match:
        sys.exit(f"{DOCUMENT}: no ```nginx block after <!-- nginx-edge -->")
    return match.group(1)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for name in PLACES:
        parser.add_argument(f"--{name}", required=True, metavar="HOST:PORT")
    parser.add_argument("--keepalive", type=int, metavar="N")
    arguments = parser.parse_args()
    config = block(DOCUMENT.read_text())
    if arguments.keepalive is not None:
        if config.count("    keepalive 32;") != 2:
            sys.exit(f"{DOCUMENT}: the nginx block's two upstreams must each say keepalive 32;")
        config = config.replace("    keepalive 32;", f"    keepalive {arguments.keepalive};")
    for name, line in PLACES.items():
        if config.count(line) != 1:
            sys.exit(f"{DOCUMENT}: the nginx block must hold {line.strip()!r} once")
        address = getattr(arguments, name)
        replacement = f"    listen {address};" if name == "listen" else f"    server {address};"
        config = config.replace(line, replacement)
    print(config)


if __name__ == "__main__":
    main()
