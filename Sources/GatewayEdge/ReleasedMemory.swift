import CMalloc
import Dispatch
import Synchronization

/// Gives the memory a burst of closed or parked client connections freed back to the system.
///
/// glibc's allocator keeps freed pages for reuse (per-thread arenas, far below their top), so
/// after a flood of connections (300 HTTP/2 connections of 100 streams each held ~35 MB) the
/// process stayed at its high-water mark for good. After every 64 connections closed or parked
/// (``ConnectionParking``), one `malloc_trim` runs a quarter of a second later (the rest of a
/// burst closes meanwhile), on a Dispatch thread, never an event loop, and at most once a
/// second.
package final class ReleasedMemory: Sendable {
    package static let shared = ReleasedMemory()

    private static let closesPerTrim = 64
    private let closesSinceTrim = Atomic<Int>(0)
    private let trimScheduled = Atomic<Bool>(false)

    /// A client connection closed, or was parked.
    package func connectionReleased() {
        let closes = closesSinceTrim.wrappingAdd(1, ordering: .relaxed).newValue
        guard closes >= Self.closesPerTrim, !trimScheduled.exchange(true, ordering: .acquiring) else { return }
        DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + .milliseconds(250)) {
            self.closesSinceTrim.store(0, ordering: .relaxed)
            malloc_trim(0)
            DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + .seconds(1)) {
                self.trimScheduled.store(false, ordering: .releasing)
            }
        }
    }
}
