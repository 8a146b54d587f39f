import Hummingbird
import Logging
import ServiceLifecycle

/// The public listener's application: Hummingbird's test framework drives its `responder` and
/// `services`, and running it runs those services with the ``GatewayListener`` (not
/// Hummingbird's server) last, so the listener drains first at shutdown.
package struct GatewayApplication<Responder: HTTPResponder>: ApplicationProtocol
where Responder.Context: InitializableFromSource<ApplicationRequestContextSource> {
    package let responder: Responder
    package let services: [any Service]
    package let logger: Logger
    private let listener: GatewayListener

    package init(responder: Responder, listener: GatewayListener, services: [any Service], logger: Logger) {
        self.responder = responder
        self.listener = listener
        self.services = services
        self.logger = logger
    }

    package func run() async throws {
        try await ServiceGroup(configuration: .init(services: services + [listener], logger: logger)).run()
    }
}
