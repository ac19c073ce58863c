import Crypto
import FoundationEssentials
import PulseModel
import PulseStore

/// A phone of the household (issue 42), as the computers' pages list it.
public struct PhoneRecord: Sendable, Codable, Equatable {
    public var id: String
    public var name: String
    /// Whose phone it is: the member's id and name (nil: nobody in particular).
    public var memberID: String?
    public var member: String?
    /// The machine that added it (its name when known) and when, Unix milliseconds.
    public var addedBy: String
    public var addedByName: String?
    public var added: Int64
    /// When it was removed (nil: it may sign in).
    public var removed: Int64?
}

/// The household's phones: replicated rows (`phone`, protocol 7), so that every agent can
/// check a phone's session (the row holds the SHA-256 of its cookie, never the cookie) and a
/// removal on any computer reaches every agent. A removal is set once: no method clears it.
extension Household {
    /// The member a phone's request acts as (its writes are signed with it, and "Me" is it),
    /// set for the length of one call; `.none`: this machine's member.
    @TaskLocal public static var actingMember: String?? = nil

    public func phones() throws -> [PhoneRecord] {
        let memberNames = Dictionary(try store.rows(.member).map { ($0.id, $0.text("name")) }, uniquingKeysWith: { a, _ in a })
        let machineNames = Dictionary(try machines().map { ($0.id, $0.name) }, uniquingKeysWith: { a, _ in a })
        return try store.rows(.phone).map { row in
            PhoneRecord(
                id: row.id, name: row.text("name"), memberID: row.optionalText("member"),
                member: row.optionalText("member").flatMap { memberNames[$0] }, addedBy: row.text("added_by"),
                addedByName: machineNames[row.text("added_by")], added: HybridTimestamp(rawValue: row.integer("added")).milliseconds,
                removed: row["removed"].integerValue.map { HybridTimestamp(rawValue: $0).milliseconds })
        }.sorted { ($0.removed == nil ? 0 : 1, -$0.added, $0.id) < ($1.removed == nil ? 0 : 1, -$1.added, $1.id) }
    }

    /// Adds a phone whose session cookie has SHA-256 `credential` (64 hex digits), for `member`.
    public func addPhone(name rawName: String, member: String?, credential: String) throws -> PhoneRecord {
        let name = try Validation.name(rawName, what: "phone_name", max: 100)
        guard credential.utf8.count == 64, credential.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) }) else {
            throw HouseholdError.refuse(.invalidSecret)
        }
        let memberID = try member.map { try resolveMember($0).id }
        let id = RowIDRules.newRowID()
        try store.write(member: self.memberID) { tx in
            let now = try store.orderingKey()
            _ = try tx.create(
                .phone, id,
                [
                    "name": .text(name), "member": memberID.map(FieldValue.text) ?? .null, "credential": .text(credential),
                    "added_by": .text(identity.machineID), "added": .integer(now), "removed": .null,
                ])
        }
        guard let phone = try phones().first(where: { $0.id == id }) else { throw HouseholdError.refuse(.notFound, ["kind": "phone"]) }
        return phone
    }

    /// The phone whose cookie has SHA-256 `credential`, if it is not removed.
    public func phone(credential: String) throws -> PhoneRecord? {
        guard credential.utf8.count == 64 else { return nil }
        guard let row = try store.rows(.phone, RowQuery(where: [("credential", .text(credential))])).first,
            row["removed"].integerValue == nil
        else { return nil }
        return try phones().first { $0.id == row.id }
    }

    /// Removes a phone for good (it must be added again to come back).
    public func removePhone(_ id: String) throws -> PhoneRecord {
        guard id.utf8.count <= 128, let phone = try phones().first(where: { $0.id == id }) else {
            throw HouseholdError.refuse(.noSuchPhone, ["id": .string(String(id.prefix(64)))])
        }
        guard phone.removed == nil else {
            throw HouseholdError.refuse(.alreadyRemoved, ["name": .string(phone.name), "id": .string(phone.id)])
        }
        try store.write(member: memberID) { tx in _ = try tx.put(.phone, id, ["removed": .integer(try store.orderingKey())]) }
        return try phones().first { $0.id == id } ?? phone
    }
}
