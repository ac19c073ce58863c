#if canImport(Glibc)
import Glibc
#endif
/// The replicated entities of a household. The raw value is the SQLite table name
/// and the name on the wire.
public enum EntityKind: String, Sendable, Hashable, CaseIterable, Comparable, Codable {
    case household
    case settings
    case member
    case replica
    case shoppingItem = "shopping_item"
    case task
    case backlogCategory = "backlog_category"
    case backlogItem = "backlog_item"
    case recurringTemplate = "recurring_template"
    case kid
    case catalogueSelection = "catalogue_selection"
    case ledgerEntry = "ledger_entry"
    /// A machine admitted to the household (row id: its machine id).
    case machine
    /// A machine shut out for good (row id: its machine id). Append-only and set-once, so a
    /// removal can be neither undone nor overwritten (docs/SECURITY.md).
    case machineRemoval = "machine_removal"
    /// A key for recognising the household's mDNS advertisements; a new one is made at
    /// each removal (the newest is used, older ones still recognise stale machines).
    case discoveryKey = "discovery_key"
    /// The kids' PIN of the household (protocol 5): one row, `pin`, holding its salted slow
    /// hash and a pending reset (docs/SECURITY.md, "The kids' PIN").
    case kidsPIN = "kids_pin"
    /// A phone added to the household (protocol 7, issue 42; row id: its public id): its
    /// session's digest, whose phone it is, and, once set, when it was removed for good.
    case phone
    /// A root of the household's CA for the phones (protocol 8; row id: the SHA-256 of its
    /// public key, hex): its certificate and the machine that keeps its key. The earliest is
    /// the household's (docs/decisions/0014-household-ca.md).
    case caRoot = "ca_root"
    /// An agent's request for an intermediate certificate of the household's CA and, once the
    /// root's machine signed it, the certificate (protocol 8; row id: the machine's id).
    case caGrant = "ca_grant"
    /// Where an agent serves the phone app (protocol 8; row id: the machine's id): its
    /// `https://` addresses while phones are on there, null when off. A phone uses another
    /// agent of the household when its own does not answer.
    case phoneService = "phone_service"
    /// A shopping item checked off (issue 57; row id: a new one each time): the name as it was,
    /// who checked it and when. Append-only: the shop's walking order is learned from these
    /// (`WalkingOrder`), the same on every replica from the same rows.
    case shoppingCheckoff = "shopping_checkoff"
    /// A shopping list beside the household's first one ("Lidl", "Pharmacy": issue 57; row
    /// id: a new one). An item names its list (`shopping_item.list`); an item with none, or whose
    /// list was deleted, is on the first list (the household's, which has no row).
    case shoppingList = "shopping_list"
    /// A member's trip to the shops for one list ("I'm going shopping": issue 57; row id: a new
    /// one each time): who, which list and shop, when it started and ends by itself, and once
    /// set, when its shopper ended it.
    case shoppingTrip = "shopping_trip"
    /// A member away from home for a span of days (issue 58; row id: a new one): their turns
    /// of every rotating chore pass to the others meanwhile (``RotationRules``).
    case away
    /// Two turns of a rotating chore exchanged (issue 58; row id: a new one): whoever the
    /// rotation gives the one period does the other's, and the other way round. Append-only.
    case rotationSwap = "rotation_swap"
    /// A kid's savings goal (issue 58; row id: a new one): a reward saved for, its cost when
    /// chosen, and once set, when it ended (cancelled, replaced or redeemed) and the spend.
    case savingsGoal = "savings_goal"
    /// A chore a kid says they did, waiting for a parent (issue 58; row id: a new one): the
    /// chore's title and peanuts when reported, and once a parent declines it, when and their
    /// word. An approval is the earn whose id is the report's (``Ledger/reportEarnID(day:report:)``).
    case choreReport = "chore_report"
    /// A member's password for an app that reaches the household over CalDAV (issue 59; row id:
    /// a new one): its label, the member's name when made (the user name it was given), a slow
    /// hash, and once set, when it was revoked; when it was last used (at most hourly).
    case appPassword = "app_password"
    /// What an app over CalDAV made of a to-do the household holds (issue 59; row id: the
    /// item's, task's or project's own): the UID and name the app gave it, and what the
    /// household does not map (`PRIORITY`, `VALARM`, …), given back as the app wrote it.
    case calendarObject = "calendar_object"
    #if DEBUG
    /// A note: an entity of the "next" test release (``TestRelease``, with
    /// `shopping_item.brand`); in `allCases` only there, never in a release build.
    case note
    #endif

    /// Every entity of this release, in declaration order (`ordinal`); the "next" test release's
    /// last. Listed by hand because a debug build's `note` belongs only to that release: a new
    /// case goes here too (EntityRegistryTests holds the list to PROTOCOL.md §4).
    public static let allCases: [EntityKind] = {
        let released: [EntityKind] = [
            .household, .settings, .member, .replica, .shoppingItem, .task, .backlogCategory, .backlogItem,
            .recurringTemplate, .kid, .catalogueSelection, .ledgerEntry, .machine, .machineRemoval, .discoveryKey,
            .kidsPIN, .phone, .caRoot, .caGrant, .phoneService, .shoppingCheckoff, .shoppingList,
            .shoppingTrip, .away, .rotationSwap, .savingsGoal, .choreReport, .appPassword, .calendarObject,
        ]
        #if DEBUG
        if TestRelease.next { return released + [.note] }
        #endif
        return released
    }()

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }

    // By case, not by name: the standard library's defaults for a `RawRepresentable`
    // compare and hash the raw strings, and a catch-up hashes a row's entity once a change
    // (the apply's row keys: two string hashes a lookup, 7 % of the apply).
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.ordinal == rhs.ordinal }
    public func hash(into hasher: inout Hasher) { hasher.combine(ordinal) }
}

/// What a field may hold. The SQL schema repeats each rule as a CHECK constraint.
public enum FieldType: Sendable, Hashable {
    /// Trimmed-by-the-writer text of 1...max characters (0...max when `allowEmpty`).
    case text(max: Int, allowEmpty: Bool = false)
    case bool
    case integer(ClosedRange<Int64>)
    /// One of the listed words.
    case choice([String])
    /// An ISO calendar date, `YYYY-MM-DD`.
    case date
    /// The id of a row of another entity (not enforced as a foreign key: replicated
    /// rows may arrive in any order; see docs/ARCHITECTURE.md, "References").
    case reference(EntityKind)
    /// A hybrid timestamp, used as an ordering key.
    case timestamp
    /// A language a person reads: 2–8 lower-case letters a–z (a BCP 47 primary language
    /// subtag, as the message catalogues are named).
    case language
}

public struct FieldSpec: Sendable, Hashable {
    public let name: String
    public let type: FieldType
    public let nullable: Bool
    /// Set once, when the row is created; a later different value is malformed.
    public let immutable: Bool
    /// May be missing from a complete row, and then reads as null: a field added by a later
    /// protocol version, which rows created before it never received (implies `nullable`).
    public let optional: Bool
    /// Null until set, then never null again (a removal: `phone.removed`): the merge takes a
    /// value over a null whatever their stamps, and keeps a value against a later null, so
    /// every replica ends with the value in any order of arrival; a local write of null over
    /// it is refused.
    public let keptOnceSet: Bool

    public init(
        _ name: String, _ type: FieldType, nullable: Bool = false, immutable: Bool = false, optional: Bool = false,
        keptOnceSet: Bool = false
    ) {
        self.name = name
        self.type = type
        self.nullable = nullable || optional || keptOnceSet
        self.immutable = immutable
        self.optional = optional
        self.keptOnceSet = keptOnceSet
    }
}

/// The rules of one entity: its fields (every one of them is written when a row is
/// created; a row is visible in its typed table once all have arrived), and how a
/// deletion is expressed (a tombstone value of one field, never the absence of a row).
///
/// A class, made once per entity: every change and every row write consults its schema,
/// and a reference costs one retain where a copy of the struct cost one per array and string.
public final class EntitySchema: Sendable {
    public let kind: EntityKind
    public let fields: [FieldSpec]
    /// The field and value that mark a row deleted; nil for append-only entities.
    public let tombstone: (field: String, value: FieldValue)?
    /// Row ids that are fixed (singleton rows), or nil for generated ids.
    public let singletonRowID: String?
    public let fieldNames: [String]
    /// How many fields a complete row holds at least (the fields that are not `optional`).
    public let requiredFieldCount: Int
    /// The field numbers (places in `fields`) in the order of the fields' names: the order
    /// a change lists its fields in.
    public let numbersByName: [Int]
    /// The inverse of `numbersByName`: each field number's place in the order of names
    /// (a local write orders its fields by it without comparing the names).
    public let nameRanks: [Int]

    public init(kind: EntityKind, fields: [FieldSpec], tombstone: (field: String, value: FieldValue)?, singletonRowID: String?) {
        self.kind = kind
        self.fields = fields
        self.tombstone = tombstone
        self.singletonRowID = singletonRowID
        fieldNames = fields.map(\.name)
        requiredFieldCount = fields.count(where: { !$0.optional })
        numbersByName = fields.indices.sorted { fields[$0].name < fields[$1].name }
        var ranks = [Int](repeating: 0, count: fields.count)
        for (rank, number) in numbersByName.enumerated() { ranks[number] = rank }
        nameRanks = ranks
        precondition(fields.count <= 64, "a change's fields are told apart in 64 bits (validate)")
    }

    public func field(_ name: String) -> FieldSpec? { number(of: name).map { fields[$0] } }

    /// The number of the field named `name`: its place in `fields`. A scan, not a
    /// dictionary: an entity has at most a dozen short names, and comparing them costs
    /// less than hashing one.
    public func number(of name: String) -> Int? {
        // Lengths first: a name of another length is not compared (a call per comparison,
        // three lookups per field of every change applied).
        let length = name.utf8.count
        for (number, candidate) in fieldNames.enumerated() where candidate.utf8.count == length && candidate == name {
            return number
        }
        return nil
    }

    /// The same of a name's UTF-8 bytes as they arrive (a BATCH's): the wire takes the
    /// schema's own text of a known name, with no string made and validated per field.
    package func number(ofUTF8 bytes: UnsafeRawBufferPointer) -> Int? {
        for (number, candidate) in fieldNames.enumerated() where candidate.utf8.count == bytes.count {
            let equal =
                candidate.utf8.withContiguousStorageIfAvailable { utf8 in
                    bytes.count == 0 || memcmp(utf8.baseAddress!, bytes.baseAddress!, bytes.count) == 0
                } ?? candidate.utf8.elementsEqual(bytes)
            if equal { return number }
        }
        return nil
    }
}

public enum Limits {
    public static let maxRowIDLength = 128
    public static let maxFieldsPerChange = 16
    public static let maxMemberIDLength = 128
}

public enum ChangeValidationError: Error, Equatable, CustomStringConvertible {
    case badRowID(String)
    case unknownField(EntityKind, String)
    case duplicateField(EntityKind, String)
    case badValue(EntityKind, field: String, reason: String)
    case tooManyFields(Int)
    case emptyChange
    case badSequence
    case badMember
    /// A field of no meaning here (a later release's) beyond the bounds of what is kept.
    case badKeptField(code: UInt8, field: String, reason: String)

    public var description: String {
        switch self {
        case let .badRowID(id): "invalid row id \(id.prefix(40).debugDescription): 1–\(Limits.maxRowIDLength) characters of A–Z a–z 0–9 _ - . : @"
        case let .unknownField(entity, field): "\(entity.rawValue) has no field \(field.prefix(40).debugDescription)"
        case let .duplicateField(entity, field): "\(entity.rawValue).\(field) is set twice in one change"
        case let .badValue(entity, field, reason): "\(entity.rawValue).\(field): \(reason)"
        case let .tooManyFields(n): "a change sets \(n) fields (at most \(Limits.maxFieldsPerChange))"
        case .emptyChange: "a change sets no field"
        case .badSequence: "a change number must be 1 or more"
        case .badMember: "invalid member id"
        case let .badKeptField(code, field, reason): "entity \(code), field \(field.prefix(40).debugDescription): \(reason)"
        }
    }
}

extension EntityKind {
    public var schema: EntitySchema { Self.schemaTable[ordinal] }

    /// The entity's code: its number on the wire (PROTOCOL.md §4) and in the store's change
    /// index. A code is never reused or changed; a new entity takes the next number. It is
    /// not ``ordinal``, which follows `allCases`.
    public var code: UInt8 {
        switch self {
        case .household: 1
        case .settings: 2
        case .member: 3
        case .replica: 4
        case .shoppingItem: 5
        case .task: 6
        case .backlogCategory: 7
        case .backlogItem: 8
        case .recurringTemplate: 9
        case .kid: 10
        case .catalogueSelection: 11
        case .ledgerEntry: 12
        case .machine: 13
        case .machineRemoval: 14
        case .discoveryKey: 15
        case .kidsPIN: 16
        case .phone: 17
        case .caRoot: 18
        case .caGrant: 19
        case .phoneService: 20
        case .shoppingCheckoff: 21
        case .shoppingList: 22
        case .shoppingTrip: 23
        case .away: 24
        case .rotationSwap: 25
        case .savingsGoal: 26
        case .choreReport: 27
        case .appPassword: 28
        case .calendarObject: 29
        #if DEBUG
        case .note: 250
        #endif
        }
    }

    /// The entity of a code; nil for a code no entity of this release has.
    public init?(code: UInt8) {
        guard let entity = Self.byCode[Int(code)] else { return nil }
        self = entity
    }

    /// Entities by code (an index on every change decoded or read from the index).
    private static let byCode: [EntityKind?] = (0...Int(UInt8.max)).map { code in allCases.first { Int($0.code) == code } }

    /// The case's position in `allCases`.
    package var ordinal: Int {
        switch self {
        case .household: 0
        case .settings: 1
        case .member: 2
        case .replica: 3
        case .shoppingItem: 4
        case .task: 5
        case .backlogCategory: 6
        case .backlogItem: 7
        case .recurringTemplate: 8
        case .kid: 9
        case .catalogueSelection: 10
        case .ledgerEntry: 11
        case .machine: 12
        case .machineRemoval: 13
        case .discoveryKey: 14
        case .kidsPIN: 15
        case .phone: 16
        case .caRoot: 17
        case .caGrant: 18
        case .phoneService: 19
        case .shoppingCheckoff: 20
        case .shoppingList: 21
        case .shoppingTrip: 22
        case .away: 23
        case .rotationSwap: 24
        case .savingsGoal: 25
        case .choreReport: 26
        case .appPassword: 27
        case .calendarObject: 28
        #if DEBUG
        case .note: 29
        #endif
        }
    }

    /// The schemas by `ordinal`: an index, not a hash, on every change's path.
    private static let schemaTable: [EntitySchema] = allCases.map { schemas[$0]! }

    static let deleted = (field: "deleted", value: FieldValue.integer(1))
    private static let title = FieldSpec("title", .text(max: 200))

    /// A shopping item's fields (the "next" test release adds one: ``TestRelease``). `quantity`
    /// ("2", "1 kg") and `note` ("the lactose-free one") came with issue 57, through the open
    /// schema: optional (rows of earlier releases have neither), null when not given.
    private static var shoppingItemFields: [FieldSpec] {
        var fields = [
            FieldSpec("name", .text(max: 200)),
            FieldSpec("state", .choice(["active", "restock", "deleted"])),
            FieldSpec("listed", .timestamp),
            FieldSpec("quantity", .text(max: 40), optional: true),
            FieldSpec("note", .text(max: 200), optional: true),
            // The list it is on (a `shopping_list` row); null: the household's first list.
            FieldSpec("list", .reference(.shoppingList), optional: true),
        ]
        #if DEBUG
        if TestRelease.next { fields.append(FieldSpec("brand", .text(max: 40), optional: true)) }
        #endif
        return fields
    }

    private static let schemas: [EntityKind: EntitySchema] = {
        var list: [EntitySchema] = [
            EntitySchema(
                kind: .household, fields: [FieldSpec("name", .text(max: 100))],
                tombstone: nil, singletonRowID: "profile"),
            EntitySchema(
                kind: .settings,
                fields: [
                    FieldSpec("appearance", .choice(["light", "dark", "system"])),
                    FieldSpec("celebrations", .bool),
                    FieldSpec("suggestions", .bool),
                    // Whether a kid's chore waits for a parent's approval (issue 58); absent: no.
                    FieldSpec("kids_approval", .bool, optional: true),
                ], tombstone: nil, singletonRowID: "settings"),
            EntitySchema(
                kind: .member,
                fields: [
                    FieldSpec("name", .text(max: 60)),
                    FieldSpec("initials", .text(max: 3)),
                    FieldSpec("color", .text(max: 7)),
                    FieldSpec("removed", .bool),
                    // The language the member reads (protocol 6); null: automatic.
                    FieldSpec("language", .language, optional: true),
                ], tombstone: (field: "removed", value: .integer(1)), singletonRowID: nil),
            EntitySchema(
                kind: .replica,
                fields: [
                    FieldSpec("machine", .text(max: 64), immutable: true),
                    FieldSpec("label", .text(max: 100, allowEmpty: true)),
                ], tombstone: nil, singletonRowID: nil),
            EntitySchema(
                kind: .shoppingItem, fields: shoppingItemFields, tombstone: (field: "state", value: .text("deleted")),
                singletonRowID: nil),
            EntitySchema(
                kind: .task,
                fields: [
                    title,
                    FieldSpec("done", .bool),
                    FieldSpec("assignee", .reference(.member), nullable: true),
                    FieldSpec("due", .date, nullable: true),
                    FieldSpec("created", .timestamp, immutable: true),
                    FieldSpec("template", .reference(.recurringTemplate), nullable: true, immutable: true),
                    FieldSpec("period", .text(max: 16), nullable: true, immutable: true),
                    FieldSpec("deleted", .bool),
                ], tombstone: deleted, singletonRowID: nil),
            EntitySchema(
                kind: .backlogCategory,
                fields: [
                    title,
                    FieldSpec("position", .integer(Int64.min...Int64.max)),
                    FieldSpec("deleted", .bool),
                ], tombstone: deleted, singletonRowID: nil),
            EntitySchema(
                kind: .backlogItem,
                fields: [
                    title,
                    FieldSpec("category", .reference(.backlogCategory)),
                    FieldSpec("created", .timestamp, immutable: true),
                    FieldSpec("deleted", .bool),
                    // Protocol version 4: the item's place in its category (items ordered by
                    // `position`, else `created`). Rows made before version 4 have none.
                    FieldSpec("position", .integer(Int64.min...Int64.max), optional: true),
                ], tombstone: deleted, singletonRowID: nil),
            EntitySchema(
                kind: .recurringTemplate,
                fields: [
                    title,
                    FieldSpec("schedule", .text(max: 64)),
                    FieldSpec("assignee", .reference(.member), nullable: true),
                    FieldSpec("created", .timestamp, immutable: true),
                    FieldSpec("deleted", .bool),
                    // Issue 58, through the open schema: the members it rotates among (their ids,
                    // space-separated, in turn order; null: no rotation) and the first day the
                    // rotation counts from (a new rotation starts afresh).
                    FieldSpec("rotation", .text(max: 1000), optional: true),
                    FieldSpec("rotation_from", .date, optional: true),
                ], tombstone: deleted, singletonRowID: nil),
            EntitySchema(
                kind: .kid,
                fields: [
                    FieldSpec("name", .text(max: 60)),
                    FieldSpec("removed", .bool),
                ], tombstone: (field: "removed", value: .integer(1)), singletonRowID: nil),
            EntitySchema(
                kind: .catalogueSelection,
                fields: [
                    FieldSpec("kind", .choice(["rule", "chore", "reward"]), immutable: true),
                    title,
                    FieldSpec("peanuts", .integer(1...20)),
                    FieldSpec("category", .choice(["security", "respect", "fun"])),
                    FieldSpec("selected", .bool),
                    // A chore taking turns among kids (issue 58): their ids, space-separated, in turn order, and its first day.
                    FieldSpec("rotation", .text(max: 1000), optional: true),
                    FieldSpec("rotation_from", .date, optional: true),
                ], tombstone: (field: "selected", value: .integer(0)), singletonRowID: nil),
            // Append-only: a balance is the sum of entries, never a replicated counter.
            EntitySchema(
                kind: .ledgerEntry,
                fields: [
                    FieldSpec("kid", .reference(.kid), immutable: true),
                    FieldSpec("kind", .choice(["earn", "spend"]), immutable: true),
                    FieldSpec("peanuts", .integer(1...1000), immutable: true),
                    FieldSpec("selection", .reference(.catalogueSelection), nullable: true, immutable: true),
                    FieldSpec("title", .text(max: 200), immutable: true),
                    FieldSpec("created", .timestamp, immutable: true),
                    FieldSpec("hidden", .bool),
                    // Issue 58, through the open schema: an adult's bonus (an earn of no catalogue
                    // item) names the entry of the chore or rule done that it rewards.
                    FieldSpec("bonus_for", .reference(.ledgerEntry), immutable: true, optional: true),
                ], tombstone: nil, singletonRowID: nil),
            EntitySchema(
                kind: .machine,
                fields: [
                    FieldSpec("name", .text(max: 100)),
                    FieldSpec("member", .reference(.member), nullable: true),
                    FieldSpec("added_by", .text(max: 64)),
                    FieldSpec("added", .timestamp),
                ], tombstone: nil, singletonRowID: nil),
            EntitySchema(
                kind: .machineRemoval,
                fields: [
                    FieldSpec("removed_by", .text(max: 64), immutable: true),
                    FieldSpec("removed", .timestamp, immutable: true),
                ], tombstone: nil, singletonRowID: nil),
            EntitySchema(
                kind: .discoveryKey,
                fields: [
                    FieldSpec("key", .text(max: 64), immutable: true),
                    FieldSpec("created", .timestamp, immutable: true),
                ], tombstone: nil, singletonRowID: nil),
            EntitySchema(
                kind: .kidsPIN,
                fields: [
                    FieldSpec("hash", .text(max: 200), nullable: true),
                    FieldSpec("reset", .text(max: 300), nullable: true),
                ], tombstone: nil, singletonRowID: "pin"),
            EntitySchema(
                kind: .phone,
                fields: [
                    FieldSpec("name", .text(max: 100)),
                    FieldSpec("member", .reference(.member), nullable: true),
                    FieldSpec("credential", .text(max: 64), immutable: true),
                    FieldSpec("added_by", .text(max: 64), immutable: true),
                    FieldSpec("added", .timestamp, immutable: true),
                    FieldSpec("removed", .timestamp, keptOnceSet: true),
                    // Its session since it signed in again (its cookie expired unused): a
                    // later field, so every release keeps it (issue 51).
                    FieldSpec("renewed", .text(max: 64), optional: true),
                ], tombstone: nil, singletonRowID: nil),
            EntitySchema(
                kind: .caRoot,
                fields: [
                    FieldSpec("certificate", .text(max: 2000), immutable: true),
                    FieldSpec("holder", .text(max: 64), immutable: true),
                    FieldSpec("created", .timestamp, immutable: true),
                ], tombstone: nil, singletonRowID: nil),
            EntitySchema(
                kind: .caGrant,
                fields: [
                    FieldSpec("request", .text(max: 1000)),
                    FieldSpec("certificate", .text(max: 2000), nullable: true),
                    FieldSpec("requested", .timestamp),
                ], tombstone: nil, singletonRowID: nil),
            EntitySchema(
                kind: .phoneService,
                fields: [
                    FieldSpec("urls", .text(max: 600), nullable: true),
                    FieldSpec("updated", .timestamp),
                ], tombstone: nil, singletonRowID: nil),
            EntitySchema(
                kind: .shoppingCheckoff,
                fields: [
                    FieldSpec("name", .text(max: 200), immutable: true),
                    FieldSpec("member", .reference(.member), nullable: true, immutable: true),
                    FieldSpec("at", .timestamp, immutable: true),
                    // A person's correction instead of a check-off: the item was put after `after`
                    // (the name shown before it) and before `before` (the one after it).
                    FieldSpec("after", .text(max: 200), immutable: true, optional: true),
                    FieldSpec("before", .text(max: 200), immutable: true, optional: true),
                    // The list it was checked off (or corrected) on: each list learns its own shop.
                    FieldSpec("list", .reference(.shoppingList), immutable: true, optional: true),
                ], tombstone: nil, singletonRowID: nil),
            EntitySchema(
                kind: .shoppingList,
                fields: [
                    FieldSpec("name", .text(max: 60)),
                    FieldSpec("created", .timestamp, immutable: true),
                    FieldSpec("deleted", .bool),
                ], tombstone: deleted, singletonRowID: nil),
            EntitySchema(
                kind: .shoppingTrip,
                fields: [
                    FieldSpec("member", .reference(.member), nullable: true, immutable: true),
                    FieldSpec("list", .reference(.shoppingList), immutable: true, optional: true),
                    FieldSpec("shop", .text(max: 60), immutable: true, optional: true),
                    FieldSpec("started", .timestamp, immutable: true),
                    FieldSpec("until", .timestamp, immutable: true),
                    FieldSpec("ended", .timestamp, keptOnceSet: true),
                ], tombstone: nil, singletonRowID: nil),
        ]
        list += choreSchemas + appSchemas
        #if DEBUG
        if TestRelease.next {
            list.append(
                EntitySchema(
                    kind: .note, fields: [title, FieldSpec("done", .bool), FieldSpec("deleted", .bool)], tombstone: deleted,
                    singletonRowID: nil))
        }
        #endif
        return Dictionary(uniqueKeysWithValues: list.map { ($0.kind, $0) })
    }()
}
