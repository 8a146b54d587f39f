/// One page of a list answer: `{"items": [...], "next_cursor": "..."}`.
///
/// Every list of the admin API is paged the same way (cursor pagination, as Stripe and Unkey
/// do): ask with `?limit=N`, then pass `next_cursor` back as `?after=...` for the next page
/// until `next_cursor` is `null`. Order is stable, so pages neither repeat nor skip an item
/// that existed when the first page was read.
public struct Page<Item: Codable & Sendable & Hashable>: Codable, Sendable, Hashable {
    public let items: [Item]
    /// Where the next page starts, or `nil` on the last page.
    public let nextCursor: String?

    public init(items: [Item], nextCursor: String?) {
        self.items = items
        self.nextCursor = nextCursor
    }

    enum CodingKeys: String, CodingKey {
        case items
        case nextCursor = "next_cursor"
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(items, forKey: .items)
        try container.encode(nextCursor, forKey: .nextCursor)
    }

    /// The page of `all` (already in the list's stable order) that follows the item whose
    /// cursor is `request.after`; `cursor` names an item. Nil when `after` names no item.
    public static func slice(_ all: [Item], _ request: PageRequest, cursor: (Item) -> String) -> Page? {
        var start = all.startIndex
        if let after = request.after {
            guard let index = all.firstIndex(where: { cursor($0) == after }) else { return nil }
            start = index + 1
        }
        let end = min(all.endIndex, start + request.limit)
        let items = Array(all[start..<end])
        return Page(items: items, nextCursor: end < all.endIndex ? items.last.map(cursor) : nil)
    }
}

/// What a client asks of a list: at most `limit` items after the cursor `after`.
public struct PageRequest: Sendable, Hashable {
    /// The query parameters' names.
    public static let limitParameter = "limit"
    public static let afterParameter = "after"
    /// The largest page.
    public static let maximumLimit = 1000
    /// A page's size when none is asked for: partners and keys.
    public static let defaultLimit = 100
    /// The audit log's page size when none is asked for.
    public static let defaultAuditLimit = 50

    public let limit: Int
    public let after: String?

    /// `limit` from 1 to ``maximumLimit``, `after` a non-empty cursor of at most 128
    /// characters, as given in a query string; `defaultLimit` applies when `limit` is absent.
    /// Throws ``InvalidPageRequest``.
    public init(limit: String?, after: String?, defaultLimit: Int) throws {
        if let limit {
            guard let value = Int(limit), (1...Self.maximumLimit).contains(value) else {
                throw InvalidPageRequest(message: "limit must be a whole number from 1 to \(Self.maximumLimit)")
            }
            self.limit = value
        } else {
            self.limit = defaultLimit
        }
        if let after {
            guard !after.isEmpty, after.count <= 128 else {
                throw InvalidPageRequest(message: "after must be a next_cursor from an earlier page")
            }
        }
        self.after = after
    }

    /// The query string for this request (`limit=50&after=ptr_...`), cursor percent-encoded
    /// by the caller's URL machinery; cursors the gateway issues are plain ASCII.
    public var queryItems: [(name: String, value: String)] {
        [(Self.limitParameter, String(limit))] + (after.map { [(Self.afterParameter, $0)] } ?? [])
    }
}

/// A list request the API refuses: `400 INVALID_REQUEST` with this message.
public struct InvalidPageRequest: Error, Sendable, Hashable, CustomStringConvertible {
    public let message: String
    public var description: String { message }
}
