import Testing
@testable import gatewayctl

@Suite struct TableTests {
    @Test func columnsAlignTwoSpacesApart() {
        let table = Table(columns: ["ID", "NAME", "STATUS"], rows: [
            ["ptr_1", "NammaYatri", "active"],
            ["ptr_22222", "X", "disabled"],
        ])
        #expect(table.rendered() == """
            ID         NAME        STATUS
            ptr_1      NammaYatri  active
            ptr_22222  X           disabled
            """)
    }

    @Test func everyColumnStartsAtTheSameOffsetOnEveryLine() {
        let table = Table(columns: ["KEY ID", "STATUS", "EXPIRES AT"], rows: [
            ["key_1", "active", "never"],
            ["key_abcdefghij", "expiring", "2026-11-22T03:30:00Z"],
        ])
        let lines = table.rendered().split(separator: "\n").map(String.init)
        #expect(lines.count == 3)
        for header in ["STATUS", "EXPIRES AT"] {
            let offset = lines[0].range(of: header).map { lines[0].distance(from: lines[0].startIndex, to: $0.lowerBound) }
            for line in lines.dropFirst() {
                let index = line.index(line.startIndex, offsetBy: offset ?? 0)
                #expect(line[line.index(before: index)] == " ", "column \(header) in \(line)")
                #expect(line[index] != " ", "column \(header) in \(line)")
            }
        }
        #expect(lines.allSatisfy { !$0.hasSuffix(" ") })
    }

    @Test func anEmptyListStillHasItsHeader() {
        #expect(Table([Partner]()).rendered() == Partner.columns.joined(separator: "  "))
    }

    @Test func partnersShowWholeRatesWithoutDecimals() {
        let partner = Partner(
            partnerID: "ptr_1", name: "N", status: "active", scopes: ["a:b", "c:d"],
            rateLimit: .init(rate: 50, burst: 100), createdAt: "2026-11-22T03:30:00Z"
        )
        #expect(partner.cells == ["ptr_1", "N", "active", "50", "100", "a:b,c:d", "2026-11-22T03:30:00Z"])
        #expect(Partner.format(0.5) == "0.5")
    }

    @Test func missingTimesReadAsNever() {
        let key = KeyRecord(
            keyID: "key_1", status: "active", scopes: [], createdAt: "2026-11-22T03:30:00Z",
            expiresAt: nil, lastUsedAt: nil
        )
        #expect(key.cells.suffix(2) == ["never", "never"])
    }

    @Test func theKeyIsOnItsOwnLineWithTheWarning() {
        let notes = Printer.oneTimeKeyNotes("pgk_live_abc")
        #expect(notes.contains("key: pgk_live_abc"))
        #expect(notes.contains { $0.contains("store it now: it is not shown again") })
    }
}
