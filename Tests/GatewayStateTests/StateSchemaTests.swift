import Foundation
import GatewayContract
import Testing
@testable import GatewayState

/// docs/state-file.schema.json names exactly the fields the reader reads, and the version and
/// the roles it reads.
@Suite struct StateSchemaTests {
    static var schema: [String: Any] {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let data = (try? Data(contentsOf: root.appendingPathComponent("docs/state-file.schema.json"))) ?? Data()
        return (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
    }

    static func properties(_ object: Any?) -> Set<String> {
        Set(((object as? [String: Any])?["properties"] as? [String: Any])?.keys.map { $0 } ?? [])
    }

    static var definitions: [String: Any] { schema["$defs"] as? [String: Any] ?? [:] }

    @Test func theSchemaNamesTheFieldsTheReaderReads() throws {
        try #require(!Self.schema.isEmpty, "docs/state-file.schema.json is missing or not JSON")
        #expect(Self.properties(Self.schema) == Set(StateFile.sections))
        #expect(Self.properties(Self.definitions["partner"]) == Set(DeclaredPartner.fields))
        #expect(Self.properties(Self.definitions["key"]) == Set(DeclaredKey.fields))
        #expect(Self.properties(Self.definitions["member"]) == Set(DeclaredMember.fields))
        #expect(Self.properties(Self.definitions["admin"]) == Set(DeclaredAdmin.fields))
        let version = (Self.schema["properties"] as? [String: Any])?["version"] as? [String: Any]
        #expect(version?["const"] as? Int == StateDocument.version)
    }

    @Test func theSchemasRolesAreTheGatewaysRoles() {
        func roles(_ definition: String) -> [String]? {
            let properties = (Self.definitions[definition] as? [String: Any])?["properties"] as? [String: Any]
            return (properties?["role"] as? [String: Any])?["enum"] as? [String]
        }
        #expect(roles("member") == AdminInputRules.memberRoles)
        #expect(roles("admin") == AdminInputRules.roles)
    }
}
