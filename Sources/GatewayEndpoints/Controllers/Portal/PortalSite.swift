import Foundation
import GatewayConfiguration
import NIOCore
import NIOFoundationCompat

/// The portal's pages: the static files shipped in this library's resources (`Portal/`: HTML,
/// CSS and JavaScript, no build step) and Debian's Chart.js (`libjs-chart.js`), all read once
/// at start and served from memory (docs/portal.md). Nothing comes from outside the gateway.
package struct PortalSite: Sendable {
    struct File: Sendable {
        let body: ByteBuffer
        let contentType: String
    }

    /// By name under `/portal/` (`index.html`, `portal.js`, ...).
    let files: [String: File]

    /// The code webhook's deadline: a code request is answered before its delivery, so this
    /// only bounds how long a delivery may hold a connection.
    package static let codeWebhookTimeout = Duration.seconds(5)

    /// Where Debian's `libjs-chart.js` puts the library; served as `/portal/chart.min.js`
    /// unless the pages' folder holds its own copy (a release archive or image carries one).
    package static let chartLibrary = "/usr/share/javascript/chart.js/chart.min.js"

    /// Reads every file, or fails naming the missing one: a portal without its pages or its
    /// chart must not start half working.
    package static func load(chartLibrary: String = PortalSite.chartLibrary) throws -> PortalSite {
        // SwiftPM's accessor stops the process when the bundle is not beside the binary (where
        // builds, the release archive and the image put it): ask first, and fail as configuration.
        let bundle = Bundle.main.bundleURL.appendingPathComponent(resourceBundle)
        guard FileManager.default.fileExists(atPath: bundle.path), let folder = Bundle.module.url(forResource: "Portal", withExtension: nil),
            let names = try? FileManager.default.contentsOfDirectory(atPath: folder.path)
        else {
            throw ConfigError(key: "portal.enabled", "the portal's pages are missing: keep the gateway's resource folder beside its binary (docs/portal.md)")
        }
        var files: [String: File] = [:]
        for name in names {
            guard let type = contentTypes[(name as NSString).pathExtension], let data = FileManager.default.contents(atPath: folder.appendingPathComponent(name).path)
            else { continue }
            files[name] = File(body: ByteBuffer(data: data), contentType: type)
        }
        if files["chart.min.js"] == nil {
            guard let chart = FileManager.default.contents(atPath: chartLibrary) else {
                throw ConfigError(key: "portal.enabled", "needs Debian's libjs-chart.js, and \(chartLibrary) is missing: apt-get install libjs-chart.js")
            }
            files["chart.min.js"] = File(body: ByteBuffer(data: chart), contentType: contentTypes["js"]!)
        }
        return PortalSite(files: files)
    }

    /// The folder SwiftPM makes of this library's resources, beside the executable.
    static let resourceBundle = "partner-gateway_GatewayEndpoints.resources"

    private static let contentTypes = [
        "html": "text/html; charset=utf-8", "css": "text/css; charset=utf-8", "js": "text/javascript; charset=utf-8", "svg": "image/svg+xml",
    ]
}
