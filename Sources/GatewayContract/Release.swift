/// The release this source tree is, shared by the gateway (`PartnerGateway --version`,
/// `gateway_build_info`) and `gatewayctl version`: both ship together, so they carry one
/// number. The commit each binary was built from comes from the build plugin.
public enum Release {
    public static let version = "1.0.0"
}
