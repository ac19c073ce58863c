import ArgumentParser
import FoundationEssentials
import PeerSync

struct Conflicts: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show what merges overwrote: who changed what, which value was kept and which was not.",
        discussion: """
            When two machines change the same thing before they meet, the later change is kept
            everywhere and the other is listed here, so that nothing is lost without a word.
            Example: pulse-peer conflicts --limit 10   (--json for scripts: ids, values and stamps)
            """
    )

    @OptionGroup var options: HomeOptions

    @Option(name: .long, help: "How many entries, newest first.")
    var limit = 50

    @Flag(name: .long, help: "Print JSON.")
    var json = false

    func validate() throws {
        guard (1...100_000).contains(limit) else { throw ValidationError(say("cli.conflicts.limit_range")) }
    }

    func run() throws {
        let household = try options.openHousehold()
        let records: [HouseholdConflict]
        // The sentences in the reader's words (--lang), as the page has them; --json keeps data in English.
        do { records = try household.conflicts(limit: limit, words: json ? .english : Words.current) } catch { throw CLIError(error) }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            print(String(decoding: try encoder.encode(records), as: UTF8.self))
            return
        }
        let declined: [LedgerLine]
        do { declined = try household.declinedLedgerEntries() } catch { throw CLIError(error) }
        let kids = Dictionary((try? household.kids())?.map { ($0.id, $0.name) } ?? [], uniquingKeysWith: { a, _ in a })
        if !declined.isEmpty {
            print(say("cli.conflicts.declined_heading"))
            for line in declined {
                let params: [String: JSONValue] = [
                    "kid": .string(kids[line.kid] ?? line.kid), "kind": .string(line.kind), "peanuts": JSONValue(line.peanuts),
                    "title": .string(ledgerTitle(line)),
                ]
                print("  " + say(line.outcome == "declined-repeat" ? "cli.conflicts.declined_repeat" : "cli.conflicts.declined_overspend", params))
            }
            if !records.isEmpty { print("") }
        }
        if records.isEmpty {
            if declined.isEmpty { print(say("cli.conflicts.none")) }
            return
        }
        for record in records {
            let when = Output.dateTime(milliseconds: max(record.kept.milliseconds, record.lost.milliseconds))
            print("#\(record.id)  \(when)  \(record.summary)") // the sentence is the Conflicts module's
        }
    }
}
