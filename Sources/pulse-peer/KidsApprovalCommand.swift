import ArgumentParser
import PeerSync

/// Chores a kid reports and a parent approves (issue 58, item 4): `kids report`, `kids reports`,
/// `kids approve`, `kids decline`, `kids approval on|off`.
extension KidsCommand {
    struct Report: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "A kid did a chore that waits for a parent's approval: it is reported, counted nowhere yet.")
        @OptionGroup var options: HomeOptions
        @Argument(help: "The kid (number, name or id).") var kid: String
        @Argument(help: "The chore (title or id).") var chore: String
        @Flag(help: "Print JSON.") var json = false
        func run() throws {
            let report = try options.write { try $0.reportChore(kid: kid, item: chore) }
            if json { return try Output.json(report) }
            print(reportLine(report))
        }
    }

    struct Reports: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The chores kids reported: those waiting, and those decided this week.")
        @OptionGroup var options: HomeOptions
        @Argument(help: "Only this kid's (number, name or id).") var kid: String?
        @Flag(help: "Print JSON.") var json = false
        func run() throws {
            let reports = try options.read { try $0.choreReports(kid: kid) }
            if json { return try Output.json(reports) }
            if reports.isEmpty { return print(say("cli.kids.reports.empty")) }
            for report in reports { print("\(String(report.id.suffix(8)))  " + reportLine(report)) }
        }
    }

    struct Approve: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Approve a kid's report (adult): the chore's peanuts are earned.",
            discussion: "Example: pulse-peer kids approve 3f2a9c1d --pin-stdin   (the report's code from `kids reports`, or its chore)")
        @OptionGroup var options: HomeOptions
        @OptionGroup var pin: PINOptions
        @Argument(help: "The report (its code from `kids reports`, its id, or its chore's title).") var report: String
        @Flag(help: "Print JSON.") var json = false
        func run() throws {
            let decided = try options.write { try $0.approveReport(report, pin: try pin.read(for: $0)) }
            if json { return try Output.json(decided) }
            print(reportLine(decided))
        }
    }

    struct Decline: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Decline a kid's report (adult), with a word to the kid if you like.")
        @OptionGroup var options: HomeOptions
        @OptionGroup var pin: PINOptions
        @Argument(help: "The report (its code from `kids reports`, its id, or its chore's title).") var report: String
        @Option(help: "A word to the kid (up to 180 characters).") var word: String?
        @Flag(help: "Print JSON.") var json = false
        func run() throws {
            let decided = try options.write { try $0.declineReport(report, word: word, pin: try pin.read(for: $0)) }
            if json { return try Output.json(decided) }
            print(reportLine(decided))
        }
    }

    struct Approval: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Whether kids' chores wait for a parent's approval, household-wide; on or off (adult).")
        @OptionGroup var options: HomeOptions
        @OptionGroup var pin: PINOptions
        @Argument(help: "on or off; none: say which.") var value: String?
        @Flag(help: "Print JSON.") var json = false
        func run() throws {
            let on: Bool
            if let value {
                on = try options.write { try $0.setKidsApproval(value, pin: try pin.read(for: $0)) }
            } else {
                on = try options.read { try $0.kidsApproval() }
            }
            if json { return try Output.json(["kidsApproval": on]) }
            print(say("cli.kids.approval", ["on": on ? "yes" : "no"]))
        }
    }
}

extension KidsCommand {
    struct Rotate: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "A chore that takes turns among kids, one a day from today (adult); --off: any kid again.",
            discussion: "Example: pulse-peer kids rotate chore_002 Sam,Zoe --pin-stdin")
        @OptionGroup var options: HomeOptions
        @OptionGroup var pin: PINOptions
        @Argument(help: "The chore (number from `kids`, title or id).") var chore: String
        @Argument(help: "The kids in turn order, comma-separated.") var kids: String?
        @Flag(help: "It no longer takes turns.") var off = false
        @Flag(help: "Print JSON.") var json = false
        func validate() throws {
            guard off == (kids == nil) else { throw ValidationError(say("cli.kids.rotate.one_of")) }
        }
        func run() throws {
            let item = try options.write { try $0.setKidsChoreRotation(chore, kids: names(kids), off: off, pin: try pin.read(for: $0)) }
            if json { return try Output.json(item) }
            let title = catalogueTitle(item)
            guard let turns = item.turns, !turns.isEmpty else { return print(say("cli.kids.rotate.off", ["title": .string(title)])) }
            print(say("cli.kids.rotate.on", ["title": .string(title), "kids": .string(turns.compactMap(\.kid).joined(separator: ", "))]))
        }
    }
}

/// "Sam: Feed the cat (+2) — waiting for a parent", in the reader's language.
func reportLine(_ report: ChoreReport) -> String {
    let title = report.titleKey.map { say($0, or: report.title) } ?? report.title
    return say(
        "cli.kids.report",
        [
            "kid": .string(report.kidName), "title": .string(title), "peanuts": JSONValue(report.peanuts), "day": .string(report.day),
            "status": .string(report.status.rawValue), "by": report.decidedBy.map { .string($0) } ?? .string(say("notify.someone")),
            "word": .string(report.word ?? ""), "worded": report.word == nil ? "no" : "yes",
        ])
}
