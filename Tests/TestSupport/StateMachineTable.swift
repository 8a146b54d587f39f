import Testing

/// A state machine's table test: every input applied to a copy of every state, each state
/// built by a path of legal inputs. A cell reads "action → next state", with `✗ ` first when
/// the machine (made with ``IllegalInputCheck/counting``) counted the input as illegal.
package struct StateMachineTable<Machine, Input: CaseIterable & Hashable & RawRepresentable> where Input.RawValue == String {
    /// Per state, per input: the cell expected.
    package var cells: [String: [Input: String]]
    package var illegalInputs: (Machine) -> Int
    /// The state's name, as the table has it.
    package var kind: (Machine) -> String
    /// Applies the input; the action described.
    package var apply: (Input, inout Machine) -> String

    package init(
        cells: [String: [Input: String]], illegalInputs: @escaping (Machine) -> Int, kind: @escaping (Machine) -> String,
        apply: @escaping (Input, inout Machine) -> String
    ) {
        self.cells = cells
        self.illegalInputs = illegalInputs
        self.kind = kind
        self.apply = apply
    }

    /// Checks every cell of `states` (each built already); the number of pairs tried.
    package func check(_ states: [(name: String, machine: Machine)], sourceLocation: SourceLocation = #_sourceLocation) -> Int {
        #expect(Set(cells.keys) == Set(states.map(\.name)), "one row per state", sourceLocation: sourceLocation)
        var pairs = 0
        for (name, built) in states {
            #expect(illegalInputs(built) == 0, "\(name): built by legal inputs only", sourceLocation: sourceLocation)
            #expect(kind(built) == name, "\(name): built as \(kind(built))", sourceLocation: sourceLocation)
            let row = cells[name] ?? [:]
            #expect(row.count == Input.allCases.count, "\(name): one cell per input", sourceLocation: sourceLocation)
            for input in Input.allCases {
                var machine = built
                let action = apply(input, &machine)
                let cell = "\(illegalInputs(machine) > 0 ? "✗ " : "")\(action) → \(kind(machine))"
                #expect(cell == row[input], "\(name) × \(input.rawValue)", sourceLocation: sourceLocation)
                pairs += 1
            }
        }
        return pairs
    }
}
