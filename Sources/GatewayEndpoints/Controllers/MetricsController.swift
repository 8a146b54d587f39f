import GatewayObservability
import Hummingbird

/// `GET /metrics` on the admin listener, in Prometheus text format.
struct MetricsController<Context: RequestContext> {
    func addRoutes(to router: Router<Context>) {
        router.get("/metrics") { _, _ in
            Response(
                status: .ok,
                headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(bytes: GatewayMetrics.prometheusText()))
            )
        }
    }
}
