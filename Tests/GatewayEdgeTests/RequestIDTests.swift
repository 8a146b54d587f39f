import Dispatch
@testable import GatewayEdge
import Synchronization
import Testing

/// ``RequestIDMiddleware``'s ids: unique across threads, whatever block of counts each takes.
@Suite("Request ids")
struct RequestIDTests {
    @Test("ids made on many threads at once are all distinct, sane and 32 hex characters")
    func idsAreUniqueAcrossThreads() {
        let threads = 8
        // More than one block of counts per thread.
        let perThread = 3000
        let ids = Mutex([String]())
        DispatchQueue.concurrentPerform(iterations: threads) { _ in
            let made = (0..<perThread).map { _ in RequestID.generate() }
            ids.withLock { $0 += made }
        }
        let all = ids.withLock { $0 }
        #expect(all.count == threads * perThread)
        #expect(Set(all).count == all.count)
        #expect(all.allSatisfy { $0.utf8.count == 32 && RequestID.isSane($0) && $0.allSatisfy(\.isHexDigit) })
    }
}
