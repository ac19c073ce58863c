import ArgumentParser
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import PeerSync

struct Export: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show what this machine holds of the household; --json prints all of it canonically.",
        discussion: """
            Without --json: a summary for people (the household, its members, how many items, tasks and projects).
            With --json: every replicated row with its fields, keys and rows sorted; two machines that have
            converged print byte-identical output (compare them with diff). An export is for reading and
            comparing; to keep the household safe, use `pulse-peer backup` (a backup can be restored).
            Output that cannot be written whole (a full disk) is an error: with --output the file is written
            beside its name and renamed into place, so no truncated file is ever left.
            Example: pulse-peer export --json --output household.json
            """
    )

    @OptionGroup var options: HomeOptions

    @Flag(name: .long, help: "Print the whole household as canonical JSON.")
    var json = false

    @Option(name: .long, help: "Write to this file (whole, or not at all) instead of standard output.")
    var output: String?

    func run() throws {
        let household = try options.openHousehold()
        do {
            let text = json ? try household.canonicalExport() : try summary(household)
            if let output {
                try OutputFiles.writeAtomically(text, to: output, mode: 0o600)
            } else {
                try OutputFiles.writeToStandardOutput(text)
            }
        } catch {
            throw CLIError(error)
        }
    }

    private func summary(_ household: Household) throws -> String {
        let tasks = try household.tasks()
        let backlog = try household.backlog()
        let lines = [
            try household.householdName(),
            "  " + say("cli.export.members", ["names": JSONValue(try household.members().map(\.name))]),
            "  "
                + say(
                    "cli.export.shopping",
                    [
                        "active": JSONValue(try household.shoppingLists().reduce(0) { $0 + $1.active }),
                        "restock": JSONValue(try household.shoppingLists().reduce(0) { $0 + $1.restock }),
                    ]),
            "  "
                + say(
                    "cli.export.tasks",
                    [
                        "active": JSONValue(tasks.filter { !$0.done }.count), "done": JSONValue(tasks.filter(\.done).count),
                        "recurring": JSONValue(try household.recurringTemplates().count),
                    ]),
            "  "
                + say(
                    "cli.export.backlog",
                    ["categories": JSONValue(backlog.count), "items": JSONValue(backlog.reduce(0) { $0 + $1.items.count })]),
            say("cli.export.everything"),
        ]
        return lines.joined(separator: "\n") + "\n"
    }
}

struct BackupCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup",
        abstract: "Save a backup of the household now (a consistent snapshot that `pulse-peer restore` brings back).",
        discussion: """
            FILE defaults to house-pulse-backup-DATE.sqlite in the current directory; a directory gets that
            name inside it. An existing file is not replaced unless --force. The backup is written beside its
            name and renamed into place (owner-only): a crash or a full disk never leaves a partial backup.
            The running agent also keeps automatic backups in the home's backups/ directory: one a day for
            the last 7 days and one a week for the last 4 weeks (`pulse-peer backup --list`).
            A backup holds the household's secrets (its membership key): keep it as private as the home.
            Examples: pulse-peer backup; pulse-peer backup /media/usb; pulse-peer backup --list
            """
    )

    @OptionGroup var options: HomeOptions

    @Argument(help: "Where to write the backup.")
    var file: String?

    @Flag(help: "Replace FILE when it exists.")
    var force = false

    @Flag(help: "List the automatic backups kept in the home.")
    var list = false

    func validate() throws {
        if list && file != nil { throw ValidationError(say("cli.backup.list_takes_no_file")) }
    }

    func run() throws {
        let household = try options.openHousehold()
        if list {
            let directory = Household.backupsDirectory(options.resolved)
            let names = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [])
                .filter { $0.hasSuffix(".sqlite") }.sorted(by: >)
            if names.isEmpty { print(say("cli.backup.none", ["directory": .string(directory)])) }
            for name in names {
                // stat(2): the attribute dictionary's size is no `Int` here, which read as 0 KiB.
                var file = stat()
                let size = stat(directory + "/" + name, &file) == 0 ? Int(file.st_size) : 0
                print("\(directory)/\(name)  " + say("cli.backup.size", ["kib": JSONValue((size + 1023) / 1024)]))
            }
            return
        }
        var path = file ?? "house-pulse-backup-\(Days.today()).sqlite"
        var info = stat()
        if stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFDIR {
            path = (path.hasSuffix("/") ? path : path + "/") + "house-pulse-backup-\(Days.today()).sqlite"
        }
        if FileManager.default.fileExists(atPath: path) && !force {
            throw CLIError(message: say("cli.backup.exists", ["path": .string(path)]))
        }
        do {
            let bytes = try household.backUp(to: path)
            let params: [String: JSONValue] = [
                "household": .string(try household.householdName()), "path": .string(path), "kib": JSONValue(max(1, bytes / 1024)),
            ]
            print(say("cli.backup.done", params))
        } catch {
            throw CLIError(error)
        }
    }
}

struct Restore: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Bring the household back from a backup, when every computer of it was lost.",
        discussion: """
            Restores into a home with no household (a new computer, or a new --home): this computer comes back
            as a new machine of the household, with the backup's data; pair the family's other computers with
            it (`pulse-peer invite` here, `pulse-peer join CODE` there). The lost computers stay on the list of
            machines: remove those gone for good with `pulse-peer devices remove`.
            If another computer of the household still works, do not restore: pair with it instead, and it
            sends everything. A home that holds a household is refused, and nothing is changed.
            Example: pulse-peer restore house-pulse-backup-2026-11-24.sqlite
            """
    )

    @OptionGroup var options: HomeOptions

    @Argument(help: "The backup file (from `pulse-peer backup`, or the home's backups/ directory).")
    var file: String

    @Option(help: "This computer's name in the household (default: its host name).")
    var name: String?

    func run() throws {
        do {
            let (household, summary) = try Household.restore(from: file, into: options.resolved, label: name)
            let params: [String: JSONValue] = [
                "household": .string(summary.householdName ?? ""), "file": .string(file), "home": .string(options.resolved.path),
            ]
            print(say(summary.householdName == nil ? "cli.restore.done_unnamed" : "cli.restore.done", params))
            // Advice that works: a computer back as itself needs no pairing and loses no one;
            // a new machine is joined by empty homes only.
            if summary.cameBack {
                let name = try household.machines().first(where: \.isThisMachine)?.name ?? ""
                print(say("cli.restore.came_back", ["name": .string(name)]))
            } else {
                print(say("cli.restore.next"))
                let lost = try household.machines().filter { !$0.isThisMachine && !$0.isRemoved }
                if !lost.isEmpty { print(say("cli.restore.lost", ["names": JSONValue(lost.map(\.name))])) }
            }
        } catch {
            throw CLIError(error)
        }
    }
}
