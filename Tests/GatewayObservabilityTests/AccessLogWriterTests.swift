@testable import GatewayObservability
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
            var second = JSONLine.Second()
            while bytes.count < AccessLogWriter.flushBytes {
                record(count).write(to: &bytes, format: .json, second: &second)
                writer.record(record(count))
                count += 1
            }
            try await eventually(timeout: .seconds(30), interval: .milliseconds(5)) { contents().utf8.count >= AccessLogWriter.flushBytes }
        }
    }

    @Test func linesFromManyThreadsAllArriveEachThreadsInOrder() async throws {
        try await withOutputFile { output, contents in
            let writer = AccessLogWriter(format: .json, output: output, flushInterval: .seconds(3600))
            let threads = 4
            let perThread = 500
            // Threads of their own (each has its own buffer), all recording at once.
            DispatchQueue.concurrentPerform(iterations: threads) { thread in
                for index in 0..<perThread { writer.record(record(thread * perThread + index)) }
            }
            writer.shutdown()
            let ids = try contents().split(separator: "\n").map { line in
                let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
                let id = try #require(object["request_id"] as? String)
                return try #require(Int(id.dropFirst("req-".count)))
            }
            #expect(ids.count == threads * perThread)
            #expect(Set(ids).count == threads * perThread)
            for thread in 0..<threads {
                let own = ids.filter { $0 / perThread == thread }
                #expect(own == own.sorted(), "thread \(thread)'s lines out of order")
            }
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

    @Test func numbersAreWrittenInDecimalAndMetadataKeysAreEscaped() {
        var bytes: [UInt8] = []
        var line = JSONLine(appendingTo: &bytes)
        line.integer("zero", 0)
        line.integer("negative", -42)
        line.integer("max", Int.max)
        line.integer("min", Int.min)
        line.milliseconds("short", .microseconds(1002))
        line.milliseconds("none", .zero)
        line.milliseconds("long", .microseconds(12_345_678))
        line.string(named: "odd\"key", "v")
        line.finish(into: &bytes)
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text == #"{"zero":0,"negative":-42,"max":9223372036854775807,"min":-9223372036854775808,"short":1.002,"none":0.000,"long":12345.678,"odd\"key":"v"}"# + "\n")
    }

    @Test func aTimestampsSecondIsMadeOnceAndFollowsTheClock() {
        var second = JSONLine.Second()
        var bytes: [UInt8] = []
        // 2026-11-22T23:59:59.125Z, the same second, the next second (the next day), a month on
        // (fractions a Double holds exactly).
        let base = 1_795_391_999.125
        for seconds in [base, base + 0.75, base + 0.875, base + 86_400 * 31 + 0.5] {
            JSONLine.appendTimestamp(Date(timeIntervalSince1970: seconds), to: &bytes, second: &second)
            bytes.append(UInt8(ascii: " "))
        }
        #expect(String(decoding: bytes, as: UTF8.self)
            == "2026-11-22T23:59:59.125Z 2026-11-22T23:59:59.875Z 2026-11-23T00:00:00.000Z 2026-12-23T23:59:59.625Z ")
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
