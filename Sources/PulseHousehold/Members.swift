import FoundationEssentials
import PulseModel
import PulseStore

public struct Member: Sendable, Codable, Equatable {
    public let id: String
    public let name: String
    public let initials: String
    public let color: String
    public let isThisMachine: Bool
    /// The language the member chose to read (on every computer); nil: automatic.
    public var language: String? = nil
}

public struct HouseholdSettings: Sendable, Codable, Equatable {
    public enum Appearance: String, Sendable, Codable, CaseIterable { case light, dark, system }
    /// Per machine.
    public var appearance: Appearance
    /// Per machine.
    public var celebrations: Bool
    /// Household-wide.
    public var suggestions: Bool
    /// Household-wide: whether a kid's chore waits for a parent's approval (issue 58; set with the PIN).
    public var kidsApproval = false

    static let appearanceKey = "setting_appearance"
    static let celebrationsKey = "setting_celebrations"
}

/// Members, the household's name, its settings, and which member this machine is.
///
/// Per household (replicated): the name, members, suggestions (whether the household's
/// lists propose items from its history: one answer for everyone).
/// Per machine (local `meta`, never replicated): appearance and celebrations (how this
/// screen looks and whether it throws confetti: the choice of the person at it), which
/// notifications it shows, which member this machine belongs to, static peers, the last
/// shopping-list clear (for undo).
/// Migration: before version 4 appearance and celebrations were household-wide. A machine
/// that has not chosen its own keeps the value the household had (read from the
/// replicated row, which no version-4 machine writes any more); its first choice is its own.
extension Household {
    public func members() throws -> [Member] {
        let me = try currentMemberID()
        return try store.rows(.member, RowQuery(where: [("removed", .bool(false))], orderedBy: ["name"])).map { row in
            Member(
                id: row.id, name: row.text("name"), initials: row.text("initials"), color: row.text("color"),
                isThisMachine: row.id == me, language: row.optionalText("language"))
        }
    }

    /// The names of the members not removed, by id (for showing assignees).
    func memberNames() throws -> [String: String] {
        Dictionary(uniqueKeysWithValues: try members().map { ($0.id, $0.name) })
    }

    /// This machine's member as stored now (it may change while the household is open): who
    /// "me", "mine" and `isThisMachine` mean. For a phone's call (``acting(as:)``), the phone's
    /// member (nil: a phone of nobody in particular has no "me").
    public func currentMemberID() throws -> String? {
        if let actingMember { return actingMember }
        return try store.meta("member_id")?.textValue
    }

    public func resolveMember(_ handle: String) throws -> Member {
        try Handles.resolve(handle, in: members(), what: "member", list: "household", name: \.name, id: \.id)
    }

    @discardableResult
    public func addMember(_ name: String, initials: String? = nil, color: String? = nil) throws -> Member {
        let name = try Validation.memberName(name)
        let existing = try members()
        if existing.contains(where: { $0.name.lowercased() == name.lowercased() }) {
            throw HouseholdError.refuse(.duplicate, ["kind": "member", "name": .string(name)])
        }
        let id = RowIDRules.newRowID()
        // Initials given are checked; derived ones are whatever the name offers ("?" for a name
        // with no letter or digit, such as an emoji): the same rule as the welcome's members.
        var fields = try styleFields(initials: initials, color: color ?? MemberStyle.color(at: existing.count))
        if initials == nil { fields["initials"] = .text(MemberStyle.initials(of: name)) }
        try store.write(member: memberID) { tx in
            try tx.create(.member, id, RowFields(fields.merging(["name": .text(name), "removed": .bool(false)]) { $1 }))
        }
        return try resolveMember(id)
    }

    public func editMember(_ handle: String, name: String? = nil, initials: String? = nil, color: String? = nil) throws -> Member {
        let member = try resolveMember(handle)
        var fields = try styleFields(initials: initials, color: color)
        if let name {
            let name = try Validation.memberName(name)
            if try members().contains(where: { $0.id != member.id && $0.name.lowercased() == name.lowercased() }) {
                throw HouseholdError.refuse(.duplicate, ["kind": "member", "name": .string(name)])
            }
            fields["name"] = .text(name)
            if initials == nil { fields["initials"] = .text(MemberStyle.initials(of: name)) }
        }
        guard !fields.isEmpty else { throw HouseholdError.refuse(.nothingToChange, ["kind": "member"]) }
        try store.write(member: memberID) { try $0.put(.member, member.id, RowFields(fields)) }
        return try resolveMember(member.id)
    }

    /// Removes a member. Tasks assigned to them show as unassigned (derived, so every
    /// machine agrees even if an assignment crossed the removal); nothing else changes.
    public func removeMember(_ handle: String) throws -> Member {
        let member = try resolveMember(handle)
        guard try members().count > 1 else { throw HouseholdError.refuse(.lastMember) }
        try store.write(member: memberID) { try $0.put(.member, member.id, ["removed": .bool(true)]) }
        return member
    }

    /// Says which member this machine belongs to (a local setting), and tells the household
    /// through this machine's row (the computers' list says whose each is).
    public func setThisMachine(member handle: String) throws -> Member {
        let member = try resolveMember(handle)
        try store.setMeta("member_id", .text(member.id))
        if try !store.row(.machine, identity.machineID).isEmpty {
            try store.write(member: member.id) { try $0.put(.machine, identity.machineID, ["member": .text(member.id)]) }
        }
        return try resolveMember(member.id)
    }

    private func styleFields(initials: String?, color: String?) throws -> [String: FieldValue] {
        var fields: [String: FieldValue] = [:]
        if let initials {
            let value = initials.trimmed.uppercased()
            guard (1...3).contains(value.count), value.allSatisfy({ $0.isLetter || $0.isNumber }) else {
                throw HouseholdError.refuse(.invalidInitials)
            }
            fields["initials"] = .text(value)
        }
        if let color {
            let value = color.trimmed
            guard value.count == 7, value.first == "#", UInt32(value.dropFirst(), radix: 16) != nil else {
                throw HouseholdError.refuse(.invalidColor)
            }
            fields["color"] = .text(value.uppercased())
        }
        return fields
    }

    public func householdName() throws -> String {
        try store.value(.household, "profile", "name")?.textValue ?? "(not yet synced)"
    }

    public func renameHousehold(_ name: String) throws -> String {
        let name = try Validation.name(name, what: "household_name", max: 100)
        try store.write(member: memberID) { try $0.put(.household, "profile", ["name": .text(name)]) }
        return name
    }

    /// The settings in effect on this machine.
    public func settings() throws -> HouseholdSettings {
        let row = try store.row(.settings, "settings")
        let appearance = try store.meta(HouseholdSettings.appearanceKey)?.textValue ?? row["appearance"]?.textValue
        let celebrations = try store.meta(HouseholdSettings.celebrationsKey)?.textValue.map { $0 == "on" } ?? row["celebrations"]?.boolValue
        return HouseholdSettings(
            appearance: appearance.flatMap(HouseholdSettings.Appearance.init) ?? .system,
            celebrations: celebrations ?? true,
            suggestions: row["suggestions"]?.boolValue ?? true,
            kidsApproval: row["kids_approval"]?.boolValue ?? false)
    }

    /// Sets one setting: `appearance` (light, dark, system), `celebrations` or `suggestions` (on, off).
    public func setSetting(_ key: String, _ value: String) throws -> HouseholdSettings {
        let field: FieldValue
        switch key.lowercased() {
        case "appearance":
            guard let appearance = HouseholdSettings.Appearance(rawValue: value.lowercased()) else {
                throw HouseholdError.refuse(.invalidAppearance, ["value": .string(value)])
            }
            field = .text(appearance.rawValue)
        case "celebrations", "suggestions":
            switch value.lowercased() {
            case "on", "true", "yes", "1": field = .bool(true)
            case "off", "false", "no", "0": field = .bool(false)
            default: throw HouseholdError.refuse(.invalidSwitch, ["key": .string(key.lowercased()), "value": .string(value)])
            }
        default:
            throw HouseholdError.refuse(.unknownSetting, ["key": .string(key), "known": ["appearance", "celebrations", "suggestions"]])
        }
        switch key.lowercased() {
        case "appearance": try store.setMeta(HouseholdSettings.appearanceKey, field)
        case "celebrations": try store.setMeta(HouseholdSettings.celebrationsKey, .text(field.boolValue == true ? "on" : "off"))
        default: try store.write(member: memberID) { try $0.put(.settings, "settings", [key.lowercased(): field]) }
        }
        return try settings()
    }
}

extension Household {
    static let memberMethods: [APIMethod] = [
        .read("member.list", for: APIMethod.everyone) { _, h in try h.members() },
        .read("member.get") { a, h in try h.resolveMember(a.string("member")) },
        .write("member.add") { a, h in try h.addMember(a.string("name"), initials: a.optional("initials"), color: a.optional("color")) },
        .write("member.edit") { a, h in
            try h.editMember(a.string("member"), name: a.optional("name"), initials: a.optional("initials"), color: a.optional("color"))
        },
        .write("member.remove") { a, h in try h.removeMember(a.string("member")) },
        .write("whoami.set") { a, h in try h.setThisMachine(member: a.string("member")) },
    ]

    static let settingsMethods: [APIMethod] = [
        .read("settings.get", for: APIMethod.everyone) { _, h in try h.settings() },
        .write("settings.set") { a, h in try h.setSetting(a.string("key"), a.string("value")) },
        .read("notifications.get") { _, h in try h.notificationSettings() },
        .write("notifications.set") { a, h in
            // A key that is absent keeps its value.
            var settings = try h.notificationSettings()
            if let value = try a.bool("shopping") { settings.shopping = value }
            if let value = try a.bool("tasks") { settings.tasks = value }
            if let value = try a.bool("assigned") { settings.assigned = value }
            if let value = try a.bool("kids") { settings.kids = value }
            if a["windowSeconds"] != nil { settings.windowSeconds = try a.integer("windowSeconds") }
            try h.setNotificationSettings(settings)
            return try h.notificationSettings()
        },
        .read("language.get", for: APIMethod.everyone) { _, h in try h.languageChoice() },
        .write("language.set") { a, h in
            if a["language"] == nil { throw a.missing("language", "string_or_null") }
            return try h.setLanguage(scope: a.string("scope"), language: a.optional("language"))
        },
    ]
}
