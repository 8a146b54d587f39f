@testable import GatewayObservability
import Foundation
import Testing
import TestSupport

/// ``LogOutput``: posted lines never make the poster wait on the output, and every line that
/// is not dropped arrives whole and in order, before anything written directly after it.
@Suite("Log output")
struct LogOutputTests {
    private func line(_ index: Int) -> [UInt8] {
        Array("{\"msg\":\"line \(index)\",\"pad\":\"\(String(repeating: "x", count: 200))\"}\n".utf8)
    }

    private func index(of line: Substring) throws -> Int {
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        let message = try #require(object["msg"] as? String)
        return try #require(Int(message.dropFirst("line ".count)))
    }

    @Test func postingToAStalledPipeNeitherWaitsNorGrowsAndWhatArrivesIsWholeAndInOrder() throws {
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        defer { close(ends[0]) }
        let output = LogOutput(descriptor: ends[1])
        // Nobody reads yet: a write(2) of these would block once the pipe's 64 KiB are full.
        // At most 4 MiB wait, plus the batch the writer took before it blocked: under 12 MiB.
        let posted = 3 * LogOutput.maxPendingBytes / line(0).count
        for index in 0..<posted { output.post(line(index)) }
        // Reading frees the writer; closing the write end after the flush ends the read.
        let reader = Thread.detachedRead(from: ends[0])
        output.flush()
        close(ends[1])
        let text = String(decoding: reader.wait(), as: UTF8.self)
        let indices = try text.split(separator: "\n").map(index(of:))
        #expect(indices.count < posted, "more than 4 MiB kept waiting")
        #expect(text.utf8.count >= LogOutput.maxPendingBytes - line(posted).count, "lines lost below the limit")
        #expect(indices == indices.sorted() && Set(indices).count == indices.count)
        #expect(indices.first == 0)
    }

    @Test func aDirectWriteFollowsThePostedLinesAndFlushWritesThemAll() async throws {
        try await withTemporaryLogFile { output, contents in
            for index in 0..<100 { output.post(line(index)) }
            output.write(line(100))
            for index in 101..<200 { output.post(line(index)) }
            output.flush()
            let indices = try contents().split(separator: "\n").map(index(of:))
            #expect(indices == Array(0..<200))
        }
    }
}

extension Thread {
    /// Reads `descriptor` to its end on a thread of its own.
    fileprivate static func detachedRead(from descriptor: Int32) -> PendingRead {
        let read = PendingRead()
        Thread.detachNewThread {
            var bytes: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = chunk.withUnsafeMutableBytes { Foundation.read(descriptor, $0.baseAddress!, $0.count) }
                if count > 0 {
                    bytes += chunk[0..<count]
                } else if count < 0 && errno == EINTR {
                    continue
                } else {
                    break
                }
            }
            read.finish(bytes)
        }
        return read
    }
}

/// A read running on another thread, and what it read.
private final class PendingRead: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    private var bytes: [UInt8] = []

    func finish(_ bytes: [UInt8]) {
        self.bytes = bytes
        done.signal()
    }

    func wait() -> [UInt8] {
        done.wait()
        return bytes
    }
}
