import Crypto
import FoundationEssentials
import PulseIdentity
import X509

/// This computer's part of the household CA (decision 0014, option 1 as proposed): the root's
/// key and certificate when phones were turned on here, this agent's intermediate, and leaves
/// made in memory for the names and addresses the LAN listener serves. Kept in the home's
/// `phones/` directory (0700; keys 0600, written atomically); the root key never leaves it.
public struct AgentCertificates: Sendable {
    public static let directoryName = "phones"
    /// An intermediate with fewer days left than this is re-issued at the next open.
    static let renewBeforeDays = 30.0

    public let root: Certificate
    public let intermediate: Certificate
    let intermediateKey: P256.Signing.PrivateKey

    /// Opens this computer's CA files in `home`, making the root (once: `household` names it)
    /// and an intermediate for `machine` when missing, or re-issuing an intermediate close to
    /// its end. Keys are P-256 from swift-crypto; nothing here is a secret in output.
    public static func openOrCreate(home: URL, household: String, machine: String, now: Date) throws -> AgentCertificates {
        let directory = home.appendingPathComponent(directoryName)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        func file(_ name: String) -> URL { directory.appendingPathComponent(name) }
        let rootKey = try key(at: file("root-key.pem"))
        var root = try certificate(at: file("root.pem"))
        if root == nil || root?.publicKey != Certificate.PublicKey(rootKey.publicKey) {
            let made = try HouseholdCA.root(key: rootKey, household: household, now: now)
            try save(made, at: file("root.pem"))
            root = made
        }
        let agentKey = try key(at: file("agent-key.pem"))
        var intermediate = try certificate(at: file("agent.pem"))
        let fresh =
            intermediate.map {
                $0.publicKey == Certificate.PublicKey(agentKey.publicKey) && $0.issuer == root!.subject
                    && $0.notValidAfter.timeIntervalSince(now) > renewBeforeDays * 86_400
            } ?? false
        if !fresh {
            let made = try HouseholdCA.intermediate(root: root!, rootKey: rootKey, key: agentKey.publicKey, machine: machine, now: now)
            try save(made, at: file("agent.pem"))
            intermediate = made
        }
        return AgentCertificates(root: root!, intermediate: intermediate!, intermediateKey: agentKey)
    }

    /// A fresh leaf (a new key, in memory only) for what the listener serves, with the chain a
    /// TLS server sends: leaf, then intermediate.
    public func leaf(names: [String], addresses: [String], now: Date) throws -> (chain: [Certificate], key: P256.Signing.PrivateKey) {
        let key = P256.Signing.PrivateKey()
        let leaf = try HouseholdCA.leaf(
            issuer: intermediate, issuerKey: intermediateKey, key: key.publicKey, names: names, addresses: addresses, now: now)
        return ([leaf, intermediate], key)
    }

    static func key(at url: URL) throws -> P256.Signing.PrivateKey {
        if let data = FileManager.default.contents(atPath: url.path) {
            return try P256.Signing.PrivateKey(pemRepresentation: String(decoding: data, as: UTF8.self))
        }
        let key = P256.Signing.PrivateKey()
        try FileSafety.writeAtomically(Data(key.pemRepresentation.utf8), to: url, mode: 0o600)
        return key
    }

    static func certificate(at url: URL) throws -> Certificate? {
        guard let data = FileManager.default.contents(atPath: url.path) else { return nil }
        return try Certificate(pemEncoded: String(decoding: data, as: UTF8.self))
    }

    static func save(_ certificate: Certificate, at url: URL) throws {
        try FileSafety.writeAtomically(Data(try HouseholdCA.pem(certificate).utf8), to: url, mode: 0o644)
    }
}
