import ArgumentParser

extension Gatewayctl {
    struct Version: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print gatewayctl's version and the commit it was built from (as --version does)."
        )

        func run() {
            print(BuildInfo.description)
        }
    }
}
