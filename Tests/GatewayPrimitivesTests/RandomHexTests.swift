import GatewayPrimitives
import Testing

@Suite("RandomHex: unguessable ids")
struct RandomHexTests {
    @Test(arguments: [1, 8, 12, 16, 24])
    func lengthIsTwiceTheByteCount(byteCount: Int) {
        let id = RandomHex.string(byteCount: byteCount)
        #expect(Hex.isLowercase(id, count: 2 * byteCount), "\(id)")
    }

    @Test func idsDoNotRepeat() {
        let ids = Set((0..<1000).map { _ in RandomHex.string(byteCount: 8) })
        #expect(ids.count == 1000)
    }
}
