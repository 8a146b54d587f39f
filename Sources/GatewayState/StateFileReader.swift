import Foundation
import GatewayContract
import Yams

/// Reads state files into one ``StateDocument``: YAML through Yams, every field checked
/// against the admin API's own rules (``AdminInputRules``) and the rules between entries
/// (``StateRules``), each problem named by file, line and field. Any problem refuses the
/// whole set of files, before the gateway is asked anything.
public struct StateFileReader: Sendable {
    /// One file's path (as named in problems) and text.
    public struct Source: Sendable {
        public let path: String
        public let text: String

        public init(path: String, text: String) {
            self.path = path
            self.text = text
        }
    }

    private let substitution: EnvironmentSubstitution

    /// `environment` answers `${NAME}` in the files' values.
    public init(environment: [String: String]) {
        substitution = EnvironmentSubstitution(environment: environment)
    }

    public func read(_ sources: [Source]) throws(StateProblems) -> StateDocument {
        var files: [StateFile] = []
        var problems: [StateProblem] = []
        for source in sources {
            let reading = StateNodeReading(file: source.path, substitution: substitution)
            let file = StateFile.read(source.text, reading: reading)
            problems += reading.problems
            if let file { files.append(file) }
        }
        // The rules between entries only once every entry read: a partner refused above
        // would otherwise be reported again by each key that names it.
        guard problems.isEmpty else { throw StateProblems(problems) }
        let (document, mergeProblems) = StateFile.merge(files)
        problems = mergeProblems + StateRules.problems(in: document)
        guard problems.isEmpty else { throw StateProblems(problems) }
        return document
    }
}

/// One file's sections as read, before the files are merged.
struct StateFile {
    /// A key of a top-level `keys` section: it names its partner.
    struct PartnerKey {
        let partner: String
        let partnerOrigin: StateOrigin
        let key: DeclaredKey
    }

    var partners: [DeclaredPartner]?
    var keys: [PartnerKey]?
    var admins: [DeclaredAdmin]?

    static let sections = ["version", "partners", "keys", "admins"]

    static func read(_ text: String, reading: StateNodeReading) -> StateFile? {
        let root: Node
        do {
            guard let node = try Yams.compose(yaml: text) else {
                reading.problem(at: nil, "", "the file is empty: a state file starts with version: \(StateDocument.version)")
                return nil
            }
            root = node
        } catch let error as YamlError {
            let (mark, message) = describe(error)
            reading.problem(mark: mark, "", message)
            return nil
        } catch {
            reading.problem(at: nil, "", "not YAML: \(error)")
            return nil
        }
        let top = StateNodeReading.Value(node: root, path: "")
        guard let fields = reading.fields(of: top, allowed: sections) else { return nil }
        guard let version = fields["version"] else {
            reading.problem(at: root, "version", "missing: a state file starts with version: \(StateDocument.version)")
            return nil
        }
        guard let number = reading.integer(version) else { return nil }
        guard number == StateDocument.version else {
            reading.problem(at: version.node, "version", "\(number) is not a state file version this gatewayctl reads (it reads \(StateDocument.version))")
            return nil
        }
        var file = StateFile()
        if let partners = fields["partners"] {
            file.partners = reading.entries(of: partners)?.compactMap { DeclaredPartner.read($0, reading: reading) } ?? []
        }
        if let keys = fields["keys"] {
            file.keys = reading.entries(of: keys)?.compactMap { PartnerKey.read($0, reading: reading) } ?? []
        }
        if let admins = fields["admins"] {
            file.admins = reading.entries(of: admins)?.compactMap { DeclaredAdmin.read($0, reading: reading) } ?? []
        }
        return file
    }

    /// Yams's own message, one line, at its place.
    private static func describe(_ error: YamlError) -> (Mark?, String) {
        switch error {
        case .scanner(let context, let problem, let mark, _), .parser(let context, let problem, let mark, _),
             .composer(let context, let problem, let mark, _):
            return (mark, "not valid YAML: " + problem + (context.map { " " + $0.text } ?? ""))
        case .duplicatedKeysInMapping(let duplicates, let context):
            return (context.mark, "given twice in one mapping: \(duplicates.joined(separator: ", "))")
        case .reader(let problem, _, _, _):
            return (nil, "not valid YAML: \(problem)")
        default:
            return (nil, "not valid YAML")
        }
    }

    /// The files as one document: their sections concatenated (a section is managed when any
    /// file has it), each key of a top-level `keys` section given to the partner it names.
    static func merge(_ files: [StateFile]) -> (StateDocument, [StateProblem]) {
        var document = StateDocument()
        if files.contains(where: { $0.partners != nil }) { document.partners = files.flatMap { $0.partners ?? [] } }
        if files.contains(where: { $0.admins != nil }) { document.admins = files.flatMap { $0.admins ?? [] } }
        var problems: [StateProblem] = []
        for entry in files.flatMap({ $0.keys ?? [] }) {
            let named = document.partners?.indices.filter { document.partners?[$0].name == entry.partner } ?? []
            switch named.count {
            case 1:
                document.partners?[named[0]].keys.append(entry.key)
            case 0:
                problems.append(StateProblem(at: entry.partnerOrigin, "no file declares a partner named \"\(entry.partner)\""))
            default:
                problems.append(StateProblem(
                    at: entry.partnerOrigin, "\(named.count) partners are named \"\(entry.partner)\": list the key under its partner instead"
                ))
            }
        }
        return (document, problems)
    }
}
