import NIOCore

/// Handlers a channel gets only when the proxy engine passes a request on (one of the gateway's
/// own endpoints): ``ProxyHandler`` adds them after itself, before passing the request's head.
///
/// Why: an HTTP/2 stream carries one request, and almost every one is proxied; a handler
/// added to every stream for the rare one that is not costs its context, its `handlerAdded`
/// and `handlerRemoved` and the passing of every event on each proxied stream
/// (``HTTP2StreamSetup``). The proxy engine is what decides, so this cannot disagree with it.
package protocol PassedOnRequestHandlers: AnyObject, Sendable {
    func addHandlers(to pipeline: ChannelPipeline.SynchronousOperations) throws
}
