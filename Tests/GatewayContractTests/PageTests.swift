import Foundation
import GatewayContract
import Testing

@Suite struct PageTests {
    private let all = (1...7).map { "item\($0)" }

    private func request(_ limit: Int, after: String? = nil) throws -> PageRequest {
        try PageRequest(limit: String(limit), after: after, defaultLimit: 100)
    }

    @Test func walksEveryItemOnceInOrder() throws {
        var seen: [String] = []
        var after: String?
        var pages = 0
        repeat {
            let page = try #require(Page.slice(all, try request(3, after: after), cursor: { $0 }))
            seen += page.items
            after = page.nextCursor
            pages += 1
        } while after != nil
        #expect(seen == all)
        #expect(pages == 3)
    }

    @Test func lastPageHasNoCursor() throws {
        let exact = try #require(Page.slice(all, try request(7), cursor: { $0 }))
        #expect(exact.items == all && exact.nextCursor == nil)
        let short = try #require(Page.slice(all, try request(5), cursor: { $0 }))
        #expect(short.nextCursor == "item5")
        let empty = try #require(Page.slice([String](), try request(5), cursor: { $0 }))
        #expect(empty.items.isEmpty && empty.nextCursor == nil)
    }

    @Test func unknownCursorIsNil() throws {
        #expect(Page.slice(all, try request(3, after: "item99"), cursor: { $0 }) == nil)
    }

    @Test(arguments: [("0", nil as String?), ("1001", nil), ("abc", nil), ("-1", nil), ("5", ""), ("5", String(repeating: "x", count: 129))])
    func refusesBadRequests(limit: String, after: String?) {
        #expect(throws: InvalidPageRequest.self) { try PageRequest(limit: limit, after: after, defaultLimit: 10) }
    }

    @Test func defaultsAndQuery() throws {
        let request = try PageRequest(limit: nil, after: "ptr_1", defaultLimit: 50)
        #expect(request.limit == 50)
        #expect(request.queryItems.map { "\($0.name)=\($0.value)" } == ["limit=50", "after=ptr_1"])
    }

    @Test func encodesTheCursorAsNullOnTheLastPage() throws {
        let json = String(decoding: try AdminJSON.encoder().encode(Page(items: [1, 2], nextCursor: nil)), as: UTF8.self)
        #expect(json == #"{"items":[1,2],"next_cursor":null}"#)
    }
}
