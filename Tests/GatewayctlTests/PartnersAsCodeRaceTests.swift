import Foundation
import Testing
import TestSupport

/// An apply racing another change to the same key, or cut off by Redis: a proxy in front of
/// the admin API holds the apply's first call to a key until something else happened (another
/// change, Redis refusing writes), then lets it through. The apply stops, says what it
/// applied and what not, leaves nothing half-changed, and applying again converges.
@Suite("gatewayctl: partners as code racing other changes and failing half-way", .realProcesses)
struct PartnersAsCodeRaceTests {
    /// Forwards every request to the admin API; before it forwards the first one starting
    /// with `trigger` (`PATCH /v1/keys/key_...`), it runs `hook` to its end.
    final class HoldingProxy: Sendable {
        let port: Int
        let logPath: String
        private let process: ChildProcess
        private let folder: TemporaryFolder

        static let script = #"""
            import http.server, json, subprocess, sys, threading, urllib.error, urllib.request
            port, upstream, trigger, hook = int(sys.argv[1]), sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
            lock, fired = threading.Lock(), []
            class Proxy(http.server.BaseHTTPRequestHandler):
                protocol_version = "HTTP/1.1"
                def forward(self):
                    length = int(self.headers.get("Content-Length") or 0)
                    body = self.rfile.read(length) if length else None
                    with lock:
                        if not fired and f"{self.command} {self.path}".startswith(trigger):
                            fired.append(True)
                            done = subprocess.run(hook, capture_output=True, text=True)
                            print("hook exit", done.returncode, done.stdout, done.stderr, flush=True)
                    request = urllib.request.Request(upstream + self.path, data=body, method=self.command)
                    for name, value in self.headers.items():
                        if name.lower() not in ("host", "content-length", "connection"):
                            request.add_header(name, value)
                    try:
                        with urllib.request.urlopen(request, timeout=10) as answer:
                            status, headers, data = answer.status, answer.headers, answer.read()
                    except urllib.error.HTTPError as error:
                        status, headers, data = error.code, error.headers, error.read()
                    self.send_response(status)
                    for name, value in headers.items():
                        if name.lower() not in ("content-length", "connection", "transfer-encoding", "date", "server"):
                            self.send_header(name, value)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                do_GET = do_POST = do_PATCH = forward
                def log_message(self, *args):
                    pass
            http.server.ThreadingHTTPServer(("127.0.0.1", port), Proxy).serve_forever()
            """#

        init(to upstream: String, holding trigger: String, until hook: [String]) async throws {
            port = LoopbackPort.free()
            folder = try TemporaryFolder("pg-holding-proxy")
            logPath = folder.path("proxy.log")
            let hookJSON = String(decoding: try JSONSerialization.data(withJSONObject: hook), as: UTF8.self)
            process = try ChildProcess("/usr/bin/python3", ["-c", Self.script, String(port), upstream, trigger, hookJSON], outputPath: logPath)
            let port = port
            try await eventually(timeout: .seconds(10)) { LoopbackPort.isAccepting(port) }
        }

        deinit {
            process.kill9()
        }

        var url: String { "http://127.0.0.1:\(port)" }
        var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }
    }

    static func state(quota: Int, meta: String) -> String {
        """
        version: 1
        partners:
        - id: ptr_00000000000000a1
          name: Racers
          keys:
          - id: key_00000000000000b1
            name: checkout
            quota: {limit: \(quota), period: day}
            meta: \(meta)
        """
    }

    /// What the key holds: its name, quota limit and metadata.
    static func key(_ fixture: StateFixture) async throws -> (name: String?, quota: Int?, meta: [String: String]?) {
        let key = try await fixture.succeed("keys", "get", "key_00000000000000b1", "-o", "json").object()
        return (key["name"] as? String, (key["quota"] as? [String: Any])?["limit"] as? Int, key["meta"] as? [String: String])
    }

    @Test func anApplyRacingAnAdminAPIChangeOrAnotherApplyIsRefusedWholeAndConverges() async throws {
        let fixture = try await StateFixture()
        try await fixture.succeed("apply", "-f", try fixture.write("start.yaml", Self.state(quota: 100, meta: "{team: start}")), "--secrets-out", fixture.folder.path("secrets"))
        let planned = try fixture.write("planned.yaml", Self.state(quota: 200, meta: "{team: planned}"))
        let other = try fixture.write("other.yaml", Self.state(quota: 500, meta: "{team: other}"))
        let direct = ["--admin-url", fixture.gateway.adminURL, "--admin-token", GatewayProcess.adminToken]
        let hooks: [(String, [String], (name: String?, quota: Int?, meta: [String: String]?))] = [
            ("an admin API change", [Ctl.path, "keys", "update", "key_00000000000000b1", "--name", "renamed", "--quota", "300/day"] + direct,
             ("renamed", 300, ["team": "start"])),
            ("another apply", [Ctl.path, "apply", "-f", other] + direct, ("checkout", 500, ["team": "other"])),
        ]
        for (what, hook, raced) in hooks {
            // Back to the start, then the apply whose change the proxy holds.
            try await fixture.succeed("apply", "-f", try fixture.write("start.yaml", Self.state(quota: 100, meta: "{team: start}")))
            let entries = try await fixture.auditEntries()
            let proxy = try await HoldingProxy(to: fixture.gateway.adminURL, holding: "PATCH /v1/keys/key_00000000000000b1", until: hook)
            let applied = try await fixture.ctl(["apply", "-f", planned], adminURL: proxy.url)
            #expect(proxy.log.contains("hook exit 0"), "\(what): \(proxy.log)")
            #expect(applied.status == 1, "\(what): \(applied)")
            #expect(applied.stderr.contains("PRECONDITION_FAILED"), "\(what): \(applied)")
            #expect(applied.stdout.contains("Not applied: key \"checkout\" (key_00000000000000b1) of partner \"Racers\"."), "\(what): \(applied)")

            let held = try await Self.key(fixture)
            #expect(held.name == raced.name && held.quota == raced.quota && held.meta == raced.meta, "\(what) stands whole, none of the refused apply: \(held)")
            #expect(try await fixture.auditEntries() == entries + 1, "\(what): only the change that won is audited")

            let again = try await fixture.ctl(["apply", "-f", planned])
            #expect(again.status == 0 && again.stdout.contains("Applied 1 change."), "\(what): \(again)")
            let converged = try await Self.key(fixture)
            #expect(converged.name == "checkout" && converged.quota == 200 && converged.meta == ["team": "planned"], "\(what): \(converged)")
            #expect(try await fixture.ctl(["diff", "-f", planned]).status == 0)
        }
    }

    /// A member's change made meanwhile (as a partner_admin may in the portal) refuses the
    /// apply's change of that member whole (If-Match), and the next apply converges.
    @Test func anApplyRacingAMembersChangeIsRefusedWholeAndConverges() async throws {
        let fixture = try await StateFixture()
        func state(_ name: String, _ role: String) -> String {
            """
            version: 1
            partners:
            - id: ptr_00000000000000a2
              name: Members
              members:
              - {id: mbr_00000000000000e1, email: asha@members.example, name: \(name), role: \(role)}
            """
        }
        try await fixture.succeed("apply", "-f", try fixture.write("start.yaml", state("Asha", "viewer")))
        let planned = try fixture.write("planned.yaml", state("Asha K", "developer"))
        let entries = try await fixture.auditEntries()
        let direct = ["--admin-url", fixture.gateway.adminURL, "--admin-token", GatewayProcess.adminToken]
        let hook = [Ctl.path, "members", "update", "mbr_00000000000000e1", "--partner", "ptr_00000000000000a2", "--role", "partner_admin"] + direct
        let proxy = try await HoldingProxy(to: fixture.gateway.adminURL, holding: "PATCH /v1/partners/ptr_00000000000000a2/members/mbr_00000000000000e1", until: hook)
        let applied = try await fixture.ctl(["apply", "-f", planned], adminURL: proxy.url)
        #expect(proxy.log.contains("hook exit 0"), "\(proxy.log)")
        #expect(applied.status == 1 && applied.stderr.contains("PRECONDITION_FAILED"), "\(applied)")
        #expect(applied.stdout.contains("Not applied: member asha@members.example (mbr_00000000000000e1) of partner \"Members\"."), "\(applied)")
        let members = try await fixture.succeed("members", "list", "--partner", "ptr_00000000000000a2", "-o", "json").object()
        let held = try #require((members["items"] as? [[String: Any]])?.first)
        #expect(held["name"] as? String == "Asha" && held["role"] as? String == "partner_admin", "the change that won stands whole: \(held)")
        #expect(try await fixture.auditEntries() == entries + 1, "only the change that won is audited")

        let again = try await fixture.ctl(["apply", "-f", planned])
        #expect(again.status == 0 && again.stdout.contains("Applied 1 change."), "\(again)")
        #expect(try await fixture.ctl(["diff", "-f", planned]).status == 0)
    }

    /// Redis stops taking writes as the apply creates its keys: the partner was created, the
    /// keys' creates time out (503) and leave a claimed id behind; the apply says so and exits
    /// 1; the next apply creates them under their ids and converges.
    @Test func anApplyCutOffByRedisStopsSaysWhatItDidAndConverges() async throws {
        let fixture = try await StateFixture(redisTimeout: "500ms")
        let state = try fixture.write("state.yaml", """
            version: 1
            partners:
            - id: ptr_00000000000000c1
              name: Cut
              keys:
              - {id: key_00000000000000d1, name: one}
              - {id: key_00000000000000d2, name: two}
              - {id: key_00000000000000d3, name: three}
            """)
        let secrets = fixture.folder.path("secrets")
        let pause = ["/usr/bin/redis-cli", "-p", String(fixture.redis.port), "CLIENT", "PAUSE", "10000", "WRITE"]
        let proxy = try await HoldingProxy(to: fixture.gateway.adminURL, holding: "POST /v1/partners/ptr_00000000000000c1/keys", until: pause)
        let cut = try await fixture.ctl(["apply", "-f", state, "--secrets-out", secrets], adminURL: proxy.url)
        try await fixture.redis.cli("CLIENT", "UNPAUSE")
        #expect(proxy.log.contains("hook exit 0"), "\(proxy.log)")
        #expect(cut.status == 1 && cut.stderr.contains("SERVICE_UNAVAILABLE"), "\(cut)")
        #expect(cut.stdout.contains("Applied 1 of 4 changes: partner \"Cut\" (ptr_00000000000000c1)."), "\(cut)")
        #expect(cut.stdout.contains("Not applied: key \"one\" (key_00000000000000d1) of partner \"Cut\", key \"two\""), "\(cut)")

        let again = try await fixture.ctl(["apply", "-f", state, "--secrets-out", secrets])
        #expect(again.status == 0 && again.stdout.contains("Plan: 3 to create") && again.stdout.contains("Applied 3 changes."), "\(again)")
        #expect(try await fixture.ctl(["diff", "-f", state]).status == 0)
        for id in ["key_00000000000000d1", "key_00000000000000d2", "key_00000000000000d3"] {
            let secret = try fixture.read(secrets + "/" + id).trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(try await fixture.callPartnerAPI(key: secret) == 200, "\(id) works under the id its file names")
        }
    }
}
