// What llhttp's callbacks have read of a message's fields, for the HTTP/1 fuzzers
// (Fuzz/HTTP1RequestFuzz.swift, Fuzz/HTTP1ResponseFuzz.swift): each harness's run is a
// subclass, found from the parser's `data`. Compiled by Fuzz/build.sh with each of them.

import CNIOLLHTTP

class LLHTTPRun {
    var name: [UInt8] = []
    var value: [UInt8] = []
    var inValue = false
    /// The head's fields, then the trailers', as the harnesses compare them.
    var fields: [String] = []

    /// The run `parser` reads into.
    class func of(_ parser: UnsafeMutablePointer<llhttp_t>?) -> Self {
        Unmanaged<LLHTTPRun>.fromOpaque(parser!.pointee.data).takeUnretainedValue() as! Self
    }

    /// Sets the callbacks of `settings` that read a field's name and value (in pieces, as
    /// llhttp hands them over) into the parser's run.
    static func readFields(_ settings: inout llhttp_settings_t) {
        settings.on_header_field = { parser, bytes, count in
            let run = LLHTTPRun.of(parser)
            run.endField()
            run.name += UnsafeRawBufferPointer(start: bytes, count: count)
            return 0
        }
        settings.on_header_value = { parser, bytes, count in
            let run = LLHTTPRun.of(parser)
            run.inValue = true
            run.value += UnsafeRawBufferPointer(start: bytes, count: count)
            return 0
        }
    }

    /// The field read so far, if any, into ``fields``.
    func endField() {
        guard inValue || !name.isEmpty else { return }
        fields.append(Self.field(String(decoding: name, as: UTF8.self), String(decoding: value, as: UTF8.self)))
        name = []
        value = []
        inValue = false
    }

    /// A field as compared: the value without white space around it (llhttp keeps what ends one).
    static func field(_ name: String, _ value: String) -> String {
        let bytes = value.utf8
        let start = bytes.firstIndex { $0 != 0x20 && $0 != 0x09 } ?? bytes.endIndex
        let end = bytes[start...].lastIndex { $0 != 0x20 && $0 != 0x09 }.map { bytes.index(after: $0) } ?? start
        return "\(name): \(value[start..<end])"
    }
}
