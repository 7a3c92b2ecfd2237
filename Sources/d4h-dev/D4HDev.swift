import ArgumentParser
import CommandLineSupport

/// `d4h-dev`: the developers' commands, never shipped: demo seeds, benchmarks and the noise sampler's draws.
@main
struct D4HDev: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "d4h-dev",
        abstract: "Data4Help's developer tools: demo seeds, benchmarks, the privacy noise check.",
        subcommands: [Seed.self, Bench.self, Privacy.self])

    static func main() async { await runAsRoot(self) }
}
