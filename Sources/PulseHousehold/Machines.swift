import Crypto
import FoundationEssentials
import PulseModel
import PulseStore

/// A machine of the household, as `pulse-peer devices` lists it.
public struct MachineRecord: Sendable, Codable, Equatable {
    public var id: String
    public var name: String
    /// The member it belongs to (name), when known.
    public var member: String?
    /// The machine that admitted it (nil: it founded the household, or joined before
    /// per-machine trust and is known from its replica record).
    public var addedBy: String?
    /// When it was admitted, Unix milliseconds.
    public var added: Int64?
    /// When and by which machine it was removed; nil while it is a member.
    public var removedBy: String?
    public var removed: Int64?
    public var isThisMachine: Bool
    /// When a machine of the same name joined after this one (Unix ms), while both are
    /// members: most often this very computer, wiped or re-installed and joined again, and
    /// this entry the old one to remove. Never set on this machine's own entry.
    public var namesakeJoined: Int64? = nil

    public var isRemoved: Bool { removed != nil }
}

/// Whether a machine may sync with this household (checked at every handshake).
public enum MachineTrust: Sendable, Equatable {
    case member
    /// Removed from the household: refused for good.
    case removed
    /// Not on the household's list.
    case unknown
}

/// The household's machines and the keys of its advertisements: replicated data, so every
/// machine enforces what any machine decided (docs/SECURITY.md, "Per-machine trust").
///
/// A machine is a member when the household's data lists it (a `machine` row, written when
/// it pairs, or — for machines that joined before per-machine trust — a `replica` row
/// naming it) and no `machine_removal` row names it. A removal is append-only and set-once:
/// no later write, from any machine, can take it back.
extension Household {
    /// Local (never replicated) meta keys of a machine that joined by pairing: the machine
    /// that admitted it (trusted before the household's list arrives), and the
    /// advertisement key it was given.
    package static let introducedByKey = "introduced_by"
    package static let introducedKeyKey = "introduced_discovery_key"

    /// Every machine the household knows, members first (this machine first), then removed ones.
    public func machines() throws -> [MachineRecord] {
        let memberNames = Dictionary(try store.rows(.member).map { ($0.id, $0.text("name")) }, uniquingKeysWith: { a, _ in a })
        var records: [String: MachineRecord] = [:]
        for row in try store.rows(.replica) {
            let id = row.text("machine")
            guard records[id] == nil else { continue }
            records[id] = MachineRecord(
                id: id, name: row.text("label").isEmpty ? "unnamed" : row.text("label"),
                isThisMachine: id == identity.machineID)
        }
        for row in try store.rows(.machine) {
            var record = records[row.id] ?? MachineRecord(id: row.id, name: row.text("name"), isThisMachine: row.id == identity.machineID)
            record.name = row.text("name")
            record.member = row.optionalText("member").flatMap { memberNames[$0] }
            record.addedBy = row.optionalText("added_by").flatMap { $0.isEmpty ? nil : $0 }
            record.added = HybridTimestamp(rawValue: row.integer("added")).milliseconds
            records[row.id] = record
        }
        for row in try store.rows(.machineRemoval) {
            var record = records[row.id] ?? MachineRecord(id: row.id, name: "unknown machine", isThisMachine: row.id == identity.machineID)
            record.removedBy = row.text("removed_by")
            record.removed = HybridTimestamp(rawValue: row.integer("removed")).milliseconds
            records[row.id] = record
        }
        // An entry whose name a later-joined member machine also has: probably this computer
        // before it joined again (the page offers to remove it, saying so as a question).
        let members = records.values.filter { !$0.isRemoved }
        for (id, record) in records where !record.isRemoved && !record.isThisMachine {
            let name = record.name.lowercased()
            records[id]?.namesakeJoined =
                members.filter { $0.id != id && $0.name.lowercased() == name && ($0.added ?? 0) > (record.added ?? 0) }
                .compactMap(\.added).max()
        }
        return records.values.sorted {
            ($0.isRemoved ? 1 : 0, $0.isThisMachine ? 0 : 1, $0.name.lowercased(), $0.id)
                < ($1.isRemoved ? 1 : 0, $1.isThisMachine ? 0 : 1, $1.name.lowercased(), $1.id)
        }
    }

    /// Whether `machineID` may sync with this household.
    public func trust(of machineID: String) throws -> MachineTrust {
        try Self.trust(of: machineID, in: store)
    }

    /// The same rule over any reader of this household's database (a session's own
    /// connection: ``PulseStore/DeltaReader``).
    public static func trust(of machineID: String, in store: some StoreReading) throws -> MachineTrust {
        guard RowIDRules.isValid(machineID) else { return .unknown }
        if try !store.row(.machineRemoval, machineID).isEmpty { return .removed }
        if try !store.row(.machine, machineID).isEmpty { return .member }
        if try !store.rows(.replica, RowQuery(where: [("machine", .text(machineID))])).isEmpty { return .member }
        if try store.meta(Self.introducedByKey)?.textValue == machineID { return .member }
        return .unknown
    }

    /// Admits `machineID` (a machine that proved it knows a pairing code).
    public func admit(machine machineID: String, name: String, memberID: String?) throws {
        guard machineID.count == 64, Hex.bytes(machineID) != nil else { throw HouseholdError.refuse(.invalidMachineID) }
        let name = try Validation.name(name, what: "machine_name", max: 100)
        switch try trust(of: machineID) {
        case .removed:
            throw HouseholdError.refuse(.machineRemoved)
        case .member, .unknown:
            try store.write(member: self.memberID) { tx in
                _ = try tx.put(
                    .machine, machineID,
                    [
                        "name": .text(name),
                        "member": memberID.map(FieldValue.text) ?? .null,
                        "added_by": .text(identity.machineID),
                        "added": .integer(try store.orderingKey()),
                    ])
            }
        }
    }

    /// Gives a machine (by a prefix of its id, 6+ hex digits) the name a person chose:
    /// replicated, so every machine lists it so (the host name, "debian", says little).
    /// Refused for a removed machine and one the household's list does not hold.
    @discardableResult
    public func renameMachine(_ prefix: String, to newName: String) throws -> MachineRecord {
        let name = try Validation.name(newName, what: "machine_name", max: 100)
        let target = try resolveMachine(prefix)
        guard !target.isRemoved else {
            throw HouseholdError.refuse(.alreadyRemoved, ["name": .string(target.name), "id": .string(String(target.id.prefix(12)))])
        }
        try store.write(member: memberID) { tx in
            if try store.row(.machine, target.id).isEmpty {
                // Joined before per-machine trust (known from its replica record): its row now.
                _ = try tx.put(
                    .machine, target.id,
                    ["name": .text(name), "member": .null, "added_by": .text(""), "added": .integer(try store.orderingKey())])
            } else {
                _ = try tx.put(.machine, target.id, ["name": .text(name)])
            }
        }
        return try machines().first { $0.id == target.id } ?? target
    }

    /// The machine whose id starts with `prefix` (6+ hex digits): unknown and ambiguous
    /// prefixes are refused, naming the candidates.
    func resolveMachine(_ prefix: String) throws -> MachineRecord {
        let wanted = prefix.trimmed.lowercased()
        guard wanted.count >= 6, Hex.bytes(wanted.count % 2 == 0 ? wanted : wanted + "0") != nil else {
            throw HouseholdError.refuse(.machineIDTooShort)
        }
        let matches = try machines().filter { $0.id.hasPrefix(wanted) }
        guard let target = matches.first else {
            throw HouseholdError.refuse(.notFound, ["kind": "machine", "list": "machines", "handle": .string(wanted)])
        }
        guard matches.count == 1 else {
            throw HouseholdError.refuse(
                .ambiguous,
                [
                    "kind": "machine", "list": "machines", "handle": .string(wanted), "count": JSONValue(matches.count),
                    "candidates": .array(matches.map { .object(["id": .string($0.id), "label": .string("\($0.id.prefix(12)) \($0.name)")]) }),
                ])
        }
        return target
    }

    /// Removes the machine whose id starts with `prefix` (at least 6 hex digits), and makes
    /// a new advertisement key in the same transaction. Refuses this machine, an unknown
    /// or ambiguous id, and one already removed.
    @discardableResult
    public func removeMachine(_ prefix: String) throws -> MachineRecord {
        let target = try resolveMachine(prefix)
        guard !target.isThisMachine else {
            throw HouseholdError.refuse(.cannotRemoveSelf)
        }
        guard !target.isRemoved else {
            throw HouseholdError.refuse(.alreadyRemoved, ["name": .string(target.name), "id": .string(String(target.id.prefix(12)))])
        }
        try store.write(member: memberID) { tx in
            let now = try store.orderingKey()
            _ = try tx.create(.machineRemoval, target.id, ["removed_by": .text(identity.machineID), "removed": .integer(now)])
            _ = try tx.create(.discoveryKey, RowIDRules.newRowID(), ["key": .text(Household.newDiscoveryKey()), "created": .integer(now)])
        }
        return try machines().first { $0.id == target.id } ?? target
    }

    /// The keys that recognise the household's advertisements, the one to advertise with
    /// first: the replicated keys (newest first), the one given at pairing, and the
    /// household secret (the key of households from before per-machine trust).
    public func discoveryKeys() throws -> [SymmetricKey] {
        var hexKeys = try store.rows(.discoveryKey).sorted { ($0.integer("created"), $0.id) > ($1.integer("created"), $1.id) }
            .map { $0.text("key") }
        if let given = try store.meta(Self.introducedKeyKey)?.textValue, !hexKeys.contains(given) { hexKeys.append(given) }
        var keys = hexKeys.compactMap { Hex.bytes($0) }.filter { $0.count == 32 }.map { SymmetricKey(data: $0) }
        keys.append(try membershipKey())
        return keys
    }

    package static func newDiscoveryKey() -> String {
        SymmetricKey(size: .bits256).withUnsafeBytes { Hex.string(Array($0)) }
    }
}

extension Household {
    static let machineMethods: [APIMethod] = [
        .read("machine.list") { _, h in try h.machines() },
        .write("machine.rename") { a, h in try h.renameMachine(a.string("machine"), to: a.string("name")) },
        .write("machine.remove") { a, h in try h.removeMachine(a.string("machine")) },
    ]
}
