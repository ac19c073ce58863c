import ArgumentParser
import PeerSync

struct RecurringCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "recurring", abstract: "Recurring tasks: created once per period for the whole household.",
        discussion: """
            Each period's task is made once for the whole household; an undone one from an earlier
            period leaves the list when the next one is made. A recurring task may rotate among
            members: each period's task goes to whoever is most behind their share among those at
            home (docs/decisions/0021-rotating-chores.md). Examples:
              pulse-peer recurring add "Water plants" --daily --assignee me
              pulse-peer recurring add "Bins out" --weekly mon,thu
              pulse-peer recurring add "Hoover" --weekly sat --rotate Anna,Ben,Cleo
              pulse-peer recurring swap Hoover 2026-12-12 2026-12-19
              pulse-peer recurring away add Cleo --from 2026-12-20 --to 2027-01-03
            """,
        subcommands: [List.self, Add.self, Remove.self, Rotate.self, Swap.self, Away.self], defaultSubcommand: List.self)

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the templates, with each rotation's next turns.")
        @OptionGroup var options: HomeOptions
        @Flag(help: "Print JSON.") var json = false
        func run() throws {
            let templates = try options.read { try $0.recurringTemplates(today: Days.today()) }
            if json { return try Output.json(templates) }
            for (index, template) in templates.enumerated() {
                let assignee = template.assignee.map { "  " + Output.pill($0) } ?? ""
                print("\(String(index + 1).leftPadded(3))  \(template.title)  \(scheduleText(template.schedule))\(assignee)")
                printRotation(template)
            }
        }
    }

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add a template: --daily, --weekly mon,thu, or --monthly 15.")
        @OptionGroup var options: HomeOptions
        @Argument var title: String
        @Flag(help: "Every day.") var daily = false
        @Option(help: "On these weekdays: mon,tue,wed,thu,fri,sat,sun.") var weekly: String?
        @Option(help: "On this day of the month (past the month's end: its last day).") var monthly: Int?
        @Option(help: "The member it is for.") var assignee: String?
        @Option(help: "Members it rotates among, in turn order: Anna,Ben,Cleo.") var rotate: String?

        func validate() throws {
            let count = (daily ? 1 : 0) + (weekly == nil ? 0 : 1) + (monthly == nil ? 0 : 1)
            guard count == 1 else { throw ValidationError(say("cli.recurring.one_schedule")) }
        }

        func run() throws {
            let schedule = daily ? "daily" : weekly.map { "weekly:\($0)" } ?? "monthly:\(monthly!)"
            let template = try options.write { household -> RecurringTemplate in
                let template = try household.addRecurringTemplate(title, schedule: schedule, assignee: assignee, rotation: names(rotate))
                try household.generateRecurringTasks()
                return template
            }
            print(say("cli.recurring.added", ["title": .string(template.title), "schedule": .string(scheduleText(template.schedule))]))
            printRotation(template) // its turns and counts as of today, from the write's answer
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove a template (tasks already made stay).")
        @OptionGroup var options: HomeOptions
        @Argument var template: String
        func run() throws {
            let removed = try options.write { try $0.removeRecurringTemplate(template) }
            print(say("cli.recurring.removed", ["title": .string(removed.title)]))
        }
    }

    struct Rotate: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make a template rotate among members (in turn order), or stop it with --off.",
            discussion: "A new rotation starts afresh today; today's task, if made and not done, goes to whoever it names.")
        @OptionGroup var options: HomeOptions
        @Argument var template: String
        @Argument(help: "Members in turn order: Anna,Ben,Cleo.") var members: String?
        @Flag(help: "Stop rotating: the template's own assignee again.") var off = false
        @Flag(help: "Print JSON.") var json = false

        func validate() throws {
            guard off != (members != nil) else { throw ValidationError(say("cli.recurring.rotate_usage")) }
        }

        func run() throws {
            let changed = try options.write { try $0.setRotation(template, members: names(members), off: off) }
            if json { return try Output.json(changed) }
            if off { return print(say("cli.recurring.rotation_off", ["title": .string(changed.title)])) }
            print(say("cli.recurring.rotation_set", ["title": .string(changed.title)]))
            printRotation(changed)
        }
    }

    struct Swap: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Swap two turns of a rotating template: whoever has the one does the other.")
        @OptionGroup var options: HomeOptions
        @Argument var template: String
        @Argument(help: "A day of one turn (today, tomorrow or YYYY-MM-DD).") var first: String
        @Argument(help: "A day of the other.") var second: String
        @Flag(help: "Print JSON.") var json = false

        func run() throws {
            let changed = try options.write { try $0.swapTurns(template, first, second) }
            if json { return try Output.json(changed) }
            print(say("cli.recurring.swapped", ["title": .string(changed.title)]))
            printRotation(changed)
        }
    }

    struct Away: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Days a member is away: their turns of every rotating task pass to the others.",
            subcommands: [AwayList.self, AwayAdd.self, AwayEnd.self], defaultSubcommand: AwayList.self)
    }

    struct AwayList: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List the times away not over yet.")
        @OptionGroup var options: HomeOptions
        @Flag(help: "Print JSON.") var json = false
        func run() throws {
            let spans = try options.read { try $0.awaySpans() }
            if json { return try Output.json(spans) }
            if spans.isEmpty { return print(say("cli.away.none")) }
            for span in spans {
                print(say("cli.away.span", ["name": .string(span.member), "first": .string(span.first), "last": .string(span.last)]))
            }
        }
    }

    struct AwayAdd: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "add", abstract: "Mark a member away, both days included.")
        @OptionGroup var options: HomeOptions
        @Argument var member: String
        @Option(help: "The first day away (today, tomorrow or YYYY-MM-DD).") var from: String
        @Option(help: "The last day away.") var to: String
        func run() throws {
            let span = try options.write { try $0.markAway(member, from: from, through: to) }
            print(say("cli.away.added", ["name": .string(span.member), "first": .string(span.first), "last": .string(span.last)]))
        }
    }

    struct AwayEnd: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "end", abstract: "A member is home again: their times away end yesterday.")
        @OptionGroup var options: HomeOptions
        @Argument var member: String
        func run() throws {
            _ = try options.write { try $0.endAway(member) }
            print(say("cli.away.ended", ["name": .string(member)]))
        }
    }
}

/// `Anna,Ben` as names (none: empty).
func names(_ list: String?) -> [String] {
    (list ?? "").split(separator: ",").map { $0.split(separator: " ").joined(separator: " ") }.filter { !$0.isEmpty }
}

/// A rotating template's people, next turns and this month's counts, indented under it.
private func printRotation(_ template: RecurringTemplate) {
    guard let rotation = template.rotation, !rotation.isEmpty else { return }
    let indent = String(repeating: " ", count: 7)
    print(indent + say("cli.recurring.rotates", ["names": .string(rotation.map(\.name).joined(separator: ", "))]))
    if let turns = template.turns, !turns.isEmpty {
        let text = turns.map { "\($0.period) \($0.member ?? say("cli.recurring.nobody"))" }.joined(separator: " · ")
        print(indent + say("cli.recurring.turns", ["turns": .string(text)]))
    }
    if let counts = template.doneThisMonth, !counts.isEmpty {
        let text = counts.map { "\($0.member) \($0.done)" }.joined(separator: " · ")
        print(indent + say("cli.recurring.done_this_month", ["counts": .string(text)]))
    }
}
