import ArgumentParser
import GatewayContract

/// `--limit` and `--after` of every list command: one page of the admin API's cursor
/// pagination. The next page's `--after` is the previous page's `next_cursor` (printed on
/// stderr under a table).
struct PageOptions: ParsableArguments {
    @Option(help: ArgumentHelp("How many to show, 1 to \(PageRequest.maximumLimit) (default: \(PageRequest.defaultLimit); \(PageRequest.defaultAuditLimit) for audit).", valueName: "n"))
    var limit: Int?

    @Option(help: ArgumentHelp("Continue after this cursor (the previous page's next_cursor).", valueName: "cursor"))
    var after: String?

    func validate() throws {
        _ = try request(defaultLimit: 1)
    }

    func request(defaultLimit: Int) throws -> PageRequest {
        do {
            return try PageRequest(limit: limit.map(String.init), after: after, defaultLimit: defaultLimit)
        } catch let error as InvalidPageRequest {
            throw ValidationError("--" + error.message)
        }
    }
}
