/// A duration as the admin API writes it: a whole number and one unit (`500ms`, `30s`,
/// `10m`, `24h`, `90d`), or a bare `0`.
///
/// Checked before any request so a typo such as `--grace ten` fails as a usage error instead
/// of reaching the gateway (or worse, being read as something else).
struct DurationText: Equatable, CustomStringConvertible {
    enum Unit: String, CaseIterable {
        // `ms` before `m` and `s`: suffixes are tried in this order.
        case milliseconds = "ms", seconds = "s", minutes = "m", hours = "h", days = "d"
    }

    let value: Int
    let unit: Unit

    /// Parses `text`; the error's description is what the user sees after ArgumentParser's
    /// "The value '...' is invalid for '--grace <duration>': ".
    init(parsing text: String) throws(InvalidDuration) {
        if text == "0" {
            self.init(value: 0, unit: .seconds)
            return
        }
        guard let unit = Unit.allCases.first(where: { text.hasSuffix($0.rawValue) }) else {
            throw InvalidDuration()
        }
        let digits = text.dropLast(unit.rawValue.count)
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }), let value = Int(digits) else {
            throw InvalidDuration()
        }
        self.init(value: value, unit: unit)
    }

    init(value: Int, unit: Unit) {
        self.value = value
        self.unit = unit
    }

    var isZero: Bool { value == 0 }

    /// The canonical form sent to the API (`0` becomes `0s`, leading zeros go).
    var description: String { "\(value)\(unit.rawValue)" }
}

struct InvalidDuration: Error, CustomStringConvertible {
    var description: String {
        "expected a whole number and a unit (ms, s, m, h or d), such as 30s, 24h or 90d"
    }
}
