// libFuzzer target: request-target normalisation (Sources/GatewayPrimitives/RequestPath.swift).
// Compiled by Fuzz/build.sh into a module named PartnerGateway with the file it needs.
//
// Whatever the input, normalising must not crash, and what it lets through must be what
// routing relies on: a path starting with "/", with no dot segment, no empty segment, no
// encoded or raw (back)slash and no control byte, which normalising again leaves unchanged.

@_cdecl("LLVMFuzzerTestOneInput")
public func requestPathFuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let target = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    switch RequestPath.normalize(target: target) {
    case .refused:
        break
    case .unchanged:
        if target != "*" { checkCanonical(target) }
    case .rewritten(let rewritten, _):
        checkCanonical(rewritten)
        precondition(RequestPath.normalize(target: rewritten) == .unchanged, "normalising is not idempotent: \(rewritten)")
    }
    return 0
}

private func checkCanonical(_ target: String) {
    // Bytes, as the normaliser and every HTTP parser read them, not Characters: a combining
    // mark after "?" or "/" makes one Character of both, which splitting by Character misses.
    let path = Array(target.utf8.prefix { $0 != UInt8(ascii: "?") })
    precondition(path.first == UInt8(ascii: "/"), "not a path: \(target)")
    let segments = path.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).dropFirst()
    for (index, segment) in segments.enumerated() {
        precondition(!segment.isEmpty || index == segments.count - 1, "empty segment: \(target)")
        let bare = segment.prefix { $0 != UInt8(ascii: ";") }
        precondition(!bare.elementsEqual(".".utf8) && !bare.elementsEqual("..".utf8), "dot segment: \(target)")
    }
    let lower = path.map { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") ? $0 + 32 : $0 }
    let escapesSlash = lower.indices.contains { lower[$0...].starts(with: "%2f".utf8) || lower[$0...].starts(with: "%5c".utf8) }
    precondition(!escapesSlash && !path.contains(UInt8(ascii: "\\")), "slash escape: \(target)")
    precondition(!path.contains { $0 < 0x20 || $0 == 0x7F }, "control byte: \(target)")
    precondition(!path.contains(UInt8(ascii: "#")), "fragment: \(target)")
}
