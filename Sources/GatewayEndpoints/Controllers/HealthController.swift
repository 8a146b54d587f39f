import GatewayEdge
import Hummingbird
import RedisClient

/// `GET /healthz` (the process is up) and `GET /readyz` (it can use Redis) on the public
/// listener; `GET /v1/status` on the admin listener, with the detail.
///
/// A load balancer should route on `/readyz`: while Redis is unreachable the gateway cannot
/// log anyone in, so it says 503 and is taken out of rotation, and it says 200 again as soon
/// as Redis is back, without a restart. It answers from ``RedisReadiness`` (what the gateway
/// already tracks), with no Redis call per probe, and names no host or port: anyone who can
/// reach the public listener can call it. The topology is for operators, on the admin listener.
struct HealthController<Context: RequestContext> {
    let readiness: RedisReadiness
    let redis: RedisConnectionPool
    /// How long `/readyz` may wait for the first word on Redis just after start-up.
    let startupWait: Duration

    func addRoutes(to router: Router<Context>) {
        router.get("/healthz") { _, _ in
            StatusBody(status: "ok")
        }
        router.get("/readyz") { _, _ -> StatusBody in
            guard await readiness.isReady(waitingUpTo: startupWait) else {
                throw GatewayError(.serviceUnavailable, "SERVICE_UNAVAILABLE", "redis is not reachable")
            }
            return StatusBody(status: "ready")
        }
    }

    /// `GET /v1/status` (admin, behind its token): ready or not, and on which Redis. Always
    /// `200`: it describes the state, the public `/readyz` is the probe.
    func addStatusRoute(to group: RouterGroup<Context>) {
        group.get("status") { _, _ -> AdminStatusBody in
            let topology = redis.topology
            let ready = await readiness.isReady(waitingUpTo: startupWait)
            return AdminStatusBody(
                status: ready ? "ready" : "not_ready",
                redis: .init(
                    mode: topology.mode, primaries: topology.primaries,
                    subscription: readiness.subscription.rawValue, uncoveredSlots: readiness.uncoveredSlots
                )
            )
        }
    }
}

struct StatusBody: ResponseEncodable {
    let status: String
}

/// The admin listener's `/v1/status`: ready or not, and on which Redis.
struct AdminStatusBody: ResponseEncodable {
    struct Redis: Encodable {
        /// standalone, sentinel or cluster.
        let mode: String
        /// `host:port` of each primary in use (one unless on a cluster).
        let primaries: [String]
        /// The invalidation subscription readiness follows: up, down, or unknown (starting).
        let subscription: String
        /// Cluster slots no known primary serves (0 when not on a cluster).
        let uncoveredSlots: Int

        enum CodingKeys: String, CodingKey {
            case mode, primaries, subscription
            case uncoveredSlots = "uncovered_slots"
        }
    }

    let status: String
    let redis: Redis
}
