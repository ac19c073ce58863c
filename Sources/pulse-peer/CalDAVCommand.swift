import ArgumentParser
import PeerSync

/// `pulse-peer caldav`: the household's lists and tasks for apps over CalDAV (issue 59): on or off
/// on this computer (through the running agent, which serves it on the phones' listener), and
/// the members' app passwords (`caldav passwords`), replicated to every computer.
struct CalDAVCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "caldav",
        abstract: "Apps and assistants that reach the household over CalDAV: on or off here, and their passwords.",
        discussion: """
            Off until turned on. When on, this computer's agent serves the shopping lists, the tasks and the backlog as \
            to-do lists over HTTPS, beside the phones (pulse-peer phones on), under the household's own certificate authority.
            Each app gets its own password, made for one member, shown once, and kept by the household only as a slow \
            hash. A password revoked on any computer stops working on every one as soon as they sync.
            Example: pulse-peer caldav passwords add "Anna's iPhone Reminders" --member Anna
            """,
        subcommands: [Status.self, On.self, Off.self, Passwords.self], defaultSubcommand: Status.self)

    static func printState(_ result: JSONValue, json: Bool) throws {
        if json { return try Output.json(result) }
        guard case let .object(state) = result else { return }
        if case .bool(true)? = state["served"], case let .array(addresses)? = state["addresses"], !addresses.isEmpty {
            let urls = addresses.compactMap { if case let .string(url) = $0 { url } else { nil } }
            print(say("cli.caldav.on", ["url": .string(urls.joined(separator: "  "))]))
        } else if case .bool(true)? = state["on"] {
            print(say("cli.caldav.unserved"))
            PhonesCommand.printProblem(state["problem"])
        } else {
            print(say("cli.caldav.off"))
        }
    }

    struct Status: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Whether CalDAV is on here, and the address apps are given.")
        @OptionGroup var options: HomeOptions
        @Flag(help: "Print JSON.") var json = false
        func run() throws { try CalDAVCommand.printState(try PhonesCommand.call("caldav.get", [:], home: options.resolved), json: json) }
    }

    struct On: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Serve the household's lists to apps over CalDAV from this computer.")
        @OptionGroup var options: HomeOptions
        @Flag(help: "Print JSON.") var json = false
        func run() throws {
            try CalDAVCommand.printState(try PhonesCommand.call("caldav.set", ["on": .bool(true)], home: options.resolved), json: json)
        }
    }

    struct Off: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Stop serving CalDAV from this computer (app passwords stay).")
        @OptionGroup var options: HomeOptions
        @Flag(help: "Print JSON.") var json = false
        func run() throws {
            try CalDAVCommand.printState(try PhonesCommand.call("caldav.set", ["on": .bool(false)], home: options.resolved), json: json)
        }
    }

    struct Passwords: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The members' app passwords: list them, add one, revoke one.",
            subcommands: [List.self, Add.self, Revoke.self], defaultSubcommand: List.self)
    }

    static func line(_ record: AppPasswordRecord) -> String {
        say(
            "cli.caldav.password",
            [
                "label": .string(record.label), "member": .string(record.member ?? "—"), "login": .string(record.login),
                "created": .string(Output.dateTime(milliseconds: record.created)),
                "used": record.lastUsed == nil ? "no" : "yes", "lastUsed": .string(record.lastUsed.map { Output.dateTime(milliseconds: $0) } ?? ""),
                "revoked": record.revoked == nil ? "no" : "yes", "revokedAt": .string(record.revoked.map { Output.dateTime(milliseconds: $0) } ?? ""),
            ])
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The household's app passwords, live ones first (never the passwords).")
        @OptionGroup var options: HomeOptions
        @Flag(help: "Print JSON.") var json = false
        func run() throws {
            let records = try options.read { try $0.appPasswords() }
            if json { return try Output.json(records) }
            if records.isEmpty { return print(say("cli.caldav.passwords.empty")) }
            for record in records { print("\(String(record.id.suffix(8)))  " + CalDAVCommand.line(record)) }
        }
    }

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make a password for one app of one member; it is shown this once.",
            discussion: "Example: pulse-peer caldav passwords add \"Home Assistant\" --member Tom")
        @OptionGroup var options: HomeOptions
        @Argument(help: "What the app is (up to 60 characters): \"Anna's iPhone Reminders\".") var label: String
        @Option(help: "Whose it is (name or id; default: this computer's member).") var member: String?
        @Flag(help: "Print JSON (the password and its record).") var json = false
        func run() throws {
            let made = try options.write { try $0.createAppPassword(label: label, member: member) }
            if json { return try Output.json(made) }
            print(
                say(
                    "cli.caldav.password.new",
                    [
                        "label": .string(made.record.label), "password": .string(made.password), "login": .string(made.record.login),
                        "id": .string(String(made.record.id.suffix(8))),
                    ]))
        }
    }

    struct Revoke: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Revoke an app password for good, on every computer of the household.",
            discussion: "Example: pulse-peer caldav passwords revoke 3f2a9c1d   (as `caldav passwords` lists it: the end of its id, or the whole id)")
        @OptionGroup var options: HomeOptions
        @Argument(help: "The password (the end of its id as listed, or its id).") var password: String
        @Flag(help: "Print JSON.") var json = false
        func run() throws {
            let revoked = try options.write { household -> AppPasswordRecord in
                let matches = try household.appPasswords().filter { $0.id == password || (password.count >= 6 && $0.id.hasSuffix(password)) }
                guard matches.count == 1 else { throw CLIError(message: say("cli.caldav.password.handle", ["handle": .string(password)])) }
                return try household.revokeAppPassword(matches[0].id)
            }
            if json { return try Output.json(revoked) }
            print(CalDAVCommand.line(revoked))
        }
    }
}
