import FoundationEssentials
import PulseModel
import PulseStore

/// A root of the household's CA for the phones, as the household knows it.
public struct CARootRecord: Sendable, Codable, Equatable {
    /// SHA-256 of the root's public key (SubjectPublicKeyInfo), 64 hex digits.
    public var id: String
    /// The certificate, base64 DER.
    public var certificate: String
    /// The machine that keeps its key (its name when known) and when it was published.
    public var holder: String
    public var holderName: String?
    public var created: Int64
    /// Its holder was removed from the household: the root is no longer the household's (its
    /// key may be in a stranger's hands); phones install the next one.
    public var retired: Bool
}

/// An agent's request for an intermediate certificate of the household's CA.
public struct CAGrantRecord: Sendable, Codable, Equatable {
    /// The asking machine (its name when known); `removed`: it was removed from the household
    /// (or is none of its machines): nothing is signed for it.
    public var machine: String
    public var machineName: String?
    public var removed: Bool
    /// Its certificate signing request (PKCS #10, base64 DER) for its intermediate's key.
    public var request: String
    /// The certificate the root's machine signed for that request (base64 DER), once it did.
    public var certificate: String?
    public var requested: Int64
}

/// The household CA's rows (protocol 8; docs/decisions/0014-household-ca.md): one root per
/// household — the earliest published, its key on the machine that made it, never replicated
/// — and, per other agent, a request for an intermediate and the certificate signed for it.
/// Only the household's machines write rows (sessions are mutually authenticated), so a
/// request needs no proof of its author: the certificate vouches only for the key it names.
/// Certificates are checked by whoever uses them (PulseCA), not here: these methods check
/// shapes only.
extension Household {
    /// The household's roots, the household's own first: the earliest published whose holder
    /// is still in the household (the same on every machine once in sync).
    public func caRoots() throws -> [CARootRecord] {
        let machines = Dictionary(try machines().map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        return try store.rows(.caRoot).map { row in
            let holder = machines[row.text("holder")]
            return CARootRecord(
                id: row.id, certificate: row.text("certificate"), holder: row.text("holder"), holderName: holder?.name,
                created: HybridTimestamp(rawValue: row.integer("created")).milliseconds, retired: holder?.removed != nil)
        }.sorted { ($0.retired ? 1 : 0, $0.created, $0.id) < ($1.retired ? 1 : 0, $1.created, $1.id) }
    }

    /// Publishes a root whose key this machine keeps (`id`: its public key's SHA-256, hex;
    /// `certificate`: base64 DER). A root already published is returned as it is.
    public func publishCARoot(id: String, certificate: String) throws -> CARootRecord {
        try Self.checkHexDigest(id, field: "id")
        try Self.checkBase64(certificate, field: "certificate", max: 2000)
        if let known = try caRoots().first(where: { $0.id == id }) { return known }
        try store.write(member: memberID) { tx in
            _ = try tx.put(
                .caRoot, id,
                ["certificate": .text(certificate), "holder": .text(identity.machineID), "created": .integer(try store.orderingKey())])
        }
        guard let root = try caRoots().first(where: { $0.id == id }) else { throw HouseholdError.refuse(.notFound, ["kind": "ca_root"]) }
        return root
    }

    /// The agents' requests, with their certificates once signed.
    public func caGrants() throws -> [CAGrantRecord] {
        let machines = Dictionary(try machines().map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        return try store.rows(.caGrant).map { row in
            CAGrantRecord(
                machine: row.id, machineName: machines[row.id]?.name, removed: machines[row.id].map { $0.removed != nil } ?? true,
                request: row.text("request"), certificate: row.optionalText("certificate"),
                requested: HybridTimestamp(rawValue: row.integer("requested")).milliseconds)
        }.sorted { $0.machine < $1.machine }
    }

    /// Asks the root's machine for an intermediate: `request` is this machine's CSR (PKCS #10,
    /// base64 DER), replacing any earlier one (its certificate goes with it).
    public func requestCAGrant(request: String) throws -> CAGrantRecord {
        try Self.checkBase64(request, field: "request", max: 1000)
        let id = identity.machineID
        try store.write(member: memberID) { tx in
            _ = try tx.put(.caGrant, id, ["request": .text(request), "certificate": .null, "requested": .integer(try store.orderingKey())])
        }
        guard let grant = try caGrants().first(where: { $0.machine == id }) else { throw HouseholdError.refuse(.notFound, ["kind": "ca_grant"]) }
        return grant
    }

    /// Records the intermediate signed for machine `machine`'s `request`: refused when that
    /// machine was removed, or it asked again meanwhile (its request is another now).
    public func grantCA(machine: String, request: String, certificate: String) throws -> CAGrantRecord {
        try Self.checkBase64(certificate, field: "certificate", max: 2000)
        guard let grant = try caGrants().first(where: { $0.machine == machine }) else {
            throw HouseholdError.refuse(.noCARequest, ["id": .string(String(machine.prefix(64)))])
        }
        guard !grant.removed else { throw HouseholdError.refuse(.caMachineRemoved, ["machine": .string(grant.machineName ?? machine)]) }
        guard grant.request == request else { throw HouseholdError.refuse(.caRequestChanged, ["machine": .string(grant.machineName ?? machine)]) }
        try store.write(member: memberID) { tx in _ = try tx.put(.caGrant, machine, ["certificate": .text(certificate)]) }
        return try caGrants().first { $0.machine == machine } ?? grant
    }

    static func checkHexDigest(_ text: String, field: String) throws {
        guard text.utf8.count == 64, text.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) }) else {
            throw HouseholdError.refuse(.invalidCertificate, ["field": .string(field)])
        }
    }

    static func checkBase64(_ text: String, field: String, max: Int) throws {
        guard (1...max).contains(text.utf8.count), text.utf8.count % 4 == 0, Data(base64Encoded: text) != nil else {
            throw HouseholdError.refuse(.invalidCertificate, ["field": .string(field)])
        }
    }
}

extension Household {
    static let caMethods: [APIMethod] = [
        .read("ca.get") { _, h in JSONValue.object(["roots": try .from(h.caRoots()), "grants": try .from(h.caGrants())]) },
        // The CA's own (docs/decisions/0014): the holder publishes, a machine asks, the holder signs.
        .write("ca.publish", for: APIMethod.plumbing) { a, h in try h.publishCARoot(id: a.string("id"), certificate: a.string("certificate")) },
        .write("ca.request", for: APIMethod.plumbing) { a, h in try h.requestCAGrant(request: a.string("request")) },
        .write("ca.grant", for: APIMethod.plumbing) { a, h in
            try h.grantCA(machine: a.string("machine"), request: a.string("request"), certificate: a.string("certificate"))
        },
    ]
}
