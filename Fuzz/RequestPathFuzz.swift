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
    let path = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)[0]
    precondition(path.utf8.first == UInt8(ascii: "/"), "not a path: \(target)")
    let segments = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
    for (index, segment) in segments.enumerated() {
        precondition(!segment.isEmpty || index == segments.count - 1, "empty segment: \(target)")
        let bare = segment.prefix { $0 != ";" }
        precondition(bare != "." && bare != "..", "dot segment: \(target)")
    }
    let lower = path.lowercased()
    precondition(!lower.contains("%2f") && !lower.contains("%5c") && !path.contains("\\"), "slash escape: \(target)")
    precondition(!path.utf8.contains { $0 < 0x20 || $0 == 0x7F }, "control byte: \(target)")
    precondition(!path.contains("#"), "fragment: \(target)")
}
