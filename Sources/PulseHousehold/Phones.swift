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

    /// The phone whose cookie has SHA-256 `credential`, if it is not removed: its session since
    /// it signed in again (`renewed`) once it did, else the one it was added with.
    public func phone(credential: String) throws -> PhoneRecord? {
        guard credential.utf8.count == 64 else { return nil }
        let row =
            try store.rows(.phone, RowQuery(where: [("renewed", .text(credential))])).first
            ?? store.rows(.phone, RowQuery(where: [("credential", .text(credential))])).first { $0.optionalText("renewed") == nil }
        guard let row, row["removed"].integerValue == nil else { return nil }
        return try phones().first { $0.id == row.id }
    }

    /// A new session for phone `id`, whose cookie has SHA-256 `credential`: the way back of a
    /// phone whose cookie expired unused (issue 51), proven by its roaming credential. Its old
    /// cookie stops working; its roaming credential stays (an older release checks it as it
    /// was). Refused for a removed phone: removal is for good.
    public func renewPhone(_ id: String, credential: String) throws -> PhoneRecord {
        guard credential.utf8.count == 64, credential.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) }) else {
            throw HouseholdError.refuse(.invalidSecret)
        }
        guard id.utf8.count <= 128, let phone = try phones().first(where: { $0.id == id }) else {
            throw HouseholdError.refuse(.noSuchPhone, ["id": .string(String(id.prefix(64)))])
        }
        guard phone.removed == nil else {
            throw HouseholdError.refuse(.alreadyRemoved, ["name": .string(phone.name), "id": .string(phone.id)])
        }
        try store.write(member: memberID) { tx in _ = try tx.put(.phone, id, ["renewed": .text(credential)]) }
        return try phones().first { $0.id == id } ?? phone
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

/// Where an agent of the household serves the phone app (protocol 8).
public struct PhoneServiceRecord: Sendable, Codable, Equatable {
    public var machine: String
    public var name: String?
    /// Its `https://` addresses (empty: phones are off there).
    public var urls: [String]
    public var isThisMachine: Bool
}

/// A phone using another agent of the household than the one that added it (issue 42: "the
/// phone works with any agent of the household it can reach"). Its session cookie belongs to
/// one agent's address, so the phone app carries a second credential for the others, sent as
/// `Authorization: Bearer` (never a cookie, so no other site's page can make the phone send it):
/// `PHONE_ID.HMAC`, HMAC-SHA256 over the phone's id and its session's digest with a key derived
/// (HKDF-SHA256) from the household's newest advertisement key. Every agent can check it, none
/// keeps it; a removed phone's is refused (its row says so); a removed *machine* cannot make
/// one (the advertisement key is made anew at every removal and reaches members only), and the
/// phone gets the new one from its own agent the next time it answers.
extension Household {
    static let roamingInfo = Array("house-pulse phone roaming v1".utf8)

    /// The roaming key: derived from the newest replicated advertisement key (nil: none yet).
    func roamingKey() throws -> SymmetricKey? {
        guard
            let newest = try store.rows(.discoveryKey).max(by: { ($0.integer("created"), $0.id) < ($1.integer("created"), $1.id) }),
            let bytes = Hex.bytes(newest.text("key")), bytes.count == 32
        else { return nil }
        return HKDF<SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(data: bytes), info: Self.roamingInfo, outputByteCount: 32)
    }

    /// Phone `id`'s roaming credential (nil: removed, unknown, or no key yet).
    public func phoneRoaming(_ id: String) throws -> String? {
        guard id.utf8.count <= 128, let row = try store.rows(.phone).first(where: { $0.id == id }), row["removed"].integerValue == nil,
            let key = try roamingKey()
        else { return nil }
        let mac = HMAC<SHA256>.authenticationCode(for: Array((id + "\n" + row.text("credential")).utf8), using: key)
        return id + "." + Hex.string(Array(mac))
    }

    /// The phone whose roaming credential is `roaming`, when it is valid now and the phone is
    /// not removed.
    public func phone(roaming: String) throws -> PhoneRecord? {
        guard roaming.utf8.count <= 200, let dot = roaming.lastIndex(of: ".") else { return nil }
        let id = String(roaming[..<dot])
        guard let expected = try phoneRoaming(id), Array(expected.utf8).count == Array(roaming.utf8).count else { return nil }
        // Compared in constant time (a digest of each: equal digests, equal texts).
        guard SHA256.hash(data: Array(expected.utf8)) == SHA256.hash(data: Array(roaming.utf8)) else { return nil }
        return try phones().first { $0.id == id }
    }

    /// Says where this machine serves phones (`urls` empty: it does not).
    public func setPhoneService(urls: [String]) throws -> PhoneServiceRecord {
        for url in urls {
            guard url.hasPrefix("https://"), url.utf8.count <= 200, !url.contains(" ") else {
                throw HouseholdError.refuse(.phoneURL, ["value": .string(String(url.prefix(200)))])
            }
        }
        let text = urls.joined(separator: " ")
        guard text.utf8.count <= 600 else { throw HouseholdError.refuse(.tooLong, ["field": "urls", "max": 600]) }
        let id = identity.machineID
        let current = try phoneServices().first { $0.machine == id }
        // Nothing said before and nothing to say (phones never on here): nothing written.
        if current?.urls != urls, current != nil || !urls.isEmpty {
            try store.write(member: memberID) { tx in
                _ = try tx.put(.phoneService, id, ["urls": urls.isEmpty ? .null : .text(text), "updated": .integer(try store.orderingKey())])
            }
        }
        return try phoneServices().first { $0.machine == id } ?? PhoneServiceRecord(machine: id, name: nil, urls: urls, isThisMachine: true)
    }

    /// Where the household's machines (those not removed) serve phones, this one first.
    public func phoneServices() throws -> [PhoneServiceRecord] {
        let machines = Dictionary(try machines().map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        return try store.rows(.phoneService).compactMap { row -> PhoneServiceRecord? in
            guard let machine = machines[row.id], machine.removed == nil else { return nil }
            let urls = row.optionalText("urls").map { $0.split(separator: " ").map(String.init) } ?? []
            return PhoneServiceRecord(machine: row.id, name: machine.name, urls: urls, isThisMachine: row.id == identity.machineID)
        }.sorted { ($0.isThisMachine ? 0 : 1, $0.machine) < ($1.isThisMachine ? 0 : 1, $1.machine) }
    }
}

extension Household {
    static let phoneMethods: [APIMethod] = [
        .read("phone.list") { _, h in try h.phones() },
        .write("phone.remove") { a, h in try h.removePhone(a.string("phone")) },
        .read("phone.service.list") { _, h in try h.phoneServices() },
        // The phones' listener's own (a phone approved, identified, renewed, roaming; where this
        // machine serves phones).
        .write("phone.add", for: APIMethod.plumbing) { a, h in
            try h.addPhone(name: a.string("name"), member: a.optional("member"), credential: a.string("credential"))
        },
        .read("phone.get", for: APIMethod.plumbing) { a, h in
            if case let .string(roaming)? = a["roaming"] { return try h.phone(roaming: roaming) }
            return try h.phone(credential: a.string("credential"))
        },
        .write("phone.renew", for: APIMethod.plumbing) { a, h in try h.renewPhone(a.string("phone"), credential: a.string("credential")) },
        .read("phone.roaming", for: APIMethod.plumbing) { a, h in try h.phoneRoaming(a.string("phone")) },
        .write("phone.service.set", for: APIMethod.plumbing) { a, h in
            guard case let .array(list)? = a["urls"] else { throw a.missing("urls", "array") }
            let urls = try list.map { value -> String in
                guard case let .string(url) = value else { throw HouseholdError.refuse(.wrongType, ["key": "urls", "type": "string"]) }
                return url
            }
            return try h.setPhoneService(urls: urls)
        },
    ]
}
