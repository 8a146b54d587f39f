import NIOHTTP1

/// The rules every request head passes before anything routes it: the proxy engine,
/// Hummingbird's router, the proxy's route table and `strip_prefix` all see only what this
/// lets through, on both listeners. ``ClientProtectionHandler`` applies them to each head.
///
/// Kept apart from the proxy engines so each rule exists once, whichever engine forwards:
/// - the target's path is made canonical (``RequestPath``): routes match, and upstreams
///   receive, the path an upstream framework would resolve, never a raw one that could
///   slip under an open route;
/// - a request carries at most one credential: two `Authorization` or two `X-API-Key`
///   fields are refused rather than one of them picked (which one a component picks differs:
///   the first, the last, or both joined).
enum RequestHeadRules {
    /// `head` as it goes on (its target canonical, `Host` set from an absolute-form target),
    /// or the `400 INVALID_REQUEST` that refuses it.
    static func admit(_ head: HTTPRequestHead) -> Result<HTTPRequestHead, GatewayError> {
        if let duplicate = repeatedCredential(in: head.headers) {
            return .failure(.invalidRequest("more than one \(duplicate) header"))
        }
        switch RequestPath.normalize(target: head.uri) {
        case .unchanged:
            return .success(head)
        case .rewritten(let target, let host):
            var admitted = head
            admitted.uri = target
            if let host { admitted.headers.replaceOrAdd(name: "Host", value: host) }
            return .success(admitted)
        case .refused(let refusal):
            return .failure(.invalidRequest(refusal.description))
        }
    }

    /// The credential field that appears more than once, if any. One pass, no allocation.
    private static func repeatedCredential(in headers: HTTPHeaders) -> String? {
        var authorizations = 0
        var apiKeys = 0
        for (name, _) in headers {
            if HeaderName.equals(name, "authorization") {
                authorizations += 1
            } else if HeaderName.equals(name, "x-api-key") {
                apiKeys += 1
            }
        }
        if authorizations > 1 { return "Authorization" }
        if apiKeys > 1 { return "X-API-Key" }
        return nil
    }
}
