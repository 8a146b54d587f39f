import NIOCore
import Synchronization

/// A listener's idle HTTP/1 connections, parked: a keep-alive connection with nothing
/// outstanding for ``delay`` gives up its HTTP handlers (the parser and its buffers, the
/// connection's state machine, its memo and timers) and keeps only its socket and its
/// ``RequestStartWatcher``, which puts the handlers back at the connection's next byte. While
/// parked, its idle timeout is kept by its event loop's ``ParkedConnections``, one timer per
/// loop instead of one per connection (docs/DECISIONS.md, "Parked idle connections").
package final class ConnectionParking: Sendable {
    /// How long a connection stays idle before it is parked: long enough that a client
    /// sending request after request never is, short enough that a burst of connections
    /// gives its memory back before the next burst needs it.
    package static let delay = TimeAmount.milliseconds(100)

    private let lots = Mutex<[ObjectIdentifier: ParkedConnections]>([:])

    package init() {}

    /// The parked connections of `eventLoop` (made at its first parking); `handlers` are
    /// those the listener's connections give up while parked.
    package func lot(on eventLoop: any EventLoop, handlers: any ParkableHandlers) -> ParkedConnections {
        lots.withLock { lots in
            let id = ObjectIdentifier(eventLoop)
            if let lot = lots[id] { return lot }
            let lot = ParkedConnections(eventLoop: eventLoop, handlers: handlers)
            lots[id] = lot
            return lot
        }
    }
}

/// The handlers a parked connection gives up and gets back: every one after its
/// ``RequestStartWatcher`` (the listener's channel set-up knows them).
package protocol ParkableHandlers: Sendable {
    /// Adds them at the end of `pipeline`, as when the connection opened; `watcher` is the
    /// connection's, already in the pipeline.
    func addRequestHandlers(to pipeline: ChannelPipeline.SynchronousOperations, watcher: RequestStartWatcher) throws
    /// Removes them from `pipeline`.
    func removeRequestHandlers(from pipeline: ChannelPipeline.SynchronousOperations)
}
