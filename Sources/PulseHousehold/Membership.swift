import Crypto
import FoundationEssentials
import PulseModel
import PulseStore

/// The household secret (32 random bytes, created by `init`, kept in the database's
/// local `meta`) proves membership in the sync handshake, and the invitation code
/// that carries it to a second machine.
///
/// The code is long on purpose: it *is* the secret, so it must not be guessable. A
/// short pairing code needs a PAKE or a confirmed short authentication string
/// (docs/ARCHITECTURE.md, "Membership"), which per-device trust will bring.
public struct Invitation: Sendable, Equatable {
    public static let prefix = "hp1-"
    public let householdID: String
    public let secret: [UInt8]
    /// The member the new machine will belong to (nil: none yet).
    public let memberID: String?

    public init(householdID: String, secret: [UInt8], memberID: String?) {
        self.householdID = householdID
        self.secret = secret
        self.memberID = memberID
    }

    /// `hp1-` + base64url(version ‖ household uuid ‖ secret ‖ member uuid or zeros ‖ 4-byte checksum).
    public var code: String {
        var bytes: [UInt8] = [1]
        bytes += Self.uuidBytes(householdID) ?? [UInt8](repeating: 0, count: 16)
        bytes += secret
        bytes += memberID.flatMap(Self.uuidBytes) ?? [UInt8](repeating: 0, count: 16)
        bytes += SHA256.hash(data: bytes).prefix(4)
        // base64url without padding (RFC 4648 §5).
        let base64 = Data(bytes).base64EncodedString()
        return Self.prefix + String(base64.compactMap { (c: Character) -> Character? in
            switch c {
            case "+": "-"
            case "/": "_"
            case "=": nil
            default: c
            }
        })
    }

    public init(code raw: String) throws {
        let code = raw.trimmed
        let invalid = HouseholdError.invalidInput("that is not a House Pulse invitation code (it starts with \(Self.prefix); copy it whole from `pulse-peer invite`)")
        guard code.hasPrefix(Self.prefix) else { throw invalid }
        var base64 = String(code.dropFirst(Self.prefix.count).map { (c: Character) -> Character in
            switch c {
            case "-": "+"
            case "_": "/"
            default: c
            }
        })
        while base64.count % 4 != 0 { base64 += "=" }
        guard let data = Data(base64Encoded: base64), data.count == 1 + 16 + 32 + 16 + 4 else { throw invalid }
        let bytes = [UInt8](data)
        guard bytes[0] == 1 else { throw HouseholdError.invalidInput("this invitation comes from a newer pulse-peer; upgrade pulse-peer") }
        guard Array(SHA256.hash(data: bytes[0..<65]).prefix(4)) == Array(bytes[65...]) else {
            throw HouseholdError.invalidInput("the invitation code is damaged (checksum mismatch): copy it again")
        }
        householdID = Self.uuidString(Array(bytes[1..<17]))
        secret = Array(bytes[17..<49])
        let member = Array(bytes[49..<65])
        memberID = member.allSatisfy { $0 == 0 } ? nil : Self.uuidString(member)
    }

    package static func uuidBytes(_ string: String) -> [UInt8]? {
        guard let uuid = UUID(uuidString: string) else { return nil }
        return withUnsafeBytes(of: uuid.uuid) { Array($0) }
    }

    package static func uuidString(_ bytes: [UInt8]) -> String {
        let u = bytes
        return UUID(uuid: (u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]))
            .uuidString.lowercased()
    }
}

extension Household {
    package static let secretKey = "household_secret"

    /// The household secret, as a key for the membership proof.
    public func membershipKey() throws -> SymmetricKey {
        guard case let .text(hex)? = try store.meta(Self.secretKey), let bytes = Self.bytes(hex: hex), bytes.count == 32 else {
            throw HouseholdError.io("the household secret is missing from \(home.databasePath)")
        }
        return SymmetricKey(data: bytes)
    }

    /// An invitation for another machine, for `member` (default: this machine's member).
    public func invitation(forMember name: String? = nil) throws -> Invitation {
        let key = try membershipKey()
        let member = try name.map { try memberID(named: $0) } ?? memberID
        return Invitation(householdID: householdID, secret: key.withUnsafeBytes { Array($0) }, memberID: member)
    }

    /// Sets up `home` as a new replica of the invited household: it learns everything
    /// from its peers once the agent runs.
    @discardableResult
    public static func join(_ home: HouseholdHome, invitation: Invitation, label: String? = nil) throws -> Household {
        try createReplica(home, householdID: invitation.householdID, memberID: invitation.memberID,
                          secret: invitation.secret, label: label)
    }

    /// The id of the (not removed) member called `name`, case-insensitively.
    public func memberID(named name: String) throws -> String {
        let members = try self.members()
        guard let match = members.first(where: { $0.name.lowercased() == name.lowercased() }) else {
            throw HouseholdError.invalidInput("no member called \(name.debugDescription); members: \(members.map(\.name).joined(separator: ", "))")
        }
        return match.id
    }

    package static func newSecret() -> [UInt8] {
        SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) }
    }

    package static func bytes(hex: String) -> [UInt8]? {
        guard hex.count % 2 == 0 else { return nil }
        var result: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            guard let byte = UInt8(hex[index..<next], radix: 16) else { return nil }
            result.append(byte)
            index = next
        }
        return result
    }
}
