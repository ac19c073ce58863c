import ArgumentParser
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import PeerSync

@main
struct PulsePeer: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pulse-peer",
        abstract: "House Pulse peer: a household kept in step between family computers, with no server.",
        discussion: """
            Start here:
              pulse-peer init               create the household on this machine
              pulse-peer service install    run the agent in the background
              pulse-peer open               House Pulse in your browser
              pulse-peer invite             then `pulse-peer join CODE` on the next machine
              pulse-peer shop add Milk      and everything else below
            `pulse-peer help COMMAND` explains a command, with examples.
            """,
        version: BuildStamp.description,
        groupedSubcommands: [
            CommandGroup(
                name: "Household",
                subcommands: [
                    Init.self, Open.self, HouseholdCommand.self, MemberCommand.self, Whoami.self,
                    SettingsCommand.self, LanguageCommand.self, Export.self, BackupCommand.self, Restore.self,
                ]),
            CommandGroup(name: "Shopping", subcommands: [Shop.self]),
            CommandGroup(name: "Tasks", subcommands: [TaskCommand.self, RecurringCommand.self]),
            CommandGroup(name: "Backlog", subcommands: [BacklogCommand.self]),
            CommandGroup(name: "Kids", subcommands: [KidsCommand.self]),
            CommandGroup(
                name: "Sync",
                subcommands: [
                    Run.self, ServiceCommand.self, Status.self, Watch.self, Notifications.self,
                    Conflicts.self,
                ]),
            CommandGroup(name: "Machines", subcommands: [Invite.self, Join.self, Devices.self, PhonesCommand.self]),
            CommandGroup(name: "Apps", subcommands: [CalDAVCommand.self]),
        ]
    )

    /// "Error: " before every error, in the reader's language (ArgumentParser's own words
    /// after it — a parse error, the usage lines — stay English, like `--help`).
    static var _errorPrefix: String { say("cli.error_prefix") + " " }

    /// Parses and runs a command; a word that is no command is named as such first
    /// (``UnknownWord``), where the parser would blame an option or an argument.
    static func main() async {
        // A parent may have started us with signals blocked (a child inherits its spawning
        // thread's mask: a dispatch worker thread blocks nearly all): SIGTERM and Ctrl-C
        // must work all the same, in this thread and every thread made after it.
        var none = sigset_t()
        sigemptyset(&none)
        pthread_sigmask(SIG_SETMASK, &none, nil)
        let arguments = Array(CommandLine.arguments.dropFirst())
        // The agent (`run`, what stays in memory all day) is parsed on its own: the whole
        // command tree makes the metadata and witness tables of all 90 commands, code and
        // memory an agent keeps for nothing (issue 54). Anything that does not parse so —
        // help, a mistake — goes the full way below, which says it as always.
        if arguments.first == "run", !arguments.contains(where: { ["-h", "--help", "help", "--version"].contains($0) }),
            let agent = try? Run.parseAsRoot(Array(arguments.dropFirst())) as? Run
        {
            do { try await agent.run() } catch { exit(withError: error) }
            return
        }
        if UnknownWord.check(arguments, under: PulsePeer.self, path: ["pulse-peer"]) != nil {
            // Said in the words `--lang` asks for (the options are not parsed yet): checked again once chosen.
            Words.chooseEarly(arguments)
            let message = UnknownWord.check(arguments, under: PulsePeer.self, path: ["pulse-peer"]) ?? ""
            Output.toStderr(_errorPrefix + message + "\n")
            Glibc.exit(ExitCode.validationFailure.rawValue)
        }
        do {
            var command = try parseAsRoot(arguments)
            if var command = command as? AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
        } catch {
            exit(withError: error)
        }
    }
}

/// Finds the first word on a command line that names no command: a misspelt command
/// (`pulse-peer kid`) or subcommand (`pulse-peer task frobnicate`, where `task` would
/// otherwise hand the word to its default subcommand `list`, which takes no arguments).
enum UnknownWord {
    static func check(_ arguments: [String], under command: ParsableCommand.Type, path: [String]) -> String? {
        let subcommands = command.configuration.subcommands
        guard !subcommands.isEmpty, let word = arguments.first, !word.hasPrefix("-") else { return nil }
        let names = subcommands.map { $0._commandName } + (path.count == 1 ? ["help"] : [])
        if let next = subcommands.first(where: { $0._commandName == word || $0.configuration.aliases.contains(word) }) {
            return check(Array(arguments.dropFirst()), under: next, path: path + [word])
        }
        if names.contains(word) { return nil }
        if let fallback = command.configuration.defaultSubcommand {
            // The default subcommand may take the word as an argument (then it is no error).
            guard refuses(fallback, word) else { return nil }
        }
        let guess = suggestion(for: word, among: names)
        let params: [String: JSONValue] = [
            "path": .string(path.joined(separator: " ")), "parent": .string(path.dropFirst().joined(separator: " ")),
            "word": .string(word), "suggest": guess == nil ? "no" : "yes", "guess": .string(guess ?? ""),
            "names": JSONValue(names.filter { $0 != "help" }),
        ]
        return say(path.count == 1 ? "cli.unknown_command" : "cli.unknown_subcommand", params)
    }

    /// Whether `command` (parsed alone) refuses `word` as an unexpected argument.
    static func refuses(_ command: ParsableCommand.Type, _ word: String) -> Bool {
        do {
            _ = try command.parseAsRoot([word])
            return false
        } catch {
            return command.message(for: error).contains("Unexpected argument")
        }
    }

    /// The closest name: one that starts with the word or the word with it, or is at most
    /// two edits away.
    static func suggestion(for word: String, among names: [String]) -> String? {
        let lower = word.lowercased()
        if let prefix = names.first(where: { $0.hasPrefix(lower) || lower.hasPrefix($0) }) { return prefix }
        let scored = names.map { ($0, distance(lower, $0)) }.filter { $0.1 <= 2 }
        return scored.min { $0.1 < $1.1 }?.0
    }

    static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        var row = Array(0...b.count)
        for i in 1...max(1, a.count) where !a.isEmpty {
            var previous = row[0]
            row[0] = i
            for j in 1...max(1, b.count) where !b.isEmpty {
                let current = row[j]
                row[j] = min(row[j] + 1, row[j - 1] + 1, previous + (a[i - 1] == b[j - 1] ? 0 : 1))
                previous = current
            }
        }
        return a.isEmpty ? b.count : row[b.count]
    }
}

/// Options every command that touches a household shares.
struct HomeOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "The household directory.",
            discussion: "Default: $PULSE_HOME, else $XDG_DATA_HOME/house-pulse, else ~/.local/share/house-pulse."),
        completion: .directory)
    var home: String?

    @Option(
        name: .customLong("lang"),
        help: ArgumentHelp(
            "The language of what the command says: en, pl, de or nl.",
            discussion: "Default: $PULSE_LANG, else $LANGUAGE, $LC_ALL, $LC_MESSAGES, $LANG, else English. --json output and --help stay the same."))
    var lang: String?

    var resolved: HouseholdHome { HouseholdHome.resolve(home) }

    func validate() throws {
        let emptyHome = home?.allSatisfy(\.isWhitespace) ?? false
        Words.choose(lang: lang, home: emptyHome ? nil : resolved)
        if emptyHome { throw ValidationError(say("cli.home_empty")) }
    }

    func openHousehold() throws -> Household {
        do { return try Household.open(resolved) } catch { throw CLIError(error) }
    }
}

/// Prints a person-readable error (no Swift type names) and exits non-zero.
struct CLIError: Error, CustomStringConvertible {
    let description: String
    init(_ error: Error) {
        switch error {
        case is HouseholdError, is Refusal: description = Refusal(error).cliMessage(Words.current)
        case let AgentControl.Failure.notRunning(home): description = say("cli.agent_not_running", ["home": .string(home)])
        case PairingError.badCode: description = say("cli.join.bad_code")
        case let error as PairingError: description = error.refusal.cliMessage(Words.current)
        default: description = String(describing: error) // another module's own words (PeerSync errors)
        }
    }
    init(message: String) { description = message }
}

extension HomeOptions {
    /// Runs a household write, then tells a running agent so peers get it at once.
    func write<T>(_ body: (Household) throws -> T) throws -> T {
        let household = try openHousehold()
        let result: T
        do { result = try body(household) } catch { throw CLIError(error) }
        AgentControl.notifyChanged(home: resolved)
        return result
    }
}
