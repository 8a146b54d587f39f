import Testing
@testable import gatewayctl

@Suite struct DurationTextTests {
    @Test(arguments: [
        ("500ms", "500ms"), ("30s", "30s"), ("10m", "10m"), ("24h", "24h"), ("90d", "90d"),
        ("0", "0s"), ("0s", "0s"), ("007d", "7d"),
    ])
    func accepts(_ text: String, _ sent: String) throws {
        #expect(try DurationText(parsing: text).description == sent)
    }

    @Test(arguments: ["ten", "1.5h", "-5s", "", "5", "h", "ms", "+5s", "5 s", " 5s", "5S", "5w", "1h30m", "99999999999999999999d", "٥s"])
    func rejects(_ text: String) {
        #expect(throws: InvalidDuration.self) { try DurationText(parsing: text) }
    }

    @Test func zeroIsRecognised() throws {
        #expect(try DurationText(parsing: "0").isZero)
        #expect(try DurationText(parsing: "0ms").isZero)
        #expect(try !DurationText(parsing: "1ms").isZero)
    }

    @Test func rejectionExplainsTheFormat() {
        #expect(InvalidDuration().description.contains("30s"))
    }
}

@Suite struct ScopeListTests {
    @Test func splitsTrimsAndDropsRepeats() throws {
        #expect(try ScopeList(parsing: "sdk_tokens:mint").scopes == ["sdk_tokens:mint"])
        #expect(try ScopeList(parsing: "a:b, c:d,a:b").scopes == ["a:b", "c:d"])
    }

    @Test(arguments: ["", ",", "a,,b", "a,", "a b"])
    func rejectsEmptyEntries(_ text: String) {
        #expect(throws: InvalidScopeList.self) { try ScopeList(parsing: text) }
    }
}
