import ArgumentParser
import BrokerDomain
import BrokerServer
import BrokerTestSupport
import BrokerTooling
import CommandLineSupport
import Foundation

struct Seed: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract:
            "Create the demo accounts of Seeds/demo-accounts.json (active), the Track4Run demo runs and, with --people, a synthetic population.",
        discussion: """
            With --people N, also write a deterministic synthetic population: N people with --days days of health \
            data, the same for the same --seed. Synthetic people have no password, so nobody can log in as them. \
            Running again writes only the people that are missing.
            """)

    @OptionGroup var database: DatabaseOptions
    @Option(help: "The demo accounts file.") var file = "Seeds/demo-accounts.json"
    @Option(help: "Synthetic people to write (0: none).") var people = 0
    @Option(help: "Days of data per synthetic person, ending yesterday (UTC).") var days = 30
    @Option(help: "The synthetic population's seed: the same seed gives the same people and data.") var seed: UInt64 = 1
    @Option(help: "The last day of synthetic data, YYYY-MM-DD (default: yesterday, UTC).") var endDay: String?
    @Flag(help: "Delete this seed's synthetic population first, then write it afresh.") var replace = false

    func validate() throws {
        guard people >= 0 else { throw ValidationError("--people must not be negative") }
        guard days >= 1 else { throw ValidationError("--days must be at least 1") }
        if let endDay, CalendarDate(iso: endDay) == nil { throw ValidationError("--end-day must be a date, YYYY-MM-DD") }
    }

    func run() async throws {
        let logger = makeLogger(level: .warning)
        let seed: DemoSeed
        do { seed = try DemoSeed.load(from: URL(fileURLWithPath: file)) } catch { fail("cannot read \(file): \(error)") }
        let population =
            people > 0
            ? SyntheticPopulation(people: people, days: days, seed: self.seed, endDay: endDay.flatMap(CalendarDate.init(iso:)))
            : nil
        let replace = replace
        let (outcomes, summary) = try await withDatabase(url: try database.resolved(), logger: logger) { client in
            let outcomes = try await seed.apply(client: client, logger: logger)
            let runs = try await DemoRuns(client: client, logger: logger).apply(organiserEmail: seed.thirdParties.first?.email ?? "")
            print("Track4Run demo runs:")
            for line in runs { print("  \(line)") }
            guard let population else { return (outcomes, SyntheticPopulation.Summary?.none) }
            if replace {
                let deleted = try await population.delete(client: client, logger: logger)
                if deleted > 0 { printError("deleted \(deleted) synthetic people of seed \(population.seed)") }
            }
            let bar = ProgressBar()
            let summary = try await population.write(client: client, progress: { bar.show($0) }, logger: logger)
            bar.finish()
            return (outcomes, summary)
        }
        print("Demo accounts (all active):")
        for outcome in outcomes {
            let role = outcome.role.rawValue.padding(toLength: 12, withPad: " ", startingAt: 0)
            print("  \(role) \(outcome.email)  password: \(outcome.password)\(outcome.created ? "" : "  (already there)")")
        }
        if let population, let summary { printSummary(summary, of: population) }
    }

    private func printSummary(_ summary: SyntheticPopulation.Summary, of population: SyntheticPopulation) {
        print("Synthetic population, seed \(population.seed) (no passwords: nobody can log in as them):")
        if summary.written == 0 {
            print("  already there: \(summary.alreadyPresent) people, nothing written (--replace writes them afresh)")
        } else {
            print(
                "  \(summary.written) people, \(summary.samples) samples (\(population.firstDay) to \(population.endDay)), "
                    + "\(summary.rollups) daily rollups in " + String(format: "%.1f", summary.seconds) + " s, "
                    + "\(Int(summary.samplesPerSecond.rounded())) samples/s"
                    + (summary.alreadyPresent > 0 ? "; \(summary.alreadyPresent) people were already there" : ""))
        }
        print("  \(population.email(ofPerson: 0)) … \(population.email(ofPerson: population.people - 1))")
    }
}

func printError(_ text: String, newline: Bool = true) {
    FileHandle.standardError.write(Data((newline ? text + "\n" : text).utf8))
}
