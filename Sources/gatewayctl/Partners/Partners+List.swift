import ArgumentParser

extension Gatewayctl.Partners {
    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List every partner, oldest first."
        )

        @OptionGroup var global: GlobalOptions

        func run() async throws {
            try global.printer.show(try await global.client().partners())
        }
    }
}
