import GatewayEdge
import HTTPTypes
import Hummingbird

/// Hummingbird answers a thrown ``GatewayError`` in the error shape, as the edge and the proxy
/// engine write it below Hummingbird (``GatewayError/channelParts(requestID:)``).
extension GatewayError: HTTPResponseError {
    package func response(from request: Request, context: some RequestContext) throws -> Response {
        makeResponse()
    }

    package func makeResponse() -> Response {
        var fields = headers
        fields[.contentType] = "application/json"
        return Response(status: status, headers: fields, body: .init(byteBuffer: body()))
    }
}
