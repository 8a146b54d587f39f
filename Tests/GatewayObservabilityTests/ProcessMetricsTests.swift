import Foundation
import Testing
@testable import GatewayObservability

@Suite("Process metrics: /proc files read whole")
struct ProcessMetricsTests {
    /// A read by size stops a proc file at its first page (4,096 bytes); a test process's
    /// memory map is always longer than that.
    @Test func aProcFileIsReadPastItsFirstPage() throws {
        let whole = try #require(ProcessMetrics.procText("/proc/self/maps"))
        #expect(whole.utf8.count > 4096)
        #expect(whole.hasSuffix("\n"))
    }

    @Test func bootTimeIsFoundInProcStat() throws {
        let text = try #require(ProcessMetrics.procText("/proc/stat"))
        #expect(text.split(separator: "\n").contains { $0.hasPrefix("btime ") })
    }
}
