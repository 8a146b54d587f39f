// libFuzzer target: the configuration parser (Sources/GatewayConfiguration). Compiled by
// Fuzz/build.sh into the GatewayConfiguration module.
//
// The input is the YAML file's text. It is parsed, given the secrets through the environment
// as `PartnerGateway` would be, and validated. Any `ConfigError` is a correct answer; a crash
// or a hang is a finding. Configurations naming assertion key files are parsed and validated
// without reading those files (the fuzzer must not read arbitrary paths).
private let environment = [
    "GATEWAY_ADMIN_TOKEN": "fuzz-admin-token-0123456789",
    "GATEWAY_JWT_SECRET": "fuzz-jwt-secret-0123456789abcdef0123456789",
    "GATEWAY_PHONE_KEY": "fuzz-phone-key-0123456789abcdef0123456789",
]

@_cdecl("LLVMFuzzerTestOneInput")
public func configFuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    do {
        var config = try GatewayConfig.parse(yaml: text)
        if config.assertion.signingKeys.isEmpty {
            try config.applyOverrides(from: environment)
        }
        try config.validate()
    } catch {
        _ = error.description
    }
    return 0
}
