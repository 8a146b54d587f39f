import Testing

/// An input of a table test that applies itself to its machine and describes the action.
package protocol StateMachineTableInput: CaseIterable, Hashable, RawRepresentable where RawValue == String {
    associatedtype TableMachine
    func apply(to machine: inout TableMachine) -> String
}

extension StateMachineTable where Input: StateMachineTableInput, Input.TableMachine == Machine {
    /// Checks `cells` over the states named in `paths`, each built from a fresh `make()` by its
    /// path of (legal) inputs; the number of pairs tried.
    package static func check(
        _ cells: [String: [Input: String]], paths: [(name: String, path: [Input])], from make: () -> Machine,
        illegalInputs: @escaping (Machine) -> Int, kind: @escaping (Machine) -> String, sourceLocation: SourceLocation = #_sourceLocation
    ) -> Int {
        let table = StateMachineTable(cells: cells, illegalInputs: illegalInputs, kind: kind) { input, machine in input.apply(to: &machine) }
        return table.check(paths.map { state in
            var machine = make()
            for input in state.path { _ = input.apply(to: &machine) }
            return (state.name, machine)
        }, sourceLocation: sourceLocation)
    }
}
