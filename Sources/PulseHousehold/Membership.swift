import Crypto
import FoundationEssentials
import PulseModel
import PulseStore

/// The household secret (32 random bytes, created by `init`, kept in the database's
/// local `meta`) keys the HELLO proof (which household a machine belongs to); whether a
/// machine may sync is decided by the household's list of machines (Machines.swift).
/// Pairing carries the secret to a new machine (`pulse-peer invite` / `join`).
///
/// An `Invitation` is what a new replica needs; the library's tests build replicas with
/// it directly. It has no text form any more: the long code that carried the secret was a
/// way in forever, and is gone (docs/SECURITY.md).
public struct Invitation: Sendable, Equatable {
    public let householdID: String
    public let secret: [UInt8]
    /// The member the new machine will belong to (nil: none yet).
    public let memberID: String?

    /// How long a pairing code may work, in minutes (the agent, the page and the CLI check
    /// this one range), and how long it works unless asked.
    public static let minutes: ClosedRange<Int> = 1...60
    public static let defaultMinutes = 10

    public init(householdID: String, secret: [UInt8], memberID: String?) {
        self.householdID = householdID
        self.secret = secret
        self.memberID = memberID
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
        guard case let .text(hex)? = try store.meta(Self.secretKey), let bytes = Hex.bytes(hex), bytes.count == 32 else {
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
        try createReplica(
            home, householdID: invitation.householdID, memberID: invitation.memberID,
            secret: invitation.secret, label: label)
    }

    /// Sets up `home` as a new replica from a pairing's welcome: as ``join(_:invitation:label:)``,
    /// and it trusts the machine that admitted it until the household's list arrives.
    /// `member`: who uses this computer, said when joining (a name: the household's member of
    /// that name once its data arrives, or a new member, see ``claimWantedMember()``); it wins
    /// over the member the invitation suggests.
    @discardableResult
    public static func join(
        _ home: HouseholdHome, invitation: Invitation, introducedBy: String, discoveryKey: [UInt8],
        label: String? = nil, member: String? = nil
    ) throws -> Household {
        let wanted = try member.map(Validation.memberName)
        let household = try createReplica(
            home, householdID: invitation.householdID, memberID: wanted == nil ? invitation.memberID : nil,
            secret: invitation.secret, label: label, introducedBy: introducedBy, discoveryKey: discoveryKey)
        if let wanted { try household.store.setMeta(wantedMemberKey, .text(wanted)) }
        return household
    }

    static let wantedMemberKey = "wanted_member"

    /// The member this computer was joined for (`join --member`, the welcome's "Your name")
    /// while the household's members have not arrived yet.
    public func wantedMember() throws -> String? { try store.meta(Self.wantedMemberKey)?.textValue }

    /// Once the household's data is here (a catch-up ended): this computer becomes the member
    /// it was joined for — the member of that name (case-insensitively), or a new member when
    /// the household has none. Nil when nothing was waiting.
    @discardableResult
    public func claimWantedMember() throws -> Member? {
        guard let name = try wantedMember() else { return nil }
        let match = try members().first { $0.name.lowercased() == name.lowercased() }
        let member = try match ?? addMember(name)
        let claimed = try setThisMachine(member: member.id)
        try store.removeMeta(Self.wantedMemberKey)
        return claimed
    }

    /// The id of the (not removed) member called `name`, case-insensitively; `me` is this
    /// machine's member (a member may not be called "me").
    public func memberID(named name: String) throws -> String {
        if name.trimmed.lowercased() == Validation.me {
            guard let me = try currentMemberID() else {
                throw HouseholdError.refuse(actingMember == nil ? .noMemberForMachine : .noMemberForPhone, ["asked": "me"])
            }
            return me
        }
        let members = try self.members()
        guard let match = members.first(where: { $0.name.lowercased() == name.lowercased() }) else {
            throw HouseholdError.refuse(.unknownMember, ["name": .string(name), "members": JSONValue(members.map(\.name))])
        }
        return match.id
    }

    package static func newSecret() -> [UInt8] {
        SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) }
    }
}
