import ArgumentParser
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import PeerSync

struct Watch: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print what happens in the household as it happens (the running agent's live feed).",
        discussion: """
            Ends on Ctrl-C, or when the agent stops. With --json each event is one JSON object per line
            (docs/API.md, "subscribe"); its "token" resumes after it: `pulse-peer watch --since TOKEN` first
            prints what was missed (the agent keeps the last 1024 events in memory).
            Example: pulse-peer watch --topic shopping --topic tasks
            """)
    @OptionGroup var options: HomeOptions
    @Flag(help: "Print each event as one JSON object per line.") var json = false
    @Option(name: .customLong("topic"), help: "Only these topics (repeatable): shopping, tasks, backlog, kids, household, sync.")
    var topics: [String] = []
    @Option(help: "Resume after this token (from an earlier --json line).") var since: String?

    func validate() throws {
        let known = ["shopping", "tasks", "backlog", "kids", "household", "sync"]
        for topic in topics where !known.contains(topic) {
            throw ValidationError("unknown topic \(topic.debugDescription) (known: \(known.joined(separator: ", ")))")
        }
    }

    func run() throws {
        // Ctrl-C ends the watch quietly (exit 0): nothing to clean up but the socket.
        signal(SIGINT) { _ in _exit(0) }
        signal(SIGPIPE, SIG_IGN)
        do {
            try AgentControl.subscribe(
                topics: topics, resume: since, home: options.resolved,
                onAnswer: { answer in
                    if case let .object(result)? = answer.result, case .bool(true)? = result["gap"] {
                        Output.toStderr("watch: some events were missed (the agent restarted or too many happened); showing what comes now\n")
                    }
                    if !json { Output.toStderr("watching \(options.resolved.path) — Ctrl-C to stop\n") }
                },
                onEvent: { line in
                    if json {
                        Output.toStdout(Array(line) + [UInt8(ascii: "\n")])
                    } else if let event = try? JSONDecoder().decode(HouseholdEvent.self, from: line) {
                        Output.toStdout(Array((Self.describe(event) + "\n").utf8))
                    }
                })
        } catch {
            throw CLIError(error)
        }
        Output.toStderr("watch: the agent stopped\n")
    }

    /// One line for a person: "14:02  Tom added “Milk” to the Shopping List  (on tom-laptop)".
    static func describe(_ event: HouseholdEvent) -> String {
        let who = event.authorName ?? (event.author == nil ? "" : "someone")
        let what = event.title.map { "“\($0)”" } ?? (event.count > 1 ? "\(event.count) items" : "an item")
        let text: String
        switch event.type {
        case .shoppingAdded: text = "\(who) added \(what) to the Shopping List"
        case .shoppingChecked: text = "\(who) checked \(what) (to restock)"
        case .shoppingRestocked: text = "\(who) put \(what) back on the Shopping List"
        case .shoppingRenamed: text = "\(who) renamed an item to \(what)"
        case .shoppingRemoved: text = "\(who) cleared \(what)"
        case .taskAdded: text = "\(who) added the task \(what)"
        case .taskAssigned: text = "\(who) assigned \(what)"
        case .taskDone: text = "\(who) finished \(what)"
        case .taskReopened: text = "\(who) reopened \(what)"
        case .taskRemoved: text = "\(who) deleted the task \(what)"
        case .kidEarned: text = "\(what) earned"
        case .kidRedeemed: text = "\(what) redeemed"
        case .kidDeclined: text = "\(what) declined by the ledger rule"
        case .conflict: text = event.title ?? "concurrent edits resolved"
        case .peerConnected: text = "connected to \(event.machine ?? "a machine")"
        case .peerLost: text = "lost \(event.machine ?? "a machine")"
        case .changed:
            text = "\(who) changed \(event.entity?.split(separator: "_").joined(separator: " ") ?? "something")\(event.title.map { " “\($0)”" } ?? "")"
        }
        let count = event.count > 1 && event.title == nil ? "" : (event.count > 1 ? " (×\(event.count))" : "")
        let clock = Output.clock(milliseconds: event.time)
        let machine =
            event.local || event.machine == nil || event.type == .peerConnected || event.type == .peerLost
            ? "" : "  (on \(event.machine!))"
        return "\(clock)  \(text.hasPrefix(" ") ? String(text.dropFirst()) : text)\(count)\(machine)"
    }
}

struct Notifications: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Which notifications this machine shows (desktop and the --on-notify hook).",
        discussion: """
            Per machine: the person at this screen chooses. Never for your own changes, from any of your
            machines. Additions within the window (60–120 s) come as one notification that counts them.
            Example: pulse-peer notifications --tasks on --window 60
            """)
    @OptionGroup var options: HomeOptions
    @Option(help: "Items added to the Shopping List by others: on or off.") var shopping: Switch?
    @Option(help: "Tasks added or finished by others: on or off.") var tasks: Switch?
    @Option(help: "Tasks assigned to you: on or off.") var assigned: Switch?
    @Option(help: "Kids' redemptions: on or off.") var kids: Switch?
    @Option(help: "Seconds additions are gathered into one notification (60–120).") var window: Int?
    @Flag(help: "Print JSON.") var json = false

    enum Switch: String, ExpressibleByArgument, CaseIterable { case on, off }

    func validate() throws {
        if let window, !(60...120).contains(window) { throw ValidationError("--window must be 60–120 seconds") }
    }

    func run() throws {
        let household = try options.openHousehold()
        do {
            var settings = try household.notificationSettings()
            if let shopping { settings.shopping = shopping == .on }
            if let tasks { settings.tasks = tasks == .on }
            if let assigned { settings.assigned = assigned == .on }
            if let kids { settings.kids = kids == .on }
            if let window { settings.windowSeconds = window }
            if [shopping, tasks, assigned, kids].contains(where: { $0 != nil }) || window != nil {
                try household.setNotificationSettings(settings)
            }
            if json { return try Output.json(settings) }
            func word(_ on: Bool) -> String { on ? "on" : "off" }
            print("shopping   \(word(settings.shopping))   items others add to the Shopping List")
            print("tasks      \(word(settings.tasks))   tasks others add or finish")
            print("assigned   \(word(settings.assigned))   tasks assigned to you")
            print("kids       \(word(settings.kids))   kids' redemptions")
            print("window     \(settings.windowSeconds) s")
        } catch {
            throw CLIError(error)
        }
    }
}
