import Logging
@testable import GatewayConfiguration
@testable import GatewayProxy
import TestSupport
import Testing

/// ``RouteTable``: longest prefix on segment boundaries, the gateway's own paths never
/// proxied, and a connection's held routes following a reload.
@Suite("Route table: matching and reloads (in memory)")
struct RouteTableTests {
    private static func config(_ routes: String) throws -> GatewayConfig {
        try TestConfig.load(TestConfig.yaml(redisURL: "redis://127.0.0.1:1/0", extra: "routes:\n" + routes))
    }

    private static let twoRoutes = """
          - {name: users, path_prefix: /user, upstream: http://127.0.0.1:9, auth: none}
          - {name: user-admin, path_prefix: /user/admin/, upstream: http://127.0.0.1:9, auth: none}
          - {name: everything, path_prefix: /, upstream: http://127.0.0.1:9, auth: none}
        """

    @Test("the longest prefix wins, on segment boundaries only; reserved paths are never proxied")
    func matching() throws {
        let table = try RouteTable(Self.config(Self.twoRoutes).routes, clientScheme: "http", logger: Logger(label: "test"))
        var held = RouteTable.Held()
        for (path, expected) in [
            ("/user", "users"), ("/user/1", "users"), ("/username", "everything"), ("/user/admin", "user-admin"),
            ("/user/admin/x", "user-admin"), ("/user/administrator", "users"), ("/", "everything"), ("/x", "everything"),
        ] {
            #expect(table.match(Substring(path), holding: &held)?.name == expected, "\(path)")
            #expect(table.match(Substring(path))?.name == expected, "\(path)")
        }
        for reserved in ["/auth/otp/trigger", "/partner/v1/x", "/healthz", "/readyz", "/.well-known/jwks.json", "/auth"] {
            #expect(table.match(Substring(reserved), holding: &held) == nil, "\(reserved)")
        }
        // A path taken from a longer target, as the engine passes it.
        let target = "/user/1?x=/admin"
        #expect(table.match(target[..<target.firstIndex(of: "?")!], holding: &held)?.name == "users")
    }

    @Test("a path whose ';' parameters change the route it falls under is taken by none")
    func parameters() throws {
        let table = try RouteTable(Self.config(Self.twoRoutes).routes, clientScheme: "http", logger: Logger(label: "test"))
        var held = RouteTable.Held()
        for (path, expected) in [
            ("/user/admin;x/secret", nil), ("/user/;/admin/x", nil), ("/user;v=1/1", nil), ("/user/admin%3Bx/secret", nil),
            ("/auth;x/otp/trigger", nil), ("/user/admin/x;v=1", "user-admin"), ("/user/1;v=1", "users"), ("/x;y", "everything"),
        ] as [(String, String?)] {
            #expect(table.match(Substring(path), holding: &held)?.name == expected, "\(path)")
            #expect(table.match(Substring(path))?.name == expected, "\(path)")
        }
    }

    @Test("a route with upstream: none matches, with no upstream, and is not a path the public edge proxies")
    func routesWithoutUpstream() throws {
        let table = try RouteTable(Self.config("""
              - {name: edge-only, path_prefix: /edge, upstream: none, auth: bearer}
              - {name: everything, path_prefix: /, upstream: http://127.0.0.1:9, auth: none}
            """).routes, clientScheme: "http", logger: Logger(label: "test"))
        let edge = try #require(table.match("/edge/x"))
        #expect(edge.name == "edge-only" && !edge.hasUpstream && edge.fleet.targets.isEmpty)
        #expect(edge.admission.auth == .bearer)
        // Never the catch-all in its place: the public listener answers its paths 404.
        #expect(!table.takes("/edge/x"))
        #expect(table.takes("/other") && table.match("/other")?.hasUpstream == true)
    }

    @Test("a connection's held routes are taken again after a reload, and only then")
    func heldRoutesFollowAReload() throws {
        let table = try RouteTable(Self.config(Self.twoRoutes).routes, clientScheme: "http", logger: Logger(label: "test"))
        var held = RouteTable.Held()
        let before = try #require(table.match("/user/1", holding: &held))
        #expect(table.match("/user/1", holding: &held) === before)
        try table.replace(with: Self.config("""
              - {name: people, path_prefix: /user, upstream: http://127.0.0.1:9, auth: none}
            """).routes)
        #expect(table.match("/user/1", holding: &held)?.name == "people")
        #expect(table.match("/x", holding: &held) == nil)
    }

    private static let payouts = [
        "  - {name: payouts, path_prefix: /payouts/, upstream: http://127.0.0.1:9, auth: none}",
        "  - {name: payouts-list, path_prefix: /payouts/list, upstream: http://127.0.0.1:9, auth: bearer}",
    ]

    @Test("the longest prefix wins whichever route is written first; a trailing slash makes no other prefix")
    func orderDoesNotDecide() throws {
        for routes in [Self.payouts, Self.payouts.reversed()] {
            let table = try RouteTable(Self.config(routes.joined(separator: "\n")).routes, clientScheme: "http", logger: Logger(label: "test"))
            for (path, expected) in [("/payouts/list", "payouts-list"), ("/payouts/list/7", "payouts-list"), ("/payouts", "payouts"), ("/payouts/7", "payouts")] {
                #expect(table.match(Substring(path))?.name == expected, "\(path) with \(routes)")
            }
        }
    }

    @Test("two routes on one prefix are refused, whichever is written first and with or without a trailing slash")
    func ambiguousTablesAreRefused() throws {
        let routes = try Self.config(Self.payouts.joined(separator: "\n")).routes
        var same = routes
        same[1].pathPrefix = "/payouts"
        for table in [same, same.reversed()] {
            #expect(throws: ConfigError.self) { try RouteTable(table, clientScheme: "http", logger: Logger(label: "test")) }
        }
        let table = try RouteTable(routes, clientScheme: "http", logger: Logger(label: "test"))
        #expect(throws: ConfigError.self) { try table.replace(with: same) }
        #expect(table.match("/payouts/list")?.name == "payouts-list", "a refused table replaced the routes")
    }
}
