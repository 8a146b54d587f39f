import GatewayConfiguration
import GatewayObservability
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle

/// Active health checks of every route that configures `health_check`: each target gets
/// `GET path` every `interval`, and ``HealthVerdict`` decides when it leaves and rejoins its
/// fleet. It follows the route table: a reload's new fleets are checked from the next
/// look, the old ones' checks stop. Upstream health never touches `/readyz`. It also keeps
/// `gateway_upstream_target_healthy` of fleets without checks up to date with ejections.
package struct UpstreamHealthChecks: Service {
    private let routes: RouteTable
    private let group: any EventLoopGroup
    private let logger: Logger
    /// How often the route table is looked at for fleets added or gone by a reload.
    package var lookInterval = Duration.seconds(1)

    package init(routes: RouteTable, group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton, logger: Logger) {
        self.routes = routes
        self.group = group
        self.logger = logger
    }

    package func run() async throws {
        do {
            try await supervise()
        } catch is CancellationError {
            // The graceful shutdown: checks simply stop.
        }
    }

    private func supervise() async throws {
        try await cancelWhenGracefulShutdown {
            var running: [ObjectIdentifier: Task<Void, Never>] = [:]
            defer { for task in running.values { task.cancel() } }
            while !Task.isCancelled {
                let current = routes.all.filter { $0.fleet.healthCheck != nil }
                let ids = Set(current.map { ObjectIdentifier($0.fleet) })
                for (id, task) in running where !ids.contains(id) {
                    task.cancel()
                    running[id] = nil
                }
                for route in current where running[ObjectIdentifier(route.fleet)] == nil {
                    running[ObjectIdentifier(route.fleet)] = Task { await Self.check(route, group: group, logger: logger) }
                }
                // Ejections come and go with requests; the gauge follows them here.
                for route in routes.all where !route.fleet.isSingle && route.fleet.healthCheck == nil {
                    for target in route.fleet.targets {
                        route.metrics.health(target: target.url, available: route.fleet.isAvailable(target.index))
                    }
                }
                try await Task.sleep(for: lookInterval)
            }
        }
    }

    /// Checks `route`'s targets every interval until cancelled.
    private static func check(_ route: ProxyRoute, group: any EventLoopGroup, logger: Logger) async {
        guard let settings = route.fleet.healthCheck else { return }
        let fleet = route.fleet
        var verdicts = fleet.targets.map { _ in HealthVerdict(healthy: settings.healthy, unhealthy: settings.unhealthy) }
        for target in fleet.targets { route.metrics.health(target: target.url, available: fleet.isAvailable(target.index)) }
        while !Task.isCancelled {
            let loop = group.next()
            let results = await withTaskGroup(of: (Int, UpstreamHealthProbe.Result).self) { tasks in
                for target in fleet.targets {
                    tasks.addTask {
                        let result = try? await UpstreamHealthProbe.check(
                            target, path: settings.path, timeout: TimeAmount(settings.timeout.duration), on: loop
                        ).get()
                        return (target.index, result ?? .refused)
                    }
                }
                var results: [(Int, UpstreamHealthProbe.Result)] = []
                for await result in tasks { results.append(result) }
                return results
            }
            // A reload may have replaced this fleet while its probes ran: its gauges are gone.
            guard !Task.isCancelled else { return }
            for (index, result) in results {
                let target = fleet.targets[index]
                if result != .passed { route.metrics.healthCheckFailed(target: target.url, kind: result.kind) }
                if verdicts[index].record(passed: result == .passed) {
                    fleet.setHealthy(index, verdicts[index].isHealthy)
                    logger.warning(
                        verdicts[index].isHealthy ? "upstream target healthy again" : "upstream target unhealthy",
                        metadata: ["route": .string(route.name), "target": .string(target.url), "check": .string(result.kind)]
                    )
                }
                route.metrics.health(target: target.url, available: fleet.isAvailable(index))
            }
            try? await Task.sleep(for: settings.interval.duration)
        }
    }
}
