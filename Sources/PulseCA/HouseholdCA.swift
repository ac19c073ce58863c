import Crypto
import FoundationEssentials
import SwiftASN1
import X509

#if canImport(Glibc)
import Glibc
#endif

/// The household's certificate authority, for the phones' HTTPS on the home network
/// (issue 42; docs/decisions/0014-household-ca.md): a **root** per household, an
/// **intermediate** per agent and short-lived **leaf** certificates for the agent's `.local`
/// name and LAN addresses. Root and intermediate carry the same name constraints — only
/// names under `local` and `home.arpa`, only private, link-local and unique-local
/// addresses — so the root a family installs on a phone cannot vouch for any public site
/// (RFC 5280 leaves constraints on a trust anchor optional; the intermediate's are always
/// enforced). Built with swift-certificates from swift-crypto P-256 keys; nothing here
/// invents a construction: it is X.509 as every CA makes it.
public enum HouseholdCA {
    /// DNS names the CA may vouch for (a dNSName constraint `local` covers `anna.local`).
    public static let permittedDNSDomains = ["local", "home.arpa"]

    /// Address ranges it may vouch for, as (network, prefix length).
    public static let permittedNetworks: [(network: String, prefix: Int)] = [
        ("10.0.0.0", 8), ("172.16.0.0", 12), ("192.168.0.0", 16), ("169.254.0.0", 16),
        ("fc00::", 7), ("fe80::", 10),
    ]

    public enum Failure: Error, Equatable, CustomStringConvertible {
        /// A name or address outside what the CA may vouch for (refused before signing).
        case notPermitted(String)
        case badAddress(String)
        case nothingToCover

        public var description: String {
            switch self {
            case let .notPermitted(name): "\(name) is not a .local or home.arpa name nor a private address: the household's CA does not vouch for it"
            case let .badAddress(text): "\(text) is not an IP address"
            case .nothingToCover: "a certificate needs at least one name or address"
            }
        }
    }

    // MARK: Certificates

    /// The household's root: CA, at most one intermediate below it, name-constrained.
    public static func root(key: P256.Signing.PrivateKey, household: String, now: Date, days: Int = 3650) throws -> Certificate {
        let name = try DistinguishedName {
            OrganizationName("House Pulse")
            CommonName("\(household) — household")
        }
        let publicKey = Certificate.PublicKey(key.publicKey)
        return try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: publicKey,
            notValidBefore: now - 3600, notValidAfter: now + Double(days) * 86_400, issuer: name, subject: name,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 1))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                Critical(try constraints())
                SubjectKeyIdentifier(hash: publicKey)
            },
            issuerPrivateKey: Certificate.PrivateKey(key))
    }

    /// An agent's intermediate, signed by the root: issues that agent's leaves only.
    public static func intermediate(
        root: Certificate, rootKey: P256.Signing.PrivateKey, key: P256.Signing.PublicKey, machine: String, now: Date,
        days: Int = 90
    ) throws -> Certificate {
        let name = try DistinguishedName {
            OrganizationName("House Pulse")
            CommonName("\(machine) — agent")
        }
        let publicKey = Certificate.PublicKey(key)
        return try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: publicKey,
            notValidBefore: now - 3600, notValidAfter: min(now + Double(days) * 86_400, root.notValidAfter), issuer: root.subject,
            subject: name, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                Critical(try constraints())
                SubjectKeyIdentifier(hash: publicKey)
                AuthorityKeyIdentifier(keyIdentifier: try keyIdentifier(of: root))
            },
            issuerPrivateKey: Certificate.PrivateKey(rootKey))
    }

    /// A server certificate for `names` (`.local`/`home.arpa`) and `addresses` (private
    /// ones), signed by the agent's intermediate; refused, signing nothing, for anything
    /// the constraints would not allow (a phone would refuse it anyway).
    public static func leaf(
        issuer: Certificate, issuerKey: P256.Signing.PrivateKey, key: P256.Signing.PublicKey, names: [String],
        addresses: [String], now: Date, days: Int = 7
    ) throws -> Certificate {
        guard !names.isEmpty || !addresses.isEmpty else { throw Failure.nothingToCover }
        var alternatives: [GeneralName] = []
        for name in names {
            let lowered = name.lowercased()
            guard isPermitted(name: lowered) else { throw Failure.notPermitted(name) }
            alternatives.append(.dnsName(lowered))
        }
        for address in addresses {
            guard let bytes = addressBytes(address) else { throw Failure.badAddress(address) }
            guard isPermitted(address: bytes) else { throw Failure.notPermitted(address) }
            alternatives.append(.ipAddress(ASN1OctetString(contentBytes: ArraySlice(bytes))))
        }
        let subject = try DistinguishedName { CommonName(names.first ?? addresses[0]) }
        let publicKey = Certificate.PublicKey(key)
        return try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: publicKey,
            notValidBefore: now - 3600, notValidAfter: min(now + Double(days) * 86_400, issuer.notValidAfter), issuer: issuer.subject,
            subject: subject, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames(alternatives)
                SubjectKeyIdentifier(hash: publicKey)
                AuthorityKeyIdentifier(keyIdentifier: try keyIdentifier(of: issuer))
            },
            issuerPrivateKey: Certificate.PrivateKey(issuerKey))
    }

    /// What a person compares on the computer and in the phone's settings (issue 51): the
    /// certificate's SHA-256 fingerprint — of its whole DER encoding, as iOS's and Android's
    /// certificate details show it and `openssl x509 -fingerprint -sha256` prints it — as
    /// upper-case hex pairs joined by colons.
    public static func certificateFingerprint(_ certificate: Certificate) throws -> String {
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        return hexPairs(SHA256.hash(data: serializer.serializedBytes))
    }

    /// The root's name as a phone's settings list it (its subject's common name).
    public static func commonName(_ certificate: Certificate) -> String? {
        for rdn in certificate.subject {
            for attribute in rdn where attribute.type == .RDNAttributeType.commonName {
                return String(describing: attribute.value)
            }
        }
        return nil
    }

    private static func hexPairs(_ digest: SHA256.Digest) -> String {
        let digits = Array("0123456789ABCDEF")
        return digest.map { String([digits[Int($0 >> 4)], digits[Int($0 & 15)]]) }.joined(separator: ":")
    }

    /// SHA-256 of the root's public key (SubjectPublicKeyInfo), as hex pairs: an identity of
    /// the root's key (the iOS profile's ids, the agents' names for it), not what a person
    /// compares (``certificateFingerprint(_:)``).
    public static func fingerprint(_ certificate: Certificate) throws -> String {
        var serializer = DER.Serializer()
        try serializer.serialize(certificate.publicKey)
        let digits = Array("0123456789ABCDEF")
        return SHA256.hash(data: serializer.serializedBytes).map { String([digits[Int($0 >> 4)], digits[Int($0 & 15)]]) }.joined(separator: ":")
    }

    public static func pem(_ certificate: Certificate) throws -> String { try certificate.serializeAsPEM().pemString }

    /// Whether `certificate` has the form of the household CA's own: a CA certificate (at most
    /// `pathLength` CAs below it) carrying exactly the household's name constraints, critical.
    /// A root or intermediate read from the household's rows is used only then: a row written
    /// by a hostile machine cannot make phones trust a CA for public names.
    public static func hasTheHouseholdsForm(_ certificate: Certificate, pathLength: Int) -> Bool {
        guard let basic = try? certificate.extensions.basicConstraints, case let .isCertificateAuthority(length) = basic,
            length == pathLength,
            let extensionValue = certificate.extensions[oid: .X509ExtensionID.nameConstraints], extensionValue.critical,
            let constraints = try? NameConstraints(extensionValue), let expected = try? HouseholdCA.constraints()
        else { return false }
        return constraints == expected
    }

    /// Whether `root` is a root of the household CA's form: self-signed, and as
    /// ``hasTheHouseholdsForm(_:pathLength:)`` says (one CA below it).
    public static func isHouseholdRoot(_ root: Certificate) -> Bool {
        root.issuer == root.subject && root.publicKey.isValidSignature(root.signature, for: root) && hasTheHouseholdsForm(root, pathLength: 1)
    }

    // MARK: The rules

    /// Whether the CA may vouch for a DNS name: one under `local` or `home.arpa`, each label
    /// 1–63 letters, digits or inner hyphens (no wildcards, no trailing dot).
    public static func isPermitted(name: String) -> Bool {
        let labels = name.lowercased().split(separator: ".", omittingEmptySubsequences: false)
        guard name.utf8.count <= 253, labels.count >= 2 else { return false }
        let label = { (text: Substring) in
            !text.isEmpty && text.count <= 63 && text.first != "-" && text.last != "-"
                && text.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }
        }
        guard labels.allSatisfy(label) else { return false }
        return permittedDNSDomains.contains { domain in
            let suffix = domain.split(separator: ".")
            return labels.count > suffix.count && Array(labels.suffix(suffix.count)) == suffix
        }
    }

    /// Whether the CA may vouch for an address (4 or 16 bytes).
    public static func isPermitted(address bytes: [UInt8]) -> Bool {
        networks().contains { network, mask in
            network.count == bytes.count && zip(zip(bytes, network), mask).allSatisfy { pair, m in pair.0 & m == pair.1 & m }
        }
    }

    /// An IPv4 or IPv6 address in text, as its bytes (nil: not an address).
    public static func addressBytes(_ text: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 { return withUnsafeBytes(of: &v4) { Array($0) } }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 { return withUnsafeBytes(of: &v6) { Array($0) } }
        return nil
    }

    // MARK: Helpers

    static func networks() -> [(network: [UInt8], mask: [UInt8])] {
        permittedNetworks.compactMap { network, prefix in
            guard let bytes = addressBytes(network) else { return nil }
            let mask = (0..<bytes.count).map { index -> UInt8 in
                let bits = max(0, min(8, prefix - index * 8))
                return bits == 0 ? 0 : UInt8(truncatingIfNeeded: 0xFF << (8 - bits))
            }
            return (bytes, mask)
        }
    }

    static func constraints() throws -> NameConstraints {
        NameConstraints(
            permittedDNSDomains: permittedDNSDomains,
            permittedIPRanges: networks().map { ASN1OctetString(contentBytes: ArraySlice($0.network + $0.mask)) })
    }

    static func keyIdentifier(of certificate: Certificate) throws -> ArraySlice<UInt8> {
        guard let identifier = try certificate.extensions.subjectKeyIdentifier?.keyIdentifier else {
            return SubjectKeyIdentifier(hash: certificate.publicKey).keyIdentifier
        }
        return identifier
    }
}
