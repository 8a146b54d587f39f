@testable import GatewayPrimitives
import Testing

/// The path normalisation rules (docs/public-api.md, "Path normalisation"), case by case.
@Suite("Request path normalisation")
struct RequestPathTests {
    /// Targets that are canonical already and pass untouched.
    @Test(arguments: [
        "/", "/user", "/user/", "/user/profile", "/user/a.b/c..d/.e/..f", "/.well-known/jwks.json",
        "/user/%20x", "/user/%C3%A9", "/user?x=../..&y=%2F", "/user;v=1/x", "*",
    ])
    func canonicalTargetsAreUnchanged(target: String) {
        #expect(RequestPath.normalize(target: target) == .unchanged)
    }

    /// RFC 3986 §5.2.4's examples and the gateway's own: dot segments, merged slashes,
    /// unreserved escapes decoded, other escapes upper-cased, the query untouched.
    @Test(arguments: [
        ("/user/x/../admin/list", "/user/admin/list"),
        ("/user/x/../../admin/list", "/admin/list"),
        ("/user/%61dmin/list", "/user/admin/list"),
        ("/user//admin/list", "/user/admin/list"),
        ("//user///admin//", "/user/admin/"),
        ("/a/b/c/./../../g", "/a/g"),
        ("/mid/content=5/../6", "/mid/6"),
        ("/a/b/..", "/a/"),
        ("/a/b/.", "/a/b/"),
        ("/a/./b", "/a/b"),
        ("/a/..", "/"),
        ("/.", "/"),
        ("/user/%2E%2E/admin", "/admin"),
        ("/user/.%2e/admin", "/admin"),
        ("/user/%7Ename", "/user/~name"),
        ("/user/%7e%41%5F%2d", "/user/~A_-"),
        ("/user/%c3%a9", "/user/%C3%A9"),
        ("/user/%3f", "/user/%3F"),
        ("/svc/../internal/secret?q=1", "/internal/secret?q=1"),
        ("/user/x/..?next=/../..//", "/user/?next=/../..//"),
        ("http://example.com/user/../admin?x=1", "/admin?x=1"),
        ("HTTP://example.com", "/"),
        ("https://example.com?x", "/?x"),
    ])
    func nonCanonicalTargetsAreRewritten(target: String, expected: String) {
        guard case .rewritten(let rewritten, _) = RequestPath.normalize(target: target) else {
            Issue.record("\(target) was not rewritten: \(RequestPath.normalize(target: target))")
            return
        }
        #expect(rewritten == expected, "\(target)")
    }

    /// The reading a servlet upstream dispatches on: parameters gone, empty segments merged.
    @Test(arguments: [
        ("/user;v=1/x", "/user/x"), ("/user/;/admin", "/user/admin"), ("/a/b%3Bc/d/", "/a/b/d/"), ("/;x", "/"),
        ("/user/x", nil), ("/user/%20x", nil), ("/user/%3C", nil),
    ] as [(String, String?)])
    func parametersRemovedForRouting(path: String, expected: String?) {
        #expect(RequestPath.withoutParameters(Substring(path)).map(String.init) == expected)
    }

    @Test func anAbsoluteFormTargetNamesItsHost() {
        #expect(RequestPath.normalize(target: "http://api.example:8080/user?x") == .rewritten("/user?x", host: "api.example:8080"))
    }

    @Test(arguments: [
        ("/user/a%2Fb", RequestPath.Refusal.encodedSlash),
        ("/user/a%2fb", .encodedSlash),
        ("/user/a%5Cb", .encodedSlash),
        ("/user/a%5cb", .encodedSlash),
        ("/user/a\\b", .backslash),
        ("/user/\\..\\admin", .backslash),
        ("/user/a%00b", .controlCharacter),
        ("/user/a%0Ab", .controlCharacter),
        ("/user/a%7Fb", .controlCharacter),
        ("/user/a\u{01}b", .controlCharacter),
        ("/user/a%", .malformedEscape),
        ("/user/a%4", .malformedEscape),
        ("/user/a%zz", .malformedEscape),
        ("/user/a#frag", .fragment),
        ("/user/..;/admin", .dotSegmentWithParameters),
        ("/user/.;x/admin", .dotSegmentWithParameters),
        ("/..", .aboveRoot),
        ("/a/../..", .aboveRoot),
        ("/user/../../etc/passwd", .aboveRoot),
        ("/%2e%2e/x", .aboveRoot),
        ("user/x", .notAPath),
        ("", .notAPath),
        ("ftp://example.com/x", .notAPath),
        ("http:///x", .notAPath),
        ("http://user:pw@example.com/x", .notAPath),
    ])
    func dangerousTargetsAreRefused(target: String, refusal: RequestPath.Refusal) {
        #expect(RequestPath.normalize(target: target) == .refused(refusal), "\(target)")
    }

    /// `;` written as `%3B` (either case) is the same parameter to a servlet container, which
    /// decodes before it strips parameters: `/..%3B/` climbs like `/..;/`.
    @Test(arguments: ["/user/..%3B/admin", "/user/..%3b/admin", "/user/.%3Bx/admin", "/user/%2E%2E%3b/admin", "/user/..%3B"])
    func dotSegmentsWithEncodedParametersAreRefused(target: String) {
        #expect(RequestPath.normalize(target: target) == .refused(.dotSegmentWithParameters), "\(target)")
    }

    /// Normalising is idempotent: a canonical path is a fixed point, so a second gateway (or
    /// the upstream) resolving it again finds nothing left to resolve.
    @Test(arguments: ["/a/./b/../c//d/%7e/", "/x/%2e/%41%42/..", "//a//b//..//c"])
    func normalisingTwiceChangesNothing(target: String) throws {
        guard case .rewritten(let once, _) = RequestPath.normalize(target: target) else {
            Issue.record("\(target) was not rewritten")
            return
        }
        #expect(RequestPath.normalize(target: once) == .unchanged, "\(once)")
    }
}
