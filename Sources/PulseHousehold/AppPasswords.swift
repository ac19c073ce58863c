import Crypto
import CryptoExtras
import FoundationEssentials
import PulseModel
import PulseStore

/// A member's password for an app (issue 59: Apple Reminders, DAVx⁵ with Tasks.org, Thunderbird,
/// Home Assistant) that reaches the household over CalDAV, as the pages list it: never the
/// password, never its hash.
public struct AppPasswordRecord: Sendable, Codable, Equatable {
    public var id: String
    public var label: String
    /// Whose it is: the member's id and current name (nil when the member was removed).
    public var memberID: String
    public var member: String?
    /// The user name the app was given (the member's name when it was made); the member's
    /// current name is accepted too.
    public var login: String
    /// Unix milliseconds.
    public var created: Int64
    public var lastUsed: Int64?
    public var revoked: Int64?
}

/// A live password a user name may mean, with its hash: what ``Household/appPasswordMatches(_:_:)``
/// checks a typed password against (never shown: the CalDAV service's sign-in only).
public struct AppPasswordCandidate: Sendable, Equatable {
    public var id: String
    public var memberID: String
    public var hash: String

    public init(id: String, memberID: String, hash: String) {
        self.id = id
        self.memberID = memberID
        self.hash = hash
    }
}

/// What a new password answers: the record, and the password itself, shown this once.
public struct NewAppPassword: Sendable, Codable, Equatable {
    public var password: String
    public var record: AppPasswordRecord
}

/// The household's app passwords: replicated rows (`app_password`, issue 59), so that a password
/// made on one computer works on every agent, and a revocation on any of them reaches every
/// agent at its next sync. A password is 20 characters of a 32-letter alphabet (100 bits),
/// shown once in groups of four; the row keeps an scrypt hash of it (N = 2^14, r = 8, p = 1),
/// never the password. Revoking is set once: no method clears it.
extension Household {
    static let appPasswordRounds = 1 << 14
    /// Live (not revoked) passwords the household keeps at most: a stranger's guesses are
    /// checked against a member's, so a member's count bounds the cost of a guess.
    static let appPasswordsPerMember = 20
    static let appPasswordAlphabet = Array("abcdefghijkmnpqrstuvwxyz23456789".utf8)
    /// How often the last use is written (each write is a replicated change).
    static let appPasswordUseInterval: Int64 = 3_600_000

    public func appPasswords() throws -> [AppPasswordRecord] {
        let names = Dictionary(try store.rows(.member).map { ($0.id, ($0.text("name"), $0.bool("removed"))) }, uniquingKeysWith: { a, _ in a })
        return try store.rows(.appPassword).map { row in
            let member = names[row.text("member")]
            return AppPasswordRecord(
                id: row.id, label: row.text("label"), memberID: row.text("member"), member: member?.1 == false ? member?.0 : nil,
                login: row.text("login"), created: HybridTimestamp(rawValue: row.integer("created")).milliseconds,
                lastUsed: row["last_used"].integerValue.map { HybridTimestamp(rawValue: $0).milliseconds },
                revoked: row["revoked"].integerValue.map { HybridTimestamp(rawValue: $0).milliseconds })
        }.sorted { ($0.revoked == nil ? 0 : 1, -$0.created, $0.id) < ($1.revoked == nil ? 0 : 1, -$1.created, $1.id) }
    }

    /// Makes a password for `member` (nil: this machine's member) named `label` ("Anna's iPhone
    /// Reminders"); the answer holds the password, which nothing shows again.
    public func createAppPassword(label rawLabel: String, member handle: String?) throws -> NewAppPassword {
        let label = try Validation.name(rawLabel, what: "app_label", max: 60)
        let member: Member
        if let handle {
            member = try resolveMember(handle)
        } else {
            guard let mine = try currentMemberID(), let found = try members().first(where: { $0.id == mine }) else {
                throw HouseholdError.refuse(.noMemberForMachine)
            }
            member = found
        }
        let live = try appPasswords().filter { $0.memberID == member.id && $0.revoked == nil }
        guard live.count < Self.appPasswordsPerMember else {
            throw HouseholdError.refuse(.tooManyAppPasswords, ["name": .string(member.name), "max": JSONValue(Self.appPasswordsPerMember)])
        }
        guard !live.contains(where: { $0.label.lowercased() == label.lowercased() }) else {
            throw HouseholdError.refuse(.duplicate, ["kind": "app_password", "name": .string(label)])
        }
        var generator = SystemRandomNumberGenerator()
        let letters = (0..<20).map { _ in Self.appPasswordAlphabet[Int.random(in: 0..<32, using: &generator)] }
        let password = stride(from: 0, to: 20, by: 4).map { String(decoding: letters[$0..<$0 + 4], as: UTF8.self) }.joined(separator: "-")
        let hash = try Self.hashAppPassword(String(decoding: letters, as: UTF8.self))
        let id = RowIDRules.newRowID()
        try store.write(member: memberID) { tx in
            _ = try tx.create(
                .appPassword, id,
                [
                    "member": .text(member.id), "login": .text(String(member.name.prefix(60))), "label": .text(label),
                    "hash": .text(hash), "created": .integer(try store.orderingKey()), "revoked": .null, "last_used": .null,
                ])
        }
        guard let record = try appPasswords().first(where: { $0.id == id }) else { throw HouseholdError.refuse(.noSuchAppPassword, ["id": .string(id)]) }
        return NewAppPassword(password: password, record: record)
    }

    /// Revokes a password for good, on every agent once they sync.
    public func revokeAppPassword(_ id: String) throws -> AppPasswordRecord {
        guard id.utf8.count <= 128, let record = try appPasswords().first(where: { $0.id == id }) else {
            throw HouseholdError.refuse(.noSuchAppPassword, ["id": .string(String(id.prefix(64)))])
        }
        guard record.revoked == nil else {
            throw HouseholdError.refuse(.alreadyRevoked, ["name": .string(record.label)])
        }
        try store.write(member: memberID) { tx in _ = try tx.put(.appPassword, id, ["revoked": .integer(try store.orderingKey())]) }
        return try appPasswords().first { $0.id == id } ?? record
    }

    /// The live password of the member `login` names (the name the app was given, or the
    /// member's current name; any case) that `password` is (groups, spaces and case aside), or nil.
    /// Each of that member's live passwords costs one scrypt: the caller bounds how often a
    /// stranger may ask (the CalDAV service's rate limit).
    public func appPassword(login: String, password: String) throws -> AppPasswordRecord? {
        for candidate in try appPasswordCandidates(login: login) where Self.appPasswordMatches(password, candidate) {
            return try appPasswords().first { $0.id == candidate.id }
        }
        return nil
    }

    /// The live passwords `login` may mean (by the name the app was given, or its member's
    /// current name; any case), each with its hash: read here, checked by
    /// ``appPasswordMatches(_:_:)`` off the store (each check is an scrypt: the CalDAV service
    /// runs it beside the store, not in it, so a stranger's guesses never hold up a sync).
    public func appPasswordCandidates(login: String) throws -> [AppPasswordCandidate] {
        let folded = login.trimmed.lowercased()
        guard !folded.isEmpty, folded.utf8.count <= 240 else { return [] }
        let members = Dictionary(try members().map { ($0.id, $0.name.lowercased()) }, uniquingKeysWith: { a, _ in a })
        return try store.rows(.appPassword).compactMap { row in
            guard row["revoked"].integerValue == nil, let current = members[row.text("member")],
                row.text("login").lowercased() == folded || current == folded
            else { return nil }
            return AppPasswordCandidate(id: row.id, memberID: row.text("member"), hash: row.text("hash"))
        }
    }

    /// Whether `password`, as typed into an app (groups, spaces and case aside), is the one
    /// `candidate` was made with: one scrypt (≈ 16 MiB for a moment).
    public static func appPasswordMatches(_ password: String, _ candidate: AppPasswordCandidate) -> Bool {
        let typed = String(
            decoding: password.utf8.filter { $0 != UInt8(ascii: "-") && $0 != UInt8(ascii: " ") }.map { (65...90).contains($0) ? $0 + 32 : $0 }, as: UTF8.self)
        guard typed.utf8.count == 20 else { return false }
        return (try? verifyAppPassword(typed, against: candidate.hash)) == true
    }

    /// Notes that a password was used now: written when the last write is an hour old or more.
    public func noteAppPasswordUse(_ id: String) throws {
        guard let row = try store.rows(.appPassword).first(where: { $0.id == id }), row["revoked"].integerValue == nil else { return }
        if let last = row["last_used"].integerValue, ReplicaStore.systemClock() - HybridTimestamp(rawValue: last).milliseconds < Self.appPasswordUseInterval {
            return
        }
        try store.write(member: memberID) { tx in _ = try tx.put(.appPassword, id, ["last_used": .integer(try store.orderingKey())]) }
    }

    /// `scrypt$N$r$p$salt$hash` (base64), as the PIN's.
    static func hashAppPassword(_ password: String) throws -> String {
        var salt = [UInt8](repeating: 0, count: 16)
        var generator = SystemRandomNumberGenerator()
        for index in salt.indices { salt[index] = UInt8.random(in: 0...255, using: &generator) }
        let key = try KDF.Scrypt.deriveKey(
            from: Array(password.utf8), salt: salt, outputByteCount: 32, rounds: appPasswordRounds, blockSize: 8, parallelism: 1)
        let hash = key.withUnsafeBytes { Array($0) }
        return "scrypt$\(appPasswordRounds)$8$1$\(Data(salt).base64EncodedString())$\(Data(hash).base64EncodedString())"
    }

    static func verifyAppPassword(_ password: String, against stored: String) throws -> Bool {
        let parts = stored.split(separator: "$").map(String.init)
        guard parts.count == 6, parts[0] == "scrypt", let rounds = Int(parts[1]), parts[2] == "8", parts[3] == "1",
            let salt = Data(base64Encoded: parts[4]), let expected = Data(base64Encoded: parts[5]), (1 << 10...1 << 16).contains(rounds)
        else { return false }
        let key = try KDF.Scrypt.deriveKey(from: Array(password.utf8), salt: Array(salt), outputByteCount: 32, rounds: rounds, blockSize: 8, parallelism: 1)
        let actual = key.withUnsafeBytes { Array($0) }
        guard actual.count == expected.count else { return false }
        return zip(actual, expected).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }
}

extension Household {
    static let appPasswordMethods: [APIMethod] = [
        .read("apps.passwords.list") { _, h in try h.appPasswords() },
        .write("apps.passwords.create") { a, h in try h.createAppPassword(label: a.string("label"), member: a.optional("member")) },
        .write("apps.passwords.revoke") { a, h in try h.revokeAppPassword(a.string("password")) },
    ]
}
