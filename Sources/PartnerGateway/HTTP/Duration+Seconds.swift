extension Duration {
    /// The duration as fractional seconds, for logs, headers and timers.
    var inSeconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
