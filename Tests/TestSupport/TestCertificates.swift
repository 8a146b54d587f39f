import Foundation

/// A throwaway certificate authority in a temporary directory, issuing certificates with the
/// `openssl` CLI for TLS tests: valid or expired, for whichever names, P-256 keys.
public final class TestCertificates: Sendable {
    /// A certificate file with the key file that goes with it.
    public struct Issued: Sendable {
        public let certFile: String
        public let keyFile: String

        public init(certFile: String, keyFile: String) {
            self.certFile = certFile
            self.keyFile = keyFile
        }
    }

    public let directory: String
    /// The CA's certificate: what clients (curl, the gateway's `tls.ca_file`) trust.
    public let caFile: String
    private let caKeyFile: String
    private let folder: TemporaryFolder

    /// A new CA named `name`, valid from yesterday for a few days.
    public init(name: String = "Test CA") async throws {
        folder = try TemporaryFolder("pg-tls")
        directory = folder.path
        caFile = "\(directory)/ca.pem"
        caKeyFile = "\(directory)/ca.key"
        try Self.caConfig.write(toFile: "\(directory)/ca.cnf", atomically: true, encoding: .utf8)
        try "".write(toFile: "\(directory)/index.txt", atomically: true, encoding: .utf8)
        try "01\n".write(toFile: "\(directory)/serial", atomically: true, encoding: .utf8)
        try await Self.openssl([
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", caKeyFile, "-out", caFile, "-days", "3", "-subj", "/CN=\(name)",
        ])
    }

    /// A certificate for `names` (IP addresses and DNS names, as subject alternative names),
    /// signed by this CA, usable by servers and clients. `expired`: it ended a year ago.
    public func issue(_ file: String, names: [String] = ["127.0.0.1", "localhost"], expired: Bool = false) async throws -> Issued {
        let issued = Issued(certFile: "\(directory)/\(file).pem", keyFile: "\(directory)/\(file).key")
        let request = "\(directory)/\(file).csr"
        let extensions = "\(directory)/\(file).ext"
        let sans = names.map { $0.first?.isNumber == true ? "IP:\($0)" : "DNS:\($0)" }.joined(separator: ",")
        try "subjectAltName=\(sans)\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth,clientAuth\n"
            .write(toFile: extensions, atomically: true, encoding: .utf8)
        try await Self.openssl(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-out", issued.keyFile])
        try await Self.openssl(["req", "-new", "-key", issued.keyFile, "-subj", "/CN=\(file)", "-out", request])
        let now = Date()
        let (start, end) = expired
            ? (now.addingTimeInterval(-400 * 86_400), now.addingTimeInterval(-365 * 86_400))
            : (now.addingTimeInterval(-86_400), now.addingTimeInterval(2 * 86_400))
        try await Self.openssl([
            "ca", "-batch", "-config", "\(directory)/ca.cnf", "-cert", caFile, "-keyfile", caKeyFile,
            "-in", request, "-out", issued.certFile, "-notext", "-extfile", extensions,
            "-startdate", Self.asn1Time(start), "-enddate", Self.asn1Time(end),
        ], in: directory)
        return issued
    }

    /// `openssl ca` keeps its database next to its configuration; run it from there.
    private static let caConfig = """
        [ca]
        default_ca = test
        [test]
        database = index.txt
        new_certs_dir = .
        serial = serial
        default_md = sha256
        policy = anything
        unique_subject = no
        copy_extensions = none
        [anything]
        commonName = supplied

        """

    private static func asn1Time(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMddHHmmss'Z'"
        return formatter.string(from: date)
    }

    private static func openssl(_ arguments: [String], in directory: String? = nil) async throws {
        let result: ShortCommandResult
        if let directory {
            result = try await ShortCommand.run("/bin/sh", ["-c", "cd \"$0\" && exec openssl \"$@\"", directory] + arguments)
        } else {
            result = try await ShortCommand.run("/usr/bin/openssl", arguments)
        }
        guard result.status == 0 else { throw OpenSSLFailed(arguments: arguments, stderr: result.stderr) }
    }
}

public struct OpenSSLFailed: Error, CustomStringConvertible {
    public let arguments: [String]
    public let stderr: String
    public var description: String { "openssl \(arguments.joined(separator: " ")) failed: \(stderr)" }
}
