import Hummingbird
import RedisClient

/// `GET /healthz` (the process is up) and `GET /readyz` (it can reach Redis).
///
/// A load balancer should route on `/readyz`: while Redis is unreachable the gateway cannot
/// log anyone in, so it says 503 and is taken out of rotation, and it says 200 again as soon
/// as a `PING` answers, without a restart.
struct HealthController<Context: RequestContext> {
    let redis: RedisConnectionPool

    func addRoutes(to router: Router<Context>) {
        router.get("/healthz") { _, _ in
            StatusBody(status: "ok")
        }
        router.get("/readyz") { _, _ -> StatusBody in
            do {
                try await redis.ping()
            } catch {
                throw GatewayError(.serviceUnavailable, "SERVICE_UNAVAILABLE", "redis is not reachable")
            }
            return StatusBody(status: "ready")
        }
    }
}

struct StatusBody: ResponseEncodable {
    let status: String
}
