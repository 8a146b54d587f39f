import Foundation
import Testing
import TestSupport

@testable import GatewayEdge

/// What the certificate watcher compares: the file a path leads to, so a file renamed over the
/// old one and a Kubernetes-style symlink swap both count as a change, and nothing else does.
@Suite struct CertificateFileStampTests {
    @Test func aFileRenamedOverTheOldOneIsAChange() throws {
        let folder = try TemporaryFolder("pg-stamp")
        let path = folder.path("tls.crt")
        try "first".write(toFile: path, atomically: false, encoding: .utf8)
        let before = CertificateFileStamp.File(path)
        #expect(CertificateFileStamp.File(path) == before, "unchanged")
        try "other".write(toFile: path, atomically: true, encoding: .utf8)
        #expect(CertificateFileStamp.File(path) != before, "same size, new inode")
    }

    /// A mounted secret: `tls.crt -> ..data/tls.crt`, `..data -> ..2026_1`; an update makes a new
    /// folder and swaps `..data`, so the links the gateway's path names never change.
    @Test func aSymlinkSwapOfTheFolderBehindTheLinksIsAChange() throws {
        let folder = try TemporaryFolder("pg-stamp")
        let manager = FileManager.default
        for (version, text) in [("..2026_1", "first certificate"), ("..2026_2", "second certificate")] {
            try manager.createDirectory(atPath: folder.path(version), withIntermediateDirectories: false)
            try text.write(toFile: folder.path(version) + "/tls.crt", atomically: false, encoding: .utf8)
        }
        try manager.createSymbolicLink(atPath: folder.path("..data"), withDestinationPath: "..2026_1")
        try manager.createSymbolicLink(atPath: folder.path("tls.crt"), withDestinationPath: "..data/tls.crt")
        let before = CertificateFileStamp.File(folder.path("tls.crt"))
        #expect(before.size == UInt64("first certificate".utf8.count), "the file behind the links, not a link")

        try manager.createSymbolicLink(atPath: folder.path("..data_tmp"), withDestinationPath: "..2026_2")
        #expect(rename(folder.path("..data_tmp"), folder.path("..data")) == 0)
        #expect(CertificateFileStamp.File(folder.path("tls.crt")) != before)
    }
}
