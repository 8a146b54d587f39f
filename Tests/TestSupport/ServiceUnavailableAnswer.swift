/// A call answered 503 because Redis did not answer within `redis.timeout`: the gateway did
/// what it must, so in a test's setup it says nothing about what the test checks. The setup
/// helpers (``DriverAPI/login(_:phone:code:)``, ``DriverAPI/createPartner(_:name:rate:burst:)``,
/// ``DriverResponse/available(_:)``) throw it.
public struct ServiceUnavailableAnswer: Error, CustomStringConvertible {
    public let call: String
    public let answer: DriverResponse

    public var description: String { "\(call) answered \(answer)" }

    /// Runs `setUp`, which starts its own processes, again when a call in it answered 503, up
    /// to `attempts` times. For tests that set `redis.timeout` tight (250 ms): on a machine busy
    /// with parallel work a new gateway's first calls (new Redis connections, scripts not yet
    /// loaded) can take longer. A late reply may still have run, so the setup starts over on
    /// fresh processes rather than retrying the call.
    public static func startingOver<T>(attempts: Int = 3, _ setUp: () async throws -> T) async throws -> T {
        var attempt = 1
        while true {
            do {
                return try await setUp()
            } catch let unavailable as ServiceUnavailableAnswer where attempt < attempts {
                print("setup attempt \(attempt): \(unavailable); starting again on fresh processes")
                attempt += 1
            }
        }
    }
}
