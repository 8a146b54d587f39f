import Foundation
import GatewayContract
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

    /// Names come from the admin API, which refuses these now, but records written before
    /// (or by another client) must not rewrite the operator's terminal: each control or bidi
    /// character is printed as its escape, other scripts as they are.
    @Test func controlAndBidiCharactersArePrintedEscaped() {
        let table = Table(columns: ["ID", "NAME"], rows: [
            ["ptr_1", "pay\u{202E}gpj.exe"],
            ["ptr_2", "\u{9B}31mred\u{1B}[2J"],
            ["ptr_3", "a\u{2066}b\u{200F}c\u{2028}d\tz\u{7F}"],
            ["ptr_4", "ನಮ್ಮ ಯಾತ್ರಿ"],
        ])
        let rendered = table.rendered()
        let unsafe = rendered.unicodeScalars.filter { scalar in
            scalar != "\n" && (scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
                || [0x061C, 0x200E, 0x200F, 0x2028, 0x2029].contains(scalar.value)
                || (0x202A...0x202E).contains(scalar.value) || (0x2066...0x2069).contains(scalar.value))
        }
        #expect(unsafe.isEmpty, "\(unsafe.map { String($0.value, radix: 16) })")
        #expect(rendered.contains("pay\\u{202E}gpj.exe"), "\(rendered)")
        #expect(rendered.contains("\\u{9B}31mred\\u{1B}[2J"), "\(rendered)")
        #expect(rendered.contains("a\\u{2066}b\\u{200F}c\\u{2028}d\\u{9}z\\u{7F}"), "\(rendered)")
        #expect(rendered.contains("ನಮ್ಮ ಯಾತ್ರಿ"), "\(rendered)")
        // Columns still line up on what is printed.
        let lines = rendered.split(separator: "\n")
        #expect(lines.allSatisfy { $0.hasPrefix("ptr_") || $0.hasPrefix("ID   ") }, "\(rendered)")
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
        #expect(Table([PartnerInfo]()).rendered() == PartnerInfo.columns.joined(separator: "  "))
    }

    @Test func withoutHeadersOnlyRowsArePrintedAtTheSameOffsets() {
        let table = Table(columns: ["ID", "NAME"], rows: [["ptr_1", "A"], ["ptr_22", "B"]])
        #expect(table.rendered(headers: false) == "ptr_1   A\nptr_22  B")
        #expect(Table(columns: ["ID"], rows: []).rendered(headers: false).isEmpty)
    }

    @Test func partnersShowWholeRatesWithoutDecimals() {
        let partner = PartnerInfo(
            partnerID: "ptr_1", name: "N", status: "active", scopes: ["a:b", "c:d"],
            rateLimit: .init(rate: 50, burst: 100), createdAt: Date(timeIntervalSince1970: 1_795_000_000)
        )
        #expect(partner.cells == ["ptr_1", "N", "active", "50", "100", "a:b,c:d", "2026-11-18T11:06:40Z", "any", "-", "20"])
        #expect(PartnerInfo.format(0.5) == "0.5")
    }

    @Test func keysShowTheirStartNameAndMetaAndMissingTimesReadAsNever() {
        let key = KeyInfo(
            keyID: "key_1", partnerID: "ptr_1", start: "pgk_live_AbCd", name: "checkout", meta: ["z": "1", "team": "payments"],
            status: "active", scopes: [], createdAt: Date(timeIntervalSince1970: 1_795_000_000), expiresAt: nil, lastUsedAt: nil
        )
        #expect(key.cells[8...9] == ["never", "never"])
        #expect(key.cells.suffix(2) == ["any", "-"])
        #expect(key.cells[1] == "pgk_live_AbCd…")
        #expect(key.cells[2] == "checkout")
        #expect(key.cells[6] == "team=payments,z=1")
    }

    @Test func theKeyIsOnItsOwnLineWithTheWarning() {
        let notes = Printer.oneTimeKeyNotes("pgk_live_abc")
        #expect(notes.contains("key: pgk_live_abc"))
        #expect(notes.contains { $0.contains("store it now: it is not shown again") })
    }
}
