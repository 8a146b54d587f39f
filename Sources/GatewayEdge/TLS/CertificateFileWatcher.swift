import ServiceLifecycle

/// Reloads a listener's certificate when its files change on disk (a renewal by certbot or
/// a secrets agent), polling their modification time, size and inode.
///
/// Polling rather than inotify: certificate files are usually replaced by renaming a new file
/// over the old, often through a symlink swap (Kubernetes secrets), which inotify on the old
/// path does not report; a stat per second per file costs nothing.
package struct CertificateFileWatcher: Service {
    package let stores: [CertificateStore]

    package init(stores: [CertificateStore]) {
        self.stores = stores
    }
    package var interval = Duration.seconds(1)

    package func run() async throws {
        guard !stores.isEmpty else {
            // Nothing to watch; a service that returned would end the whole group.
            try await gracefulShutdown()
            return
        }
        try await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                // The shutdown cancels the sleep: ending with its error would cancel the
                // services still draining (and exit 1), so the watcher just ends.
                do { try await Task.sleep(for: interval) } catch { return }
                for store in stores { store.reloadIfChanged() }
            }
        }
    }
}
