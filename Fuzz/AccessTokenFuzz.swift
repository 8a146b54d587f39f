// libFuzzer target: the access-token parser and verifier (DriverTokens). Compiled into the
// DriverTokens module by Fuzz/build.sh.
//
// The first input byte picks the mode:
//   even: the rest of the input is presented as the token text, as a client could send it;
//   odd:  the rest is the JWT payload (and, after a 0x00 byte, the header) of a token that is
//         correctly HS256-signed with the verifier's key, so claim decoding and the header
//         checks behind the signature are fuzzed too.
// Any crash, or a token accepted whose claims break the verifier's own rules, is a finding.
import Crypto
import Dispatch
import Foundation

private let fuzzSecret = Array("fuzz-secret-0123456789abcdef-0123456789abcdef".utf8)
private let fuzzIssuer = "partner-gateway-fuzz"

private final class Box: @unchecked Sendable { var verifier: AccessTokenVerifier? }
private let box: Box = {
    let box = Box()
    let done = DispatchSemaphore(value: 0)
    Task {
        let key = try! AccessTokenSigningKey(kid: "k1", secret: fuzzSecret)
        box.verifier = try! await AccessTokenVerifier(keys: [key], issuer: fuzzIssuer, leeway: 5, cacheCapacity: 16)
        done.signal()
    }
    done.wait()
    return box
}()

private func base64URL(_ bytes: some Sequence<UInt8>) -> String {
    Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
        .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
}

@_cdecl("LLVMFuzzerTestOneInput")
public func accessTokenFuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let token: String
    if bytes[0] & 1 == 0 {
        token = String(decoding: bytes.dropFirst(), as: UTF8.self)
    } else {
        let rest = bytes.dropFirst()
        let payload: ArraySlice<UInt8>
        var header = Array(#"{"alg":"HS256","kid":"k1","typ":"JWT"}"#.utf8)
        if let zero = rest.firstIndex(of: 0) {
            payload = rest[rest.startIndex..<zero]
            header = Array(rest[(zero + 1)...])
        } else {
            payload = rest
        }
        let input = base64URL(header) + "." + base64URL(payload)
        let mac = HMAC<SHA256>.authenticationCode(for: Array(input.utf8), using: SymmetricKey(data: fuzzSecret))
        token = input + "." + base64URL(Array(mac))
    }
    let verifier = box.verifier!
    let done = DispatchSemaphore(value: 0)
    Task {
        defer { done.signal() }
        let now = Date()
        if let claims = try? await verifier.verify(token, now: now) {
            // Whatever is accepted must be unexpired and of the configured issuer.
            precondition(claims.expiresAt.timeIntervalSince(now) > -5, "accepted an expired token")
            precondition(claims.issuer == fuzzIssuer, "accepted a foreign issuer")
        }
    }
    done.wait()
    return 0
}
