import Foundation
import GatewayContract
import Testing

@Suite struct GatewayDurationTests {
    /// Every form the configuration accepted before compound durations, and the compound ones.
    @Test(arguments: [
        ("0", Int64(0), "0s"),
        ("0s", 0, "0s"),
        ("0ms", 0, "0s"),
        ("500ms", 500, "500ms"),
        ("30s", 30_000, "30s"),
        ("10m", 600_000, "10m"),
        ("24h", 86_400_000, "1d"),
        ("90d", 7_776_000_000, "90d"),
        ("1h30m", 5_400_000, "1h30m"),
        ("1d12h", 129_600_000, "1d12h"),
        ("2m30s", 150_000, "2m30s"),
        ("1s500ms", 1_500, "1s500ms"),
        ("1d2h3m4s5ms", 93_784_005, "1d2h3m4s5ms"),
        ("90m", 5_400_000, "1h30m"),
        ("  30s ", 30_000, "30s"),
        ("007s", 7_000, "7s"),
        ("36500d", 3_153_600_000_000, "36500d"),
    ])
    func parses(text: String, milliseconds: Int64, canonical: String) throws {
        let duration = try GatewayDuration(parsing: text)
        #expect(duration.milliseconds == milliseconds)
        #expect(duration.description == canonical)
        #expect(try GatewayDuration(parsing: canonical) == duration)
    }

    /// Each refusal names what is wrong, so the message can be acted on.
    @Test(arguments: [
        ("", "it is empty"),
        ("   ", "it is empty"),
        ("ten", "expected a whole number at \"ten\""),
        ("10", "10 has no unit"),
        ("1.5s", "unexpected \".\" after 1"),
        ("10 m", "unexpected \" \" after 10"),
        ("-5s", "expected a whole number at \"-5s\""),
        ("+5s", "expected a whole number at \"+5s\""),
        ("5sec", "\"sec\" is not a unit"),
        ("5w", "\"w\" is not a unit"),
        ("5S", "\"S\" is not a unit"),
        ("s", "expected a whole number at \"s\""),
        ("30m1h", "units go from largest to smallest"),
        ("1h1h", "units go from largest to smallest"),
        ("1h30", "30 has no unit"),
        ("36501d", "longer than 36500d"),
        ("999999999999d", "longer than 36500d"),
        ("36500d1ms", "longer than 36500d"),
        ("876000h1m", "longer than 36500d"),
        ("9999999999999s", "is too large"),
        ("1h 30m", "expected a whole number at \" 30m\""),
        ("٣s", "expected a whole number"),
    ])
    func refuses(text: String, reason: String) {
        let error = #expect(throws: InvalidDuration.self) { try GatewayDuration(parsing: text) }
        #expect(error?.reason.contains(reason) == true, "\(error?.description ?? "no error") should say \(reason)")
        #expect(error?.description.contains("1h30m") == true, "the message shows the grammar")
    }

    @Test func convertsToSwiftDurations() throws {
        #expect(try GatewayDuration(parsing: "1m500ms").duration == .milliseconds(60_500))
        #expect(try GatewayDuration(parsing: "2s").timeInterval == 2)
        #expect(try GatewayDuration(parsing: "0").isZero)
        #expect(try GatewayDuration(parsing: "1h") > GatewayDuration(parsing: "59m"))
    }

    @Test func decodesAndEncodesAsText() throws {
        let decoded = try AdminJSON.decoder().decode([GatewayDuration].self, from: Data(#"["1h30m", "90s"]"#.utf8))
        #expect(decoded.map(\.milliseconds) == [5_400_000, 90_000])
        #expect(String(decoding: try AdminJSON.encoder().encode(decoded), as: UTF8.self) == #"["1h30m","1m30s"]"#)
        #expect(throws: DecodingError.self) { try AdminJSON.decoder().decode([GatewayDuration].self, from: Data(#"["soon"]"#.utf8)) }
    }
}
