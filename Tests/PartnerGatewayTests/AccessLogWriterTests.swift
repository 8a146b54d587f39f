@testable import PartnerGateway
import Foundation
import Testing
import TestSupport

/// ``AccessLogWriter`` against a real file: lines stay in memory until the buffer fills, the
/// flush interval passes or the writer shuts down, and arrive whole and in order.
@Suite("Access log writer")
struct AccessLogWriterTests {
    private func record(_ index: Int) -> AccessLogRecord {
        AccessLogRecord(
            listener: "public", requestID: "req-\(index)", method: "GET", route: "echo", status: 200,
            duration: .microseconds(1234), client: "10.0.0.1", userID: "usr_1", auth: "ok",
            upstreamDuration: .microseconds(1000), bytesIn: 0, bytesOut: 42
        )
    }

    private func withOutputFile(_ body: (LogOutput, () -> String) async throws -> Void) async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("pg-access-\(UUID().uuidString).log").path
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        try #require(descriptor >= 0)
        defer {
            close(descriptor)
            unlink(path)
        }
        try await body(LogOutput(descriptor: descriptor)) { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }
    }

    @Test func linesWaitForTheTimerThenArriveInOrder() async throws {
        try await withOutputFile { output, contents in
            let writer = AccessLogWriter(format: .json, output: output, flushInterval: .milliseconds(200))
            defer { writer.shutdown() }
            for index in 0..<10 { writer.record(record(index)) }
            #expect(contents().isEmpty, "written on the request's path")
            try await eventually(timeout: .seconds(30)) { contents().split(separator: "\n").count == 10 }
            let ids = try contents().split(separator: "\n").map { line in
                let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
                return object["request_id"] as? String
            }
            #expect(ids == (0..<10).map { "req-\($0)" })
        }
    }

    @Test func aFullBufferIsWrittenAtOnce() async throws {
        try await withOutputFile { output, contents in
            // An interval longer than the test: only the size can have woken the flusher.
            let writer = AccessLogWriter(format: .json, output: output, flushInterval: .seconds(3600))
            defer { writer.shutdown() }
            var count = 0
            var bytes: [UInt8] = []
            while bytes.count < AccessLogWriter.flushBytes {
                record(count).write(to: &bytes, format: .json)
                writer.record(record(count))
                count += 1
            }
            try await eventually(timeout: .seconds(30), interval: .milliseconds(5)) { contents().utf8.count >= AccessLogWriter.flushBytes }
        }
    }

    @Test func shutdownWritesWhatIsBuffered() async throws {
        try await withOutputFile { output, contents in
            let writer = AccessLogWriter(format: .text, output: output)
            writer.record(record(1))
            writer.shutdown()
            #expect(contents().contains("request_id=req-1"))
            writer.record(record(2))
            writer.shutdown()
            #expect(!contents().contains("req-2"))
        }
    }

    @Test func valuesCannotBreakTheLine() {
        var bytes: [UInt8] = []
        var line = JSONLine(appendingTo: &bytes)
        line.string("msg", "a\"b\\c\nd\u{1}")
        line.finish(into: &bytes)
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text == #"{"msg":"a\"b\\c\nd\u0001"}"# + "\n")
    }
}
