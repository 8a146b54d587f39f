/// Where the response header rules (``ForwardedHeaders``'s `response`) put the fields a client
/// gets, in the form of its protocol: an HTTP/1.1 client's head copies the upstream's field
/// lines as bytes (``ClientResponseHead``), an HTTP/2 stream's header block makes a `String`
/// per field (``ProxyResponseHead/headerBlock()``). One pass, the rules in one place.
package protocol ResponseFieldWriter {
    /// A field of the upstream's head passed on: its name, its value (without the white space
    /// around it) and its whole line as the upstream wrote it (through the CRLF), bytes of the
    /// head valid during the call.
    mutating func pass(name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, line: UnsafeRawBufferPointer)

    /// A field the gateway sets (or a response the gateway made itself holds).
    mutating func add(name: String, value: String)
}
