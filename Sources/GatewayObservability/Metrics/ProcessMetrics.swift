import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Prometheus
import Synchronization

/// The standard `process_*` figures (CPU, memory, file descriptors, start time), read from
/// `/proc/self` when `/metrics` is scraped rather than on a timer: they cost nothing between
/// scrapes and are always current.
package final class ProcessMetrics: Sendable {
    package static let shared = ProcessMetrics(registry: GatewayMetrics.registry)

    private let cpuSeconds: Prometheus.Counter
    private let residentBytes: Gauge
    private let virtualBytes: Gauge
    private let openFDs: Gauge
    private let maxFDs: Gauge
    private let startTime: Gauge
    /// CPU seconds already added to the counter (it can only grow by the difference).
    private let cpuReported = Mutex(0.0)

    private init(registry: PrometheusCollectorRegistry) {
        func gauge(_ name: String) -> Gauge { registry.makeGauge(name: name, help: MetricHelp.text(for: name)) }
        cpuSeconds = registry.makeCounter(name: "process_cpu_seconds_total", help: MetricHelp.text(for: "process_cpu_seconds_total"))
        residentBytes = gauge("process_resident_memory_bytes")
        virtualBytes = gauge("process_virtual_memory_bytes")
        openFDs = gauge("process_open_fds")
        maxFDs = gauge("process_max_fds")
        startTime = gauge("process_start_time_seconds")
        startTime.set(Self.startTimeSeconds() ?? Date().timeIntervalSince1970)
    }

    package func update() {
        if let stat = Self.stat() {
            let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
            let cpu = (stat.userTicks + stat.systemTicks) / ticks
            let delta = cpuReported.withLock { reported -> Double in
                defer { reported = max(reported, cpu) }
                return cpu - reported
            }
            if delta > 0 { cpuSeconds.increment(by: delta) }
            virtualBytes.set(stat.virtualBytes)
            residentBytes.set(stat.residentPages * Double(sysconf(Int32(_SC_PAGESIZE))))
        }
        if let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") {
            openFDs.set(Double(entries.count))
        }
        var limit = rlimit()
        if getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 {
            maxFDs.set(Double(limit.rlim_cur))
        }
    }

    private struct Stat {
        package var userTicks: Double
        package var systemTicks: Double
        package var startTicks: Double
        package var virtualBytes: Double
        package var residentPages: Double
    }

    /// `/proc/self/stat`, whose second field (the command name) may hold spaces: fields are
    /// counted after its closing parenthesis.
    private static func stat() -> Stat? {
        guard let text = procText("/proc/self/stat"),
              let close = text.lastIndex(of: ")")
        else { return nil }
        // After ")": field 3 (state) is at index 0, so field N is at index N - 3.
        let fields = text[text.index(after: close)...].split(separator: " ")
        func field(_ number: Int) -> Double? { fields.count > number - 3 ? Double(fields[number - 3]) : nil }
        guard let user = field(14), let system = field(15), let start = field(22), let virtual = field(23), let resident = field(24) else {
            return nil
        }
        return Stat(userTicks: user, systemTicks: system, startTicks: start, virtualBytes: virtual, residentPages: resident)
    }

    /// Boot time (`btime` in `/proc/stat`) plus the process's start in ticks since boot.
    private static func startTimeSeconds() -> Double? {
        guard let stat = stat(),
              let text = procText("/proc/stat"),
              let line = text.split(separator: "\n").first(where: { $0.hasPrefix("btime ") }),
              let boot = Double(line.dropFirst("btime ".count))
        else { return nil }
        return boot + stat.startTicks / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// A `/proc` file's whole text. Such a file reports no size, and Foundation's read by size
    /// stops at its first page: `/proc/stat`'s `btime` lies past it on a many-core host.
    package static func procText(_ path: String) -> String? {
        guard let file = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? file.close() }
        guard let data = try? file.readToEnd() else { return nil }
        return String(decoding: data ?? Data(), as: UTF8.self)
    }
}
