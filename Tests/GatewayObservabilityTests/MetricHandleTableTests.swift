import Dispatch
@testable import GatewayObservability
import Synchronization
import Testing

/// ``MetricHandleTable``: one handle per label set, whichever thread asks first or how often.
@Suite("Metric handle table")
struct MetricHandleTableTests {
    final class Handle: Sendable {
        let labels: String
        init(_ labels: String) { self.labels = labels }
    }

    @Test("each label set's handle is made once and every thread gets that one, alternating labels or not")
    func oneHandlePerLabelSet() {
        let made = Mutex([String]())
        let table = MetricHandleTable<String, Handle> { labels in
            made.withLock { $0.append(labels) }
            return Handle(labels)
        }
        let first = Mutex([String: ObjectIdentifier]())
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for round in 0..<200 {
                // Alternating and repeated labels: the last-handle shortcut must not answer
                // for labels other than its own.
                let labels = round % 3 == 0 ? "a" : "b\(thread % 2)"
                let handle = table.handle(for: labels)
                #expect(handle.labels == labels)
                first.withLock { identities in
                    let identity = ObjectIdentifier(handle)
                    #expect(identities[labels, default: identity] == identity)
                    identities[labels] = identity
                }
            }
        }
        #expect(made.withLock { $0.sorted() } == ["a", "b0", "b1"])
    }
}
