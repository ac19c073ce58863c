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
            throw ValidationError(say("cli.watch.unknown_topic", ["topic": .string(topic.debugDescription), "known": JSONValue(known)]))
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
                        Output.toStderr(say("cli.watch.gap") + "\n")
                    }
                    if !json { Output.toStderr(say("cli.watch.watching", ["path": .string(options.resolved.path)]) + "\n") }
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
        Output.toStderr(say("cli.watch.stopped") + "\n")
    }

    /// One line for a person: "14:02  Tom added “Milk” to the Shopping List  (on tom-laptop)".
    static func describe(_ event: HouseholdEvent) -> String {
        // Who: a member's name, "someone" (an author this machine cannot name), or nobody (the
        // household itself, e.g. a recurring task); what: a title, a count of items, or "an item".
        let entity = event.entity ?? "unknown"
        let params: [String: JSONValue] = [
            "by": .string(event.authorName != nil ? "name" : event.author == nil ? "none" : "someone"),
            "author": .string(event.authorName ?? ""),
            "what": .string(event.title != nil ? "title" : event.count > 1 ? "items" : "item"),
            "title": .string(event.titleKey.flatMap { Words.current.has($0) ? say($0) : nil } ?? event.title ?? ""),
            "count": JSONValue(event.count),
            "machine": .string(event.machine ?? ""), "known": event.machine == nil ? "no" : "yes",
            "entity": .string(Words.current.has("cli.watch.entity." + entity) ? entity : entity.split(separator: "_").joined(separator: " ")),
        ]
        // The message of the event's type: `shopping.added` → `cli.watch.shopping_added`.
        let text = String(say("cli.watch." + event.type.rawValue.replacing(".", with: "_"), params).trimmingPrefix(" "))
        let count = event.count > 1 && event.title != nil ? " " + say("cli.watch.times", ["count": JSONValue(event.count)]) : ""
        let clock = Output.clock(milliseconds: event.time)
        let machine =
            event.local || event.machine == nil || event.type == .peerConnected || event.type == .peerLost
            ? "" : "  " + say("cli.watch.on_machine", ["machine": .string(event.machine ?? "")])
        return "\(clock)  \(text)\(count)\(machine)"
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
        if let window, !(60...120).contains(window) { throw ValidationError(say("cli.notifications.window_range")) }
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
            func word(_ on: Bool) -> String { say("cli.settings.value", ["value": on ? "on" : "off"]) }
            let labels = ["shopping", "tasks", "assigned", "kids", "window"].map { say("cli.notifications.\($0)") }
            let width = (labels.map(\.count).max() ?? 0) + 3
            print(labels[0].padding(width) + word(settings.shopping) + "   " + say("cli.notifications.shopping_about"))
            print(labels[1].padding(width) + word(settings.tasks) + "   " + say("cli.notifications.tasks_about"))
            print(labels[2].padding(width) + word(settings.assigned) + "   " + say("cli.notifications.assigned_about"))
            print(labels[3].padding(width) + word(settings.kids) + "   " + say("cli.notifications.kids_about"))
            print(labels[4].padding(width) + say("cli.notifications.seconds", ["seconds": JSONValue(settings.windowSeconds)]))
        } catch {
            throw CLIError(error)
        }
    }
}
