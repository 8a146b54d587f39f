/// What a `*_env` key holds: the name of the environment variable with a secret in it. A
/// value that is no such name is most likely the secret itself, written in the wrong place,
/// and every message about a variable repeats its name: such a value is refused without being
/// shown.
package enum EnvironmentVariableName {
    /// Letters, digits and `_`, not starting with a digit, at most 48 characters (a secret of
    /// 32 bytes in hex is 64).
    package static func isValid(_ text: String) -> Bool {
        guard let first = text.utf8.first, !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first), text.utf8.count <= 48 else { return false }
        return text.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"): true
            default: false
            }
        }
    }

    /// The problem of a `*_env` key (`key`) whose value is not a name.
    package static func problem(key: String) -> ConfigError {
        ConfigError(key: key, "is not an environment variable's name (letters, digits and _, not starting with a digit, at most 48): it names the variable that holds the secret, never the secret itself")
    }
}
