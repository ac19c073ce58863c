import ArgumentParser
import PeerSync

struct MemberCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "member", abstract: "The household's members.",
        discussion: """
            Examples:
              pulse-peer member add "Grandma Rose" --initials GR
              pulse-peer member edit Tom --color #5E8C31
              pulse-peer member remove Tom      (their tasks become unassigned)
            """,
        subcommands: [List.self, Add.self, Edit.self, Remove.self], defaultSubcommand: List.self)

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the members.")
        @OptionGroup var options: HomeOptions
        @Flag(help: "Print JSON.") var json = false
        func run() throws {
            let members = try options.read { try $0.members() }
            if json { return try Output.json(members) }
            for member in members {
                print("\(Output.pill(member.initials)) \(member.name)  \(member.color)" + (member.isThisMachine ? "  " + say("cli.member.this_machine") : ""))
            }
        }
    }

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add a member (initials and colour derived unless given).")
        @OptionGroup var options: HomeOptions
        @Argument var name: String
        @Option(help: "1 to 3 letters.") var initials: String?
        @Option(help: "#RRGGBB.") var color: String?
        func run() throws {
            let member = try options.write { try $0.addMember(name, initials: initials, color: color) }
            print(say("cli.member.added", ["name": .string(member.name), "initials": .string(member.initials), "color": .string(member.color)]))
        }
    }

    struct Edit: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Rename a member or change their initials or colour.")
        @OptionGroup var options: HomeOptions
        @Argument var member: String
        @Option var name: String?
        @Option var initials: String?
        @Option var color: String?
        func run() throws {
            let edited = try options.write { try $0.editMember(member, name: name, initials: initials, color: color) }
            print(say("cli.member.edited", ["name": .string(edited.name), "initials": .string(edited.initials), "color": .string(edited.color)]))
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove a member; their tasks become unassigned.")
        @OptionGroup var options: HomeOptions
        @Argument var member: String
        func run() throws {
            let removed = try options.write { try $0.removeMember(member) }
            print(say("cli.member.removed", ["name": .string(removed.name)]))
        }
    }
}

struct HouseholdCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "household", abstract: "The household's name.",
        discussion: "Examples: pulse-peer household; pulse-peer household rename \"The Smiths\"", subcommands: [Show.self, Rename.self],
        defaultSubcommand: Show.self)

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show the name and members.")
        @OptionGroup var options: HomeOptions
        func run() throws {
            let (name, members) = try options.read { (try $0.householdName(), try $0.members()) }
            print(name)
            print(say("cli.household.members", ["names": JSONValue(members.map(\.name))]))
        }
    }

    struct Rename: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Rename the household.")
        @OptionGroup var options: HomeOptions
        @Argument var name: String
        func run() throws { print(say("cli.household.renamed", ["name": .string(try options.write { try $0.renameHousehold(name) })])) }
    }
}

struct Whoami: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Which member this machine belongs to (used for authorship and \"assigned to me\").",
        discussion: "\"me\" in --assignee means this member. Example: pulse-peer whoami --set Tom")
    @OptionGroup var options: HomeOptions
    @Option(help: "Make this machine belong to another member.") var set: String?
    func run() throws {
        if let set {
            let member = try options.write { try $0.setThisMachine(member: set) } // the machine row changes: peers hear of it
            print(say("cli.whoami.set", ["name": .string(member.name)]))
            return
        }
        let member = try options.read { household in try household.members().first(where: \.isThisMachine) }
        print(member.map(\.name) ?? say("cli.whoami.none"))
    }
}

struct SettingsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "settings",
        abstract: "Settings: appearance (light/dark/system), celebrations, suggestions (on/off).",
        discussion: """
            Appearance and celebrations belong to this machine (the person at this screen chooses them);
            suggestions belong to the household and sync to every machine. Which member a machine belongs
            to is per machine too (`whoami`). Examples:
              pulse-peer settings                       show them
              pulse-peer settings appearance dark       this machine only
              pulse-peer settings suggestions off       the whole household
            """)
    @OptionGroup var options: HomeOptions
    @Argument(help: "A setting to change.") var key: String?
    @Argument(help: "Its new value.") var value: String?
    @Flag(help: "Print JSON.") var json = false

    func validate() throws {
        if let key, value == nil { throw ValidationError(say("cli.settings.value_missing", ["key": .string(key)])) }
    }

    func run() throws {
        let settings: HouseholdSettings
        if let key, let value {
            settings = try options.write { try $0.setSetting(key, value) }
        } else {
            settings = try options.read { try $0.settings() }
        }
        if json { return try Output.json(settings) }
        let rows: [(String, String, String)] = [
            ("cli.settings.appearance", settings.appearance.rawValue, "cli.settings.scope.machine"),
            ("cli.settings.celebrations", settings.celebrations ? "on" : "off", "cli.settings.scope.machine"),
            ("cli.settings.suggestions", settings.suggestions ? "on" : "off", "cli.settings.scope.household"),
        ]
        let width = rows.map { say($0.0).count }.max() ?? 0
        for (label, value, scope) in rows {
            print(say(label).padding(width + 2) + say("cli.settings.value", ["value": .string(value)]).padding(5) + "  " + say(scope))
        }
    }
}

/// A template's schedule as the command line shows it (`daily`, `weekly:mon,thu`,
/// `monthly:15`), its words and weekdays in the reader's language.
func scheduleText(_ spec: String) -> String {
    let parts = spec.split(separator: ":", maxSplits: 1).map(String.init)
    let argument = parts.count > 1 ? parts[1] : ""
    switch parts.first {
    case "daily": return say("cli.recurring.schedule.daily")
    case "weekly":
        let days = argument.split(separator: ",").map { say("cli.weekday.\($0)", or: String($0)) }
        return say("cli.recurring.schedule.weekly", ["days": .string(days.joined(separator: ","))])
    case "monthly": return say("cli.recurring.schedule.monthly", ["day": .string(argument)])
    default: return spec
    }
}
