/// Comparison of a secret a client presents with one the gateway holds, in time that depends
/// on the length only: `==` stops at the first byte that differs, and how long it took would
/// tell a client on a shared connection how much of another client's secret it had guessed.
public enum ConstantTime {
    /// Whether `a` and `b` hold the same UTF-8 bytes. Secrets the gateway compares have
    /// formats of a fixed length, so returning early on a length that differs leaks nothing.
    public static func equal(_ a: String, _ b: String) -> Bool {
        var a = a, b = b
        return a.withUTF8 { x in
            b.withUTF8 { y in
                guard x.count == y.count else { return false }
                var difference: UInt8 = 0
                for index in 0..<x.count { difference |= x[index] ^ y[index] }
                return difference == 0
            }
        }
    }
}
