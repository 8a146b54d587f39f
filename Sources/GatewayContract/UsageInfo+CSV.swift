extension UsageInfo {
    /// The columns of ``csv``: the JSON fields of a day, in order (what `gatewayctl usage -o csv`
    /// prints too).
    public static let csvColumns = ["date", "allowed", "refused_auth", "refused_limit", "refused_quota", "upstream_2xx", "upstream_4xx", "upstream_5xx"]

    /// The report as CSV (RFC 4180, CRLF line ends) for a spreadsheet: the header, then one row
    /// per day. Every field is a date or a number, so none needs quoting.
    public var csv: String {
        let rows = days.map { day in
            [day.date, day.allowed, day.refusedAuth, day.refusedLimit, day.refusedQuota, day.upstream2xx, day.upstream4xx, day.upstream5xx]
                .map { "\($0)" }
        }
        return ([Self.csvColumns] + rows).map { $0.joined(separator: ",") + "\r\n" }.joined()
    }
}
