import GatewayPrimitives
import Testing

@Suite("Duration in seconds, milliseconds and microseconds")
struct DurationUnitsTests {
    @Test func fractionalSeconds() {
        #expect(Duration.milliseconds(1500).inSeconds == 1.5)
        #expect(Duration.zero.inSeconds == 0)
    }

    @Test func wholeUnitsRoundDown() {
        #expect(Duration.microseconds(2_999).inMilliseconds == 2)
        #expect(Duration.seconds(3).inMilliseconds == 3000)
        #expect(Duration.nanoseconds(1_999).inMicroseconds == 1)
        #expect(Duration.seconds(2).inMicroseconds == 2_000_000)
    }
}
