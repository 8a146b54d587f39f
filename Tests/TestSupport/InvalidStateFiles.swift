import Testing

/// A state file for each way one is refused, with where and why: what the in-memory tests
/// read and the process tests apply to a gateway (which must stay untouched).
public enum InvalidStateFiles {
    public struct Case: Sendable, CustomTestStringConvertible {
        public let name: String
        public let text: String
        public let line: Int
        public let field: String
        /// A part of the problem's message.
        public let says: String

        public var testDescription: String { name }
    }

    public static let all: [Case] = [
        Case(
            name: "unknown field",
            text: "version: 1\npartners:\n- name: A\n  colour: blue\n",
            line: 4, field: "partners[0].colour", says: "unknown field"
        ),
        Case(
            name: "duplicate name",
            text: "version: 1\npartners:\n- name: A\n  keys:\n  - name: k\n  - name: k\n",
            line: 6, field: "partners[0].keys[1].name", says: "duplicate name"
        ),
        Case(
            name: "bad quota period",
            text: "version: 1\npartners:\n- name: A\n  quota: {limit: 100, period: week}\n",
            line: 4, field: "partners[0].quota.period", says: "\"week\" is not a quota period"
        ),
        Case(
            name: "wrong schema version",
            text: "version: 2\npartners:\n- name: A\n",
            line: 1, field: "version", says: "2 is not a state file version this gatewayctl reads"
        ),
        Case(
            name: "missing schema version",
            text: "partners:\n- name: A\n",
            line: 1, field: "version", says: "missing"
        ),
        Case(
            name: "unknown member role",
            text: "version: 1\npartners:\n- name: A\n  members:\n  - email: asha@a.example\n    name: Asha\n    role: owner\n",
            line: 7, field: "partners[0].members[0].role", says: "\"owner\" is not one of: partner_admin, developer, viewer"
        ),
        Case(
            name: "duplicate member email",
            text: "version: 1\npartners:\n- name: A\n  members:\n  - {email: asha@a.example, name: Asha, role: viewer}\n  - {email: Asha@A.example, name: Asha again, role: developer}\n",
            line: 6, field: "partners[0].members[1].email", says: "duplicate email: asha@a.example is also declared at"
        ),
        Case(
            name: "bad member email",
            text: "version: 1\npartners:\n- name: A\n  members:\n  - email: asha at a.example\n    name: Asha\n    role: viewer\n",
            line: 5, field: "partners[0].members[0].email", says: "email must be one address"
        ),
        Case(
            name: "max_keys out of range",
            text: "version: 1\npartners:\n- name: A\n  max_keys: 0\n",
            line: 4, field: "partners[0].max_keys", says: "max_keys must be between 1 and 1000"
        ),
        Case(
            name: "bad id",
            text: "version: 1\npartners:\n- name: A\n  id: ptr_XYZ\n",
            line: 4, field: "partners[0].id", says: "is not an id"
        ),
        Case(
            name: "not YAML",
            text: "version: 1\npartners:\n- name: [A\n",
            line: 4, field: "", says: "not valid YAML"
        ),
        Case(
            name: "a key given twice in a mapping",
            text: "version: 1\npartners:\n- name: A\n  rate: 1\n  rate: 2\n",
            line: 4, field: "", says: "given twice in one mapping: rate"
        ),
    ]
}
