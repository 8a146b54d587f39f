#!/usr/bin/env python3
"""Turns the README's walk-through into one bash script, for scripts/readme-walkthrough.sh.

    scripts/readme-walkthrough.py README.md > walkthrough.sh

Takes, in order, every fenced block preceded by a marker line:

    <!-- walkthrough -->                   a shell block: its commands run as written
    <!-- walkthrough: file NAME -->        a block saved as NAME (the README says to save it)
    <!-- walkthrough: ctrl-c -->           no block: Ctrl-C in the terminal of scripts/run.sh

In shell blocks, `# => TEXT` after a command, or on comment lines right below it, is what
the command prints: its output (stdout and stderr) must hold each piece of TEXT between
`...`s, in order; `exit N: TEXT` says the command exits with N (otherwise it must exit 0).

The README shows the development stack's addresses (localhost:8080, :9090, :9001, :6390) and
data/; the script gets the stack it runs against from PG_PORT, PG_ADMIN_PORT, PG_ECHO_PORT,
DEV_REDIS_PORT, PG_DATA_DIR and WALKTHROUGH_DIR (where saved files go), substituted into
commands and expected output alike.
"""
import os
import re
import shlex
import subprocess
import sys

MARKER = re.compile(r"^<!--\s*walkthrough(?::\s*(.*?))?\s*-->\s*$")
EXPECT = re.compile(r"^(.*?)\s+#\s*=>\s?(.*)$")
CONTINUED_EXPECT = re.compile(r"^\s*#\s*=>\s?(.*)$")
EXIT_STATUS = re.compile(r"^exit (\d+):\s*(.*)$")

PRELUDE = r'''
trap 'echo "README.md:$__wt_line: this step failed (exit status $?)" >&2' ERR

# Runs the command on stdin, prints what it printed, and checks its exit status and output.
__wt_run() {
  local line=$1 want=$2 cmd out rc=0 rest piece
  shift 2
  cmd=$(cat)
  out=$(eval "$cmd" 2>&1) || rc=$?
  printf '%s\n' "$out"
  if [ "$rc" != "$want" ]; then
    echo "README.md:$line: exit status $rc; the README shows $want" >&2
    exit 1
  fi
  rest=$out
  for piece in "$@"; do
    case "$rest" in
      *"$piece"*) rest=${rest#*"$piece"} ;;
      *) echo "README.md:$line: the output lacks: $piece" >&2; exit 1 ;;
    esac
  done
}

# Ctrl-C in scripts/run.sh's terminal: SIGINT to its process group. run.sh removes the
# gateway's pid file as it exits, after the gateway ended and it stopped the echo upstream.
__wt_ctrl_c() {
  local pid_file="$PG_DATA_DIR/gateway.pid" gateway waited=0
  gateway=$(cat "$pid_file")
  kill -INT -- "-$WALKTHROUGH_RUN_PID"
  while [ -e "$pid_file" ]; do
    if [ "$waited" -ge 600 ]; then echo "scripts/run.sh still runs 60 s after Ctrl-C" >&2; exit 1; fi
    sleep 0.1; waited=$((waited + 1))
  done
  if kill -0 "$gateway" 2>/dev/null; then echo "the gateway (pid $gateway) still runs after Ctrl-C" >&2; exit 1; fi
  echo "scripts/run.sh stopped the gateway and the echo upstream"
}
'''


def substitutions():
    env = os.environ
    data = env["PG_DATA_DIR"]
    work = env["WALKTHROUGH_DIR"]
    return [
        (re.compile(r"localhost:8080\b"), f"localhost:{env['PG_PORT']}"),
        (re.compile(r"localhost:9090\b"), f"localhost:{env['PG_ADMIN_PORT']}"),
        (re.compile(r"127\.0\.0\.1:9001\b"), f"127.0.0.1:{env['PG_ECHO_PORT']}"),
        (re.compile(r"127\.0\.0\.1:6390\b"), f"127.0.0.1:{env['DEV_REDIS_PORT']}"),
        (re.compile(r"(?<![\w/.$-])data/"), data.rstrip("/") + "/"),
    ], work


def substitute(text, rules):
    for pattern, replacement in rules:
        text = pattern.sub(lambda _: replacement, text)
    return text


def blocks(lines):
    """(marker argument, first line number of the body, body lines) for each marked block."""
    index = 0
    while index < len(lines):
        marker = MARKER.match(lines[index])
        index += 1
        if not marker:
            continue
        argument = (marker.group(1) or "").strip()
        if argument == "ctrl-c":
            yield argument, index, []
            continue
        while index < len(lines) and not lines[index].strip():
            index += 1
        if index >= len(lines) or not lines[index].startswith("```"):
            sys.exit(f"README.md:{index}: a walkthrough marker must come right before a fenced block")
        start = index + 1
        end = start
        while end < len(lines) and not lines[end].startswith("```"):
            end += 1
        yield argument, start + 1, lines[start:end]
        index = end + 1


def commands(body, first_line):
    """(line number, command text, expected pieces or None, exit status) for each command."""
    pending = None
    text = []
    for offset, line in enumerate(body):
        number = first_line + offset
        continued = CONTINUED_EXPECT.match(line)
        if continued and not text:
            if pending is None:
                sys.exit(f"README.md:{number}: an expected output line follows no command")
            if pending[2] is None:
                pending = (pending[0], pending[1], [], 0)
            pending[2].extend(pieces(continued.group(1)))
            continue
        if pending is not None and not text:
            yield pending
            pending = None
        if not line.strip() or (line.lstrip().startswith("#") and not text):
            continue
        text.append(line)
        command = "\n".join(text)
        if not complete(command):
            continue
        text = []
        expect = EXPECT.match(command.split("\n")[-1])
        if expect and not expect.group(1).lstrip().startswith("#"):
            status = 0
            shown = expect.group(2)
            exit_status = EXIT_STATUS.match(shown)
            if exit_status:
                status, shown = int(exit_status.group(1)), exit_status.group(2)
            head = command.split("\n")[:-1] + [expect.group(1)]
            pending = (number, "\n".join(head), pieces(shown), status)
        else:
            pending = (number, command, None, 0)
    if text:
        sys.exit(f"README.md:{first_line + len(body)}: a command does not end (bash -n: a syntax error)")
    if pending is not None:
        yield pending


def complete(command):
    """Whether bash reads `command` as whole commands (no open `\\`, loop or quote)."""
    return command.rstrip()[-1:] != "\\" and subprocess.run(["bash", "-n", "-c", command], capture_output=True).returncode == 0


def pieces(shown):
    return [piece.strip() for piece in shown.split("...") if piece.strip()]


def main():
    lines = open(sys.argv[1], encoding="utf-8").read().split("\n")
    rules, work = substitutions()
    out = ["#!/usr/bin/env bash", PRELUDE]
    count = 0
    for argument, first_line, body in blocks(lines):
        count += 1
        if argument == "ctrl-c":
            out.append(f"__wt_line={first_line}; echo; echo '$ # Ctrl-C in the terminal of scripts/run.sh'; __wt_ctrl_c")
            continue
        if argument.startswith("file "):
            name = argument[len("file "):].strip()
            rules.append((re.compile(r"(?<![\w/.-])" + re.escape(name) + r"\b"), f"{work}/{name}"))
            out.append(f"cat > {shlex.quote(work + '/' + name)} <<'__WT_FILE'")
            out.extend(substitute(line, rules) for line in body)
            out.append("__WT_FILE")
            continue
        if argument:
            sys.exit(f"README.md:{first_line - 2}: unknown walkthrough marker argument: {argument}")
        for number, command, expected, status in commands(body, first_line):
            command = substitute(command, rules)
            out.append(f"__wt_line={number}; echo; printf '$ %s\\n' {shlex.quote(command)}")
            if expected is None:
                out.append(command)
            else:
                expected = [substitute(piece, rules) for piece in expected]
                arguments = " ".join(shlex.quote(piece) for piece in expected)
                out.append(f"__wt_run {number} {status} {arguments} <<'__WT_CMD'\n{command}\n__WT_CMD")
    if count == 0:
        sys.exit("README.md has no <!-- walkthrough --> blocks")
    out.append("echo; echo 'walk-through: every step as the README shows it'")
    print("\n".join(out))


if __name__ == "__main__":
    main()
