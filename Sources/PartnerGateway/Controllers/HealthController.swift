import Hummingbird
import RedisClient

/// `GET /healthz` (the process is up) and `GET /readyz` (it can reach Redis).
///
/// A load balancer should route on `/readyz`: while Redis is unreachable the gateway cannot
/// log anyone in, so it says 503 and is taken out of rotation, and it says 200 again as soon
/// as a `PING` answers, without a restart. On a cluster every primary must answer and every
/// slot must have one: a key whose slot has no primary would fail, so the instance is not
/// ready. The body names the topology so an operator sees which primaries it uses.
struct HealthController<Context: RequestContext> {
    let redis: RedisConnectionPool

    func addRoutes(to router: Router<Context>) {
        router.get("/healthz") { _, _ in
            StatusBody(status: "ok")
        }
        router.get("/readyz") { _, _ -> ReadyBody in
            do {
                try await redis.ping()
            } catch {
                throw GatewayError(.serviceUnavailable, "SERVICE_UNAVAILABLE", "redis is not reachable")
            }
            let topology = redis.topology
            return ReadyBody(status: "ready", redis: .init(mode: topology.mode, primaries: topology.primaries))
        }
    }
}

struct StatusBody: ResponseEncodable {
    let status: String
}

/// `/readyz`'s answer: ready, and on which Redis.
struct ReadyBody: ResponseEncodable {
    struct Redis: Encodable {
        /// standalone, sentinel or cluster.
        let mode: String
        /// `host:port` of each primary in use (one unless on a cluster).
        let primaries: [String]
    }

    let status: String
    let redis: Redis
}
