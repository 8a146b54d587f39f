import Metrics

/// The counter and timer of each label set, made on first use.
package final class RequestMetricHandles: Sendable {
    package struct Labels: Hashable, Sendable {
        package let route: String
        package let method: String
        package let status: Int

        package init(route: String, method: String, status: Int) {
            self.route = route
            self.method = method
            self.status = status
        }
    }

    private let table: MetricHandleTable<Labels, Handles>

    package init(listener: String) {
        table = MetricHandleTable { labels in
            let dimensions = [
                ("listener", listener),
                ("route", labels.route),
                ("method", labels.method),
                ("status", String(labels.status)),
            ]
            return Handles(
                counter: Counter(label: "gateway_http_requests_total", dimensions: dimensions),
                timer: Metrics.Timer(label: "gateway_http_request_duration_seconds", dimensions: dimensions)
            )
        }
    }

    /// A label set's counter and timer.
    package struct Handles: Sendable {
        package let counter: Counter
        package let timer: Metrics.Timer
    }

    /// `gateway_http_requests_in_flight` of `listener`.
    package static func inFlight(listener: String) -> Meter {
        Meter(label: "gateway_http_requests_in_flight", dimensions: [("listener", listener)])
    }

    package func handles(for labels: Labels) -> Handles {
        table.handle(for: labels)
    }
}
