import PulseModel
import PulseStore

/// One entry of the conflict log, as people and scripts read it (`pulse-peer conflicts`).
public struct HouseholdConflict: Sendable, Codable, Equatable {
    public struct Side: Sendable, Codable, Equatable {
        public let value: FieldValue
        public let hlc: Int64
        public let replica: String
        /// The member who wrote it (id), nil for the system.
        public let member: String?
        /// That member's name (also for a member removed since), nil for the system.
        public let memberName: String?
        /// The name of the machine it was written on, when known.
        public let machine: String?
        /// The value as a person reads it (a member's name for an assignee, …).
        public let shown: String
        /// When it was written, Unix milliseconds.
        public var milliseconds: Int64 { Int64(HybridTimestamp(rawValue: hlc).milliseconds) }
    }

    public let id: Int64
    /// `overwritten`, `rejected` or `edit_of_deleted` (docs/ARCHITECTURE.md, "Conflict log").
    public let kind: String
    public let entity: String
    public let row: String
    public let field: String
    /// The row's title or name now ("Milk", "Water plants"), when it has one.
    public let title: String?
    public let kept: Side
    public let lost: Side
    /// One sentence in people's words (``ConflictWording/sentence(_:)``).
    public let summary: String
}

extension Household {
    /// What merges overwrote, newest first, with names and titles instead of ids.
    /// `words`: the reader's language, for `shown` and `summary` (the log itself keeps data).
    public func conflicts(limit: Int = 100, words: MessageCatalogue = .english) throws -> [HouseholdConflict] {
        let records = try store.conflicts(limit: limit)
        guard !records.isEmpty else { return [] }
        var members: [String: String] = [:]
        for row in try store.rows(.member) { members[row.id] = row.text("name") }
        var machines: [String: String] = [:]
        for row in try store.rows(.machine) { machines[row.id] = row.text("name") }
        var replicaMachine: [String: String] = [:]
        for row in try store.rows(.replica) {
            let machine = row.text("machine")
            replicaMachine[row.id] = machines[machine] ?? (row.text("label").isEmpty ? nil : row.text("label"))
        }
        func shown(_ value: FieldValue, _ entity: EntityKind, _ field: String) -> String {
            if case let .reference(target)? = entity.schema.field(field)?.type, target == .member, let id = value.textValue {
                return members[id] ?? words.text("conflict.removed_member")
            }
            return ConflictWording.value(value, entity: entity, field: field, words: words)
        }
        return try records.map { record in
            func side(_ s: ConflictRecord.Side) -> HouseholdConflict.Side {
                HouseholdConflict.Side(
                    value: s.value, hlc: s.stamp.hlc.rawValue, replica: s.stamp.origin.description, member: s.member,
                    memberName: s.member.map { members[$0] ?? words.text("conflict.removed_member") },
                    machine: replicaMachine[s.stamp.origin.description],
                    shown: shown(s.value, record.entity, record.field))
            }
            let row = try store.row(record.entity, record.rowID)
            let title = (row["title"] ?? row["name"])?.textValue
            let kept = side(record.kept), lost = side(record.lost)
            return HouseholdConflict(
                id: record.id, kind: record.kind.rawValue, entity: record.entity.rawValue, row: record.rowID,
                field: record.field, title: title, kept: kept, lost: lost,
                summary: ConflictWording.sentence(
                    kind: record.kind, entity: record.entity, field: record.field,
                    title: title, kept: kept, lost: lost, words: words))
        }
    }
}

/// How a conflict reads to a person, in the reader's words (`conflict.*` messages): pure
/// functions, table-tested. The log keeps data; each machine renders it in its language.
public enum ConflictWording {
    /// "the shopping item", "the task", … (with its title when known).
    public static func thing(_ entity: EntityKind, title: String?, words: MessageCatalogue = .english) -> String {
        let noun =
            words.has("conflict.entity.\(entity.rawValue)") ? words.text("conflict.entity.\(entity.rawValue)") : entity.rawValue.replacing("_", with: " ")
        if let title { return words.text("conflict.thing_titled", ["noun": .string(noun), "title": .string(title)]) }
        return words.text("conflict.thing", ["noun": .string(noun)])
    }

    /// A field's name in words.
    public static func field(_ entity: EntityKind, _ field: String, words: MessageCatalogue = .english) -> String {
        let key: String =
            switch (entity, field) {
            case (.shoppingItem, "state"): "state_shopping"
            case (.shoppingItem, "listed"), (.backlogItem, "position"), (.backlogCategory, "position"): "place"
            case (_, "deleted"), (_, "removed"): "deletion"
            default: field
            }
        return words.has("conflict.field.\(key)") ? words.text("conflict.field.\(key)") : field.replacing("_", with: " ")
    }

    /// A value in words ("on the list", "done", “Milk”, "none").
    public static func value(_ value: FieldValue, entity: EntityKind, field: String, words: MessageCatalogue = .english) -> String {
        func word(_ code: String) -> String { words.text("conflict.value.\(code)") }
        if value == .null { return word("none") }
        switch (entity, field) {
        case (.shoppingItem, "state"):
            switch value.textValue {
            case "active"?: return word("on_list")
            case "restock"?: return word("in_restock")
            default: return word("removed")
            }
        case (_, "done"): return word(value.boolValue == true ? "done" : "not_done")
        case (_, "deleted"), (_, "removed"): return word(value.boolValue == true ? "deleted" : "kept")
        case (.shoppingItem, "listed"), (.backlogItem, "position"), (.backlogCategory, "position"),
            (_, "created"), (_, "added"):
            return word("new_place")
        default: break
        }
        switch entity.schema.field(field)?.type {
        case .bool?: return word(value.boolValue == true ? "on" : "off")
        default:
            if let text = value.textValue { return words.text("conflict.value.text", ["text": .string(text)]) }
            if let number = value.integerValue { return String(number) }
            return "\(value)"
        }
    }

    /// One sentence: whose value stayed, whose was not kept, and why.
    public static func sentence(
        kind: ConflictKind, entity: EntityKind, field: String, title: String?,
        kept: HouseholdConflict.Side, lost: HouseholdConflict.Side, words: MessageCatalogue = .english
    ) -> String {
        func who(_ side: HouseholdConflict.Side) -> String {
            let name = side.memberName ?? words.text("conflict.household_itself")
            return side.machine.map { words.text("conflict.who_on", ["name": .string(name), "machine": .string($0)]) } ?? name
        }
        let params: [String: JSONValue] = [
            "thing": .string(Self.thing(entity, title: title, words: words)), "field": .string(Self.field(entity, field, words: words)),
            "kept": .string(who(kept)), "lost": .string(who(lost)),
            "keptValue": .string(kept.shown), "lostValue": .string(lost.shown),
        ]
        switch kind {
        case .editOfDeleted: return words.text("conflict.edit_of_deleted", params)
        case .overwritten, .rejected: return words.text("conflict.overwritten", params)
        }
    }
}

extension Household {
    static let conflictMethods: [APIMethod] = [
        .read("conflicts.list") { a, h in
            // `language`: the words of `summary` and `shown` (the log keeps data; English by default).
            let words = try a.optional("language").flatMap { try? MessageCatalogue.load($0, home: h.home) } ?? .english
            return try h.conflicts(limit: a["limit"] == nil ? 100 : max(1, min(a.integer("limit"), 10_000)), words: words)
        }
    ]
}
