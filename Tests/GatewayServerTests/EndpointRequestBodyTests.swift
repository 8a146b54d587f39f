@testable import GatewayServer
import Hummingbird
import NIOCore
import Testing

/// The body an endpoint reads while it arrives: parts in order whether they came before the
/// read or after it, the end, and a broken-off body failing the read that waits for it.
@Suite("Endpoints: a request body as it arrives (in memory)")
struct EndpointRequestBodyTests {
    struct BrokenOff: Error {}

    /// The body's next part, read in a task of its own (usually waiting for it).
    static func read(_ body: EndpointRequestBody) -> Task<ByteBuffer?, any Error> {
        Task {
            var iterator = body.makeAsyncIterator()
            return try await iterator.next()
        }
    }

    @Test func partsReadInOrderWhetherTheyCameBeforeOrAfterTheRead() async throws {
        let body = EndpointRequestBody()
        body.append(ByteBuffer(string: "{\"a\""))
        var iterator = body.makeAsyncIterator()
        #expect(try await iterator.next() == ByteBuffer(string: "{\"a\""))
        let late = Self.read(body)
        body.append(ByteBuffer(string: ":1}"))
        #expect(try await late.value == ByteBuffer(string: ":1}"))
        body.finish()
        #expect(try await iterator.next() == nil)
    }

    @Test func aWaitingReadSeesTheEnd() async throws {
        let body = EndpointRequestBody()
        let end = Self.read(body)
        body.finish()
        #expect(try await end.value == nil)
    }

    @Test func aBodyBrokenOffFailsTheReadWaitingForIt() async throws {
        let body = EndpointRequestBody()
        let broken = Self.read(body)
        body.finish(failure: BrokenOff())
        await #expect(throws: BrokenOff.self) { try await broken.value }
        // Finishing twice changes nothing: the first end stands.
        body.finish()
        await #expect(throws: BrokenOff.self) { try await Self.read(body).value }
    }

    @Test func hummingbirdCollectsItWhole() async throws {
        let body = EndpointRequestBody()
        body.append(ByteBuffer(string: "{\"phone\":"))
        body.append(ByteBuffer(string: "\"9000000001\"}"))
        body.finish()
        let collected = try await RequestBody(asyncSequence: body).collect(upTo: 64)
        #expect(collected == ByteBuffer(string: "{\"phone\":\"9000000001\"}"))
    }
}
