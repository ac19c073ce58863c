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
    public func conflicts(limit: Int = 100) throws -> [HouseholdConflict] {
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
                return members[id] ?? "a removed member"
            }
            return ConflictWording.value(value, entity: entity, field: field)
        }
        return try records.map { record in
            func side(_ s: ConflictRecord.Side) -> HouseholdConflict.Side {
                HouseholdConflict.Side(
                    value: s.value, hlc: s.stamp.hlc.rawValue, replica: s.stamp.origin.description, member: s.member,
                    memberName: s.member.map { members[$0] ?? "a removed member" },
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
                    title: title, kept: kept, lost: lost))
        }
    }
}

/// How a conflict reads to a person: pure functions, table-tested.
public enum ConflictWording {
    /// "the shopping item", "the task", … (with its title when known).
    public static func thing(_ entity: EntityKind, title: String?) -> String {
        let noun: String =
            switch entity {
            case .shoppingItem: "shopping item"
            case .task: "task"
            case .backlogCategory: "backlog category"
            case .backlogItem: "backlog item"
            case .recurringTemplate: "recurring task"
            case .kid: "kid"
            case .catalogueSelection: "catalogue item"
            case .ledgerEntry: "ledger entry"
            case .member: "member"
            case .household: "household"
            case .settings: "household settings"
            case .machine: "machine"
            default: entity.rawValue.replacing("_", with: " ")
            }
        if let title { return "the \(noun) “\(title)”" }
        return "the \(noun)"
    }

    /// A field's name in words.
    public static func field(_ entity: EntityKind, _ field: String) -> String {
        switch (entity, field) {
        case (.shoppingItem, "state"): "place (list, restock pool or removed)"
        case (.shoppingItem, "listed"), (.backlogItem, "position"), (.backlogCategory, "position"): "place in the list"
        case (_, "done"): "done mark"
        case (_, "deleted"), (_, "removed"): "deletion"
        case (_, "due"): "due date"
        default: field.replacing("_", with: " ")
        }
    }

    /// A value in words ("on the list", "done", “Milk”, "none").
    public static func value(_ value: FieldValue, entity: EntityKind, field: String) -> String {
        if value == .null { return "none" }
        switch (entity, field) {
        case (.shoppingItem, "state"):
            switch value.textValue {
            case "active"?: return "on the list"
            case "restock"?: return "in the restock pool"
            default: return "removed"
            }
        case (_, "done"): return value.boolValue == true ? "done" : "not done"
        case (_, "deleted"), (_, "removed"): return value.boolValue == true ? "deleted" : "kept"
        case (.shoppingItem, "listed"), (.backlogItem, "position"), (.backlogCategory, "position"),
            (_, "created"), (_, "added"):
            return "a new place"
        default: break
        }
        switch entity.schema.field(field)?.type {
        case .bool?: return value.boolValue == true ? "on" : "off"
        default:
            if let text = value.textValue { return "“\(text)”" }
            if let number = value.integerValue { return String(number) }
            return "\(value)"
        }
    }

    /// One sentence: whose value stayed, whose was not kept, and why.
    public static func sentence(
        kind: ConflictKind, entity: EntityKind, field: String, title: String?,
        kept: HouseholdConflict.Side, lost: HouseholdConflict.Side
    ) -> String {
        func who(_ side: HouseholdConflict.Side) -> String {
            let name = side.memberName ?? "the household itself"
            return side.machine.map { "\(name) (on \($0))" } ?? name
        }
        let thing = Self.thing(entity, title: title)
        let what = Self.field(entity, field)
        switch kind {
        case .editOfDeleted:
            return "\(who(lost)) changed the \(what) of \(thing) to \(lost.shown) while \(who(kept)) deleted it: it stays deleted "
                + "(the change is kept inside it, should it come back)."
        case .overwritten, .rejected:
            return "\(who(kept)) and \(who(lost)) both changed the \(what) of \(thing) without seeing each other's change: "
                + "\(kept.shown), the later one, was kept; \(lost.shown) was not."
        }
    }
}
