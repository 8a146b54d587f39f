#!/usr/bin/env python3
"""Groups a gateway perf profile into the parts of a proxied request.

Reads `perf script` output (samples with call stacks) on stdin. Each sample is charged to
the innermost frame that belongs to a known part (kernel time by the system call it ran
under, NIO's HTTP/1 codec, the event loop and pipeline, auth, forwarding, metrics,
connection rules, Hummingbird), so the Swift runtime and malloc time a part causes count as
that part's (a retain inside the header rules is forwarding); what no frame explains is
charged by where the sample landed (kernel, runtime, malloc, other). Prints each part's
share and its five hottest leaf functions, so the next optimisation is obvious.
"""
import collections
import re
import subprocess
import sys

# Each sample is charged to the innermost frame that matches a part; within a frame, the
# first pattern that matches names the part. Kernel time is charged to the system call it
# ran under, so a socket write's loopback delivery and the wake-up of its reader count as
# "socket writes".
PARTS = [
    ("kernel: socket writes (loopback delivery, waking the reader)", re.compile(r"^(ksys_write|do_writev)$")),
    ("kernel: socket reads", re.compile(r"^ksys_read$")),
    ("kernel: epoll", re.compile(r"epoll")),
    ("kernel: scheduling (IPIs, preemption)", re.compile(r"reschedule_ipi|exit_to_user_mode_loop|schedule$")),
    ("TLS (NIOSSL and BoringSSL: records, AES-GCM)", re.compile(r"NIOSSL|BoringSSL|^SSL_|^ssl_|aes_|gcm_|CNIOBoringSSL")),
    ("HTTP/2 (swift-nio-http2: frames, HPACK, stream channels)", re.compile(r"NIOHTTP2|NIOHPACK|HTTP2StreamRouter|HTTP2Stream")),
    ("HTTP/1 codec (NIO's llhttp parser, decoders, encoders)",
     re.compile(r"llhttp|HTTPDecoder|BetterHTTPParser|HTTPResponseEncoder|HTTPRequestEncoder|HTTPServerRequestMethodQueue")),
    ("auth (bearer: token cache, revocations, assertion cache)",
     re.compile(r"BearerAuthenticator|AccessToken|VerifiedTokenCache|SessionRevocations|JWTKit|APIKeyAuthenticator|KeyVerifier|AssertionSigner")),
    ("metrics and access log", re.compile(r"ProxyEngine\.finished|UpstreamMetrics|RequestMetricHandles|Metrics\.|Prometheus|Logger")),
    ("forwarding (route match, header rules, proxy engine, upstream pool and exchange)",
     re.compile(r"ProxyEngine|HTTP1ConnectionHandler|ProxyExchange|ProxyIdentity|ForwardedHeaders|HeaderName|"
                r"RouteTable|ProxyRoute|Upstream|ClientAddress|DeadlineTimer|"
                r"RequestIDMiddleware|Hex\.")),
    ("connection rules (timeouts, shutdown, 100-continue)", re.compile(r"RequestEdge|RequestStartWatcher")),
    ("framework (Hummingbird router, middleware, async handler, HTTPTypes)",
     re.compile(r"Hummingbird|HTTPTypes|NIOHTTPTypes|Middleware|GatewayRequestContext|NIOAsyncChannel")),
    ("NIO event loop, pipeline and socket calls",
     re.compile(r"NIOCore|NIOPosix|NIOHTTP1|_NIO|SelectableEventLoop|BaseSocketChannel|BaseStreamSocketChannel|"
                r"\bSocket\.|PendingWritesManager|ChannelHandlerContext|ChannelPipeline|ByteToMessageHandler|EventLoopFuture|"
                r"EventLoopPromise|CallbackList|ByteBuffer|NIOAny|Selector")),
]


def demangle(symbols):
    names = list(symbols)
    if not names:
        return {}
    try:
        out = subprocess.run(["swift", "demangle", "--simplified"], input="\n".join(names),
                             capture_output=True, text=True, check=True).stdout.splitlines()
    except (OSError, subprocess.CalledProcessError):
        out = names
    return dict(zip(names, out)) if len(out) == len(names) else {n: n for n in names}


def samples(lines):
    stack = []
    for line in lines:
        line = line.rstrip("\n")
        if not line.strip():
            if stack:
                yield stack
            stack = []
        elif line.startswith(("\t", " ")):
            parts = line.strip().split(None, 1)
            if len(parts) == 2:
                rest = parts[1]
                dso = rest[rest.rfind("(") + 1:-1] if rest.endswith(")") else ""
                sym = rest[:rest.rfind(" (")] if " (" in rest else rest
                sym = re.sub(r"\+0x[0-9a-f]+$", "", sym)
                stack.append((sym, dso))
    if stack:
        yield stack


def landing(sym, dso):
    if "kernel" in dso:
        return "kernel"
    if "libswift" in dso or sym.startswith("swift_"):
        return "Swift runtime (retain/release, metadata)"
    if "libc" in dso and re.search(r"malloc|free|memcpy|memmove|cfree", sym):
        return "malloc and memcpy"
    return "other (unattributed)"


def main():
    stacks = list(samples(sys.stdin))
    if not stacks:
        print("  no samples (is perf allowed to attach? see /proc/sys/kernel/perf_event_paranoid)")
        return
    names = demangle({sym for stack in stacks for sym, _ in stack})
    totals = collections.Counter()
    leaves = collections.defaultdict(collections.Counter)
    for stack in stacks:
        part = None
        for sym, dso in stack:
            name = names.get(sym, sym)
            for label, pattern in PARTS:
                if pattern.search(name):
                    part = label
                    break
            if part:
                break
        leaf_sym, leaf_dso = stack[0]
        part = part or landing(leaf_sym, leaf_dso)
        totals[part] += 1
        leaves[part][names.get(leaf_sym, leaf_sym)[:90]] += 1
    count = len(stacks)
    for part, n in totals.most_common():
        print(f"  {100 * n / count:5.1f}%  {part}")
        for leaf, k in leaves[part].most_common(5):
            print(f"            {100 * k / count:5.1f}%  {leaf}")
    print(f"  ({count} samples)")


if __name__ == "__main__":
    main()
