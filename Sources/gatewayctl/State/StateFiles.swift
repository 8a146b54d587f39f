import Foundation
import GatewayState

/// The state files `-f` names: a file, or a directory and every `.yaml` and `.yml` file under
/// it, in path order, so a plan is the same whatever order the directory lists them in.
enum StateFiles {
    static func sources(_ paths: [String]) throws -> [StateFileReader.Source] {
        guard !paths.isEmpty else { throw CtlError.usage("no state files: give -f FILE or -f DIRECTORY") }
        var files: [String] = []
        for path in paths {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
                throw CtlError.usage("\(path): no such file or directory")
            }
            if isDirectory.boolValue {
                let found = try yamlFiles(under: path)
                guard !found.isEmpty else { throw CtlError.usage("\(path): no .yaml or .yml file in this directory") }
                files += found
            } else {
                files.append(path)
            }
        }
        var seen = Set<String>()
        return try files.filter { seen.insert(URL(fileURLWithPath: $0).standardizedFileURL.path).inserted }.map { path in
            guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8) else {
                throw CtlError.usage("\(path): cannot read it as UTF-8 text")
            }
            return StateFileReader.Source(path: path, text: text)
        }
    }

    private static func yamlFiles(under directory: String) throws -> [String] {
        guard let walker = FileManager.default.enumerator(atPath: directory) else {
            throw CtlError.usage("\(directory): cannot list this directory")
        }
        var found: [String] = []
        while let relative = walker.nextObject() as? String {
            guard relative.hasSuffix(".yaml") || relative.hasSuffix(".yml") else { continue }
            let path = (directory as NSString).appendingPathComponent(relative)
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue { found.append(path) }
        }
        return found.sorted()
    }
}
