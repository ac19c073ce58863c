import Crypto
import FoundationEssentials
import PulseIdentity
import SwiftASN1
import X509

/// This computer's part of the household CA (decision 0014, option 1): the household's root,
/// this agent's intermediate, and leaves made in memory for the names and addresses the LAN
/// listener serves. On the root's computer (the holder) the root's key is here and signs the
/// intermediates; every other agent sends a certificate signing request through the household
/// (`ca_grant` rows) and uses the intermediate the holder signed for it. Keys are kept in the
/// home's `phones/` directory (0700; keys 0600, written atomically) and never leave it.
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
        let file = try directory(home)
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
                    && !dueForRenewal($0, root: root!, now: now)
            } ?? false
        if !fresh {
            let made = try HouseholdCA.intermediate(root: root!, rootKey: rootKey, key: agentKey.publicKey, machine: machine, now: now)
            try save(made, at: file("agent.pem"))
            intermediate = made
        }
        return AgentCertificates(root: root!, intermediate: intermediate!, intermediateKey: agentKey)
    }

    /// Whether this computer keeps a root's key (it made one: it may sign intermediates).
    public static func keepsARoot(home: URL) -> Bool {
        FileManager.default.fileExists(atPath: home.appendingPathComponent(directoryName).appendingPathComponent("root-key.pem").path)
    }

    /// The root this computer keeps (nil: it keeps none), checked against its key.
    public static func ownRoot(home: URL) throws -> Certificate? {
        guard keepsARoot(home: home) else { return nil }
        let file = try directory(home)
        let rootKey = try key(at: file("root-key.pem"))
        guard let root = try certificate(at: file("root.pem")), root.publicKey == Certificate.PublicKey(rootKey.publicKey) else { return nil }
        return root
    }

    /// This agent's certificate signing request (PKCS #10) for its intermediate's key (the key
    /// made once, kept here), to send to the root's computer through the household.
    public static func request(home: URL, machine: String) throws -> CertificateSigningRequest {
        let file = try directory(home)
        let agentKey = try key(at: file("agent-key.pem"))
        let subject = try DistinguishedName {
            OrganizationName("House Pulse")
            CommonName("\(machine) — agent")
        }
        return try CertificateSigningRequest(
            version: .v1, subject: subject, privateKey: Certificate.PrivateKey(agentKey), attributes: CertificateSigningRequest.Attributes())
    }

    /// What is wrong with a certificate the household offers this agent.
    public enum Refusal: Error, Equatable, CustomStringConvertible {
        case notForThisKey, notFromTheRoot, expired, requestNotSigned

        public var description: String {
            switch self {
            case .notForThisKey: "the intermediate certifies another key than this agent's"
            case .notFromTheRoot: "the intermediate is not signed by the household's root"
            case .expired: "the intermediate is outside its validity"
            case .requestNotSigned: "the certificate signing request is not signed by its own key"
            }
        }
    }

    /// This agent's certificates from the intermediate `granted`, which the root's computer
    /// signed for this agent's request: refused unless it certifies this agent's key, is signed
    /// by `root` and is valid now.
    public static func open(home: URL, root: Certificate, granted: Certificate, now: Date) throws -> AgentCertificates {
        let file = try directory(home)
        let agentKey = try key(at: file("agent-key.pem"))
        guard granted.publicKey == Certificate.PublicKey(agentKey.publicKey) else { throw Refusal.notForThisKey }
        guard granted.issuer == root.subject, root.publicKey.isValidSignature(granted.signature, for: granted) else {
            throw Refusal.notFromTheRoot
        }
        guard HouseholdCA.hasTheHouseholdsForm(granted, pathLength: 0) else { throw Refusal.notFromTheRoot }
        guard granted.notValidBefore <= now, now < granted.notValidAfter else { throw Refusal.expired }
        return AgentCertificates(root: root, intermediate: granted, intermediateKey: agentKey)
    }

    /// Whether an intermediate should be made again: close to its end, unless it already ends
    /// with its root (a new one could not last longer: renewing would write the same forever).
    public static func dueForRenewal(_ intermediate: Certificate, root: Certificate, now: Date) -> Bool {
        intermediate.notValidAfter.timeIntervalSince(now) <= renewBeforeDays * 86_400
            && intermediate.notValidAfter < root.notValidAfter - 3600
    }

    /// Whether `certificate` is a current answer to `request` under `root`: for its key, signed
    /// by the root, and not close to its end.
    public static func isCurrent(_ certificate: Certificate, for request: CertificateSigningRequest, under root: Certificate, now: Date) -> Bool {
        certificate.publicKey == request.publicKey && certificate.issuer == root.subject
            && root.publicKey.isValidSignature(certificate.signature, for: certificate) && !dueForRenewal(certificate, root: root, now: now)
    }

    /// On the root's computer: the intermediate for another agent's `request`, named `machine`
    /// (as the household names it), signed by the root kept here. Refused for a request not
    /// signed by its own key (PKCS #10's proof of possession).
    public static func sign(_ request: CertificateSigningRequest, machine: String, home: URL, now: Date) throws -> Certificate {
        guard request.publicKey.isValidSignature(request.signature, for: request) else { throw Refusal.requestNotSigned }
        let file = try directory(home)
        let rootKey = try key(at: file("root-key.pem"), create: false)
        guard let root = try certificate(at: file("root.pem")), root.publicKey == Certificate.PublicKey(rootKey.publicKey) else {
            throw Refusal.notFromTheRoot
        }
        guard let key = P256.Signing.PublicKey(request.publicKey) else { throw Refusal.notForThisKey }
        return try HouseholdCA.intermediate(root: root, rootKey: rootKey, key: key, machine: machine, now: now)
    }

    // MARK: As the household carries them (base64 DER)

    /// A root's id in the household: SHA-256 of its public key, lower-case hex.
    public static func rootID(_ root: Certificate) throws -> String {
        String(try HouseholdCA.fingerprint(root).lowercased().filter { $0 != ":" })
    }

    public static func base64(_ certificate: Certificate) throws -> String {
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        return Data(serializer.serializedBytes).base64EncodedString()
    }

    public static func base64(_ request: CertificateSigningRequest) throws -> String {
        var serializer = DER.Serializer()
        try serializer.serialize(request)
        return Data(serializer.serializedBytes).base64EncodedString()
    }

    public static func certificate(base64: String) throws -> Certificate {
        guard let data = Data(base64Encoded: base64) else { throw Refusal.notFromTheRoot }
        return try Certificate(derEncoded: Array(data))
    }

    public static func request(base64: String) throws -> CertificateSigningRequest {
        guard let data = Data(base64Encoded: base64) else { throw Refusal.requestNotSigned }
        return try CertificateSigningRequest(derEncoded: Array(data))
    }

    /// A fresh leaf (a new key, in memory only) for what the listener serves, with the chain a
    /// TLS server sends: leaf, then intermediate.
    public func leaf(names: [String], addresses: [String], now: Date) throws -> (chain: [Certificate], key: P256.Signing.PrivateKey) {
        let key = P256.Signing.PrivateKey()
        let leaf = try HouseholdCA.leaf(
            issuer: intermediate, issuerKey: intermediateKey, key: key.publicKey, names: names, addresses: addresses, now: now)
        return ([leaf, intermediate], key)
    }

    static func directory(_ home: URL) throws -> (String) -> URL {
        let directory = home.appendingPathComponent(directoryName)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        return { directory.appendingPathComponent($0) }
    }

    static func key(at url: URL, create: Bool = true) throws -> P256.Signing.PrivateKey {
        if let data = FileManager.default.contents(atPath: url.path) {
            return try P256.Signing.PrivateKey(pemRepresentation: String(decoding: data, as: UTF8.self))
        }
        guard create else { throw CocoaError(.fileNoSuchFile) }
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
