import Foundation
import GatewayConfiguration
import GatewayPrimitives

/// What the access log says about one finished request, and the one function that turns it
/// into a line (for the proxy engine and for Hummingbird's requests alike).
///
/// Only ids and labels: the route is the matched route, never the path (paths and queries can
/// carry phone numbers or tokens), and the caller is a user or partner id, never a token or key.
package struct AccessLogRecord {
    package var listener: String
    package var requestID: String
    package var method: String
    /// The route label of ``RouteLabel``.
    package var route: String
    package var status: Int
    package var duration: Duration
    /// The client's address as ``ClientAddress`` resolves it.
    package var client: String?
    package var userID: String?
    package var partnerID: String?
    /// The API key's id on `api_key` routes (never the key).
    package var keyID: String?
    /// How authentication ended: `ok`, `none` (an `auth: none` route) or the refusal's code
    /// (`INVALID_TOKEN`, ...); nil where the request is not authenticated by the gateway.
    package var auth: String?
    /// From sending the request upstream to the upstream's response head.
    package var upstreamDuration: Duration?
    /// Request and response body bytes.
    package var bytesIn: Int
    package var bytesOut: Int
    /// The request's trace id, when tracing is on.
    package var traceID: String?
    /// Proxied requests: the upstream targets tried (more than 1 after retries), and the one
    /// whose response the client got.
    package var tries: Int
    package var upstream: String?
    /// The authorization listener's answer to an edge or a service: `allowed` or `refused`
    /// (its reason is ``auth``); nil elsewhere.
    package var decision: String?

    package init(listener: String, requestID: String, method: String, route: String, status: Int, duration: Duration, client: String? = nil, userID: String? = nil, partnerID: String? = nil, auth: String? = nil, upstreamDuration: Duration? = nil, bytesIn: Int, bytesOut: Int, traceID: String? = nil, tries: Int = 0, upstream: String? = nil) {
        self.listener = listener
        self.requestID = requestID
        self.method = method
        self.route = route
        self.status = status
        self.duration = duration
        self.client = client
        self.userID = userID
        self.partnerID = partnerID
        self.auth = auth
        self.upstreamDuration = upstreamDuration
        self.bytesIn = bytesIn
        self.bytesOut = bytesOut
        self.traceID = traceID
        self.tries = tries
        self.upstream = upstream
    }

    /// Appends the line to `buffer` in `format`; `second` is the timestamp's current second,
    /// kept by the writer from line to line.
    package func write(to buffer: inout [UInt8], format: GatewayConfig.Log.Format, second: inout JSONLine.Second) {
        switch format {
        case .json:
            var line = JSONLine(appendingTo: &buffer)
            line.timestamp(second: &second)
            line.members(#""level":"info","logger":"access","msg":"request""#)
            line.string("listener", listener)
            line.string("request_id", requestID)
            if let traceID { line.string("trace_id", traceID) }
            line.string("method", method)
            line.string("route", route)
            line.integer("status", status)
            line.milliseconds("duration_ms", duration)
            if let upstreamDuration { line.milliseconds("upstream_ms", upstreamDuration) }
            if let client { line.string("client", client) }
            if let auth { line.string("auth", auth) }
            if let userID { line.string("user_id", userID) }
            if let partnerID { line.string("partner_id", partnerID) }
            if let keyID { line.string("key_id", keyID) }
            if let decision { line.string("decision", decision) }
            line.integer("bytes_in", bytesIn)
            line.integer("bytes_out", bytesOut)
            if tries > 0 { line.integer("tries", tries) }
            if let upstream { line.string("upstream", upstream) }
            line.finish(into: &buffer)
        case .text:
            JSONLine.appendTimestamp(Date(), to: &buffer, second: &second)
            var text = " info access: request listener=\(listener) request_id=\(requestID)\(traceID.map { " trace_id=\($0)" } ?? "") method=\(method) route=\(route) status=\(status)"
            text += " duration_ms=\(Self.milliseconds(duration))"
            if let upstreamDuration { text += " upstream_ms=\(Self.milliseconds(upstreamDuration))" }
            if let client { text += " client=\(client)" }
            if let auth { text += " auth=\(auth)" }
            if let userID { text += " user_id=\(userID)" }
            if let partnerID { text += " partner_id=\(partnerID)" }
            if let keyID { text += " key_id=\(keyID)" }
            if let decision { text += " decision=\(decision)" }
            text += " bytes_in=\(bytesIn) bytes_out=\(bytesOut)"
            if tries > 0 { text += " tries=\(tries)" }
            if let upstream { text += " upstream=\(upstream)" }
            text += "\n"
            buffer.append(contentsOf: text.utf8)
        }
    }

    private static func milliseconds(_ duration: Duration) -> String {
        String(format: "%.3f", duration.inSeconds * 1000)
    }
}
