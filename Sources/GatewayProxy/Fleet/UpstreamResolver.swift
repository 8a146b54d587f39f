import GatewayConfiguration
import Logging
import ServiceLifecycle

/// Looks up the host names that upstream targets are named by, at start and every
/// `server.upstream_dns_refresh`, and compiles the routes again when an answer changed
/// (``RouteTable/resolved(_:)``): instances that come and go behind one DNS name are followed
/// without a reload. Requests already under way keep the targets they started with.
package struct UpstreamResolver: Service {
    private let routes: RouteTable
    private let interval: Duration
    private let logger: Logger
    private let lookUp: @Sendable (String) -> [String]

    package init(
        routes: RouteTable, interval: Duration, logger: Logger,
        lookUp: @escaping @Sendable (String) -> [String] = UpstreamAddresses.lookUp
    ) {
        self.routes = routes
        self.interval = interval
        self.logger = logger
        self.lookUp = lookUp
    }

    package func run() async throws {
        try? await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                await refresh()
                try await Task.sleep(for: interval)
            }
        }
    }

    /// One round: every host name looked up, the routes compiled again if anything moved.
    package func refresh() async {
        let hosts = routes.hostNames
        guard !hosts.isEmpty || !routes.addresses.byHost.isEmpty else { return }
        let next = await routes.addresses.refreshed(hosts, lookUp: lookUp)
        do {
            if try routes.resolved(next) {
                logger.notice("upstream addresses changed", metadata: [
                    "addresses": .string(next.byHost.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value.joined(separator: ","))" }.joined(separator: " "))
                ])
            }
        } catch {
            logger.error("upstream routes not compiled with new addresses", metadata: ["error": .string("\(error)")])
        }
    }
}
