import Crypto
import Foundation
import SwiftASN1
import Testing
@_spi(FixedExpiryValidationTime) import X509
@testable import PulseCA

/// The household's CA (issue 42): the chain a phone would check, verified by swift-certificates'
/// RFC 5280 verifier with the household's root as the only trust anchor. A leaf for the
/// agent's `.local` name and private address verifies; one for a public name, a public
/// address or from another CA does not — also when made by hand past our own refusal (the
/// name constraints hold in the chain itself).
@Suite struct HouseholdCATests {
    let now = Date(timeIntervalSince1970: 1_795_600_000)
    let rootKey = P256.Signing.PrivateKey()
    let agentKey = P256.Signing.PrivateKey()
    let leafKey = P256.Signing.PrivateKey()

    func chain() throws -> (root: Certificate, intermediate: Certificate) {
        let root = try HouseholdCA.root(key: rootKey, household: "The Smiths", now: now)
        let intermediate = try HouseholdCA.intermediate(root: root, rootKey: rootKey, key: agentKey.publicKey, machine: "Study desktop", now: now)
        return (root, intermediate)
    }

    /// Whether a phone trusting only `root` accepts `leaf` (through `intermediate`) for `host`.
    func accepted(_ leaf: Certificate, via intermediate: Certificate, root: Certificate, host: String?, ip: String?, at time: Date? = nil) async -> Bool {
        var verifier = Verifier(rootCertificates: CertificateStore([root])) {
            RFC5280Policy(fixedExpiryValidationTime: time ?? now + 60)
            ServerIdentityPolicy(serverHostname: host, serverIP: ip)
        }
        let result = await verifier.validate(leaf: leaf, intermediates: CertificateStore([intermediate]))
        if case .validCertificate = result { return true }
        return false
    }

    /// A leaf signed by the intermediate for any names, bypassing `HouseholdCA.leaf`'s refusal:
    /// what a thief of an agent's key could make.
    func forged(names: [GeneralName], issuer: Certificate) throws -> Certificate {
        try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: Certificate.PublicKey(leafKey.publicKey),
            notValidBefore: now - 3600, notValidAfter: now + 86_400, issuer: issuer.subject,
            subject: try DistinguishedName { CommonName("forged") }, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames(names)
                AuthorityKeyIdentifier(keyIdentifier: try HouseholdCA.keyIdentifier(of: issuer))
            },
            issuerPrivateKey: Certificate.PrivateKey(agentKey))
    }

    @Test func aLeafForTheAgentsLocalNameAndPrivateAddressIsTrustedThroughTheHouseholdsRoot() async throws {
        let (root, intermediate) = try chain()
        let leaf = try HouseholdCA.leaf(
            issuer: intermediate, issuerKey: agentKey, key: leafKey.publicKey, names: ["Study-Desktop.local"],
            addresses: ["192.168.1.20", "fd12:3456::20"], now: now)
        #expect(await accepted(leaf, via: intermediate, root: root, host: "study-desktop.local", ip: nil))
        #expect(await accepted(leaf, via: intermediate, root: root, host: nil, ip: "192.168.1.20"))
        #expect(await accepted(leaf, via: intermediate, root: root, host: nil, ip: "fd12:3456::20"))
        #expect(!(await accepted(leaf, via: intermediate, root: root, host: "other.local", ip: nil)), "a name it does not cover")
        #expect(!(await accepted(leaf, via: intermediate, root: root, host: nil, ip: "192.168.1.21")))
        #expect(
            !(await accepted(leaf, via: intermediate, root: root, host: "study-desktop.local", ip: nil, at: now + 8 * 86_400)), "a week later it has expired")
    }

    @Test func theCARefusesToSignForAPublicNameOrAddress() throws {
        let (_, intermediate) = try chain()
        for (names, addresses, refused) in [
            (["example.com"], [String](), "example.com"), (["bank.local.example.com"], [], "bank.local.example.com"),
            (["*.local"], [], "*.local"), (["local"], [], "local"), ([], ["8.8.8.8"], "8.8.8.8"), ([], ["2001:db8::1"], "2001:db8::1"),
            ([], ["172.32.0.1"], "172.32.0.1"),
        ] {
            #expect(throws: HouseholdCA.Failure.notPermitted(refused)) {
                try HouseholdCA.leaf(issuer: intermediate, issuerKey: agentKey, key: leafKey.publicKey, names: names, addresses: addresses, now: now)
            }
        }
        #expect(throws: HouseholdCA.Failure.badAddress("300.1.1.1")) {
            try HouseholdCA.leaf(issuer: intermediate, issuerKey: agentKey, key: leafKey.publicKey, names: [], addresses: ["300.1.1.1"], now: now)
        }
        #expect(throws: HouseholdCA.Failure.nothingToCover) {
            try HouseholdCA.leaf(issuer: intermediate, issuerKey: agentKey, key: leafKey.publicKey, names: [], addresses: [], now: now)
        }
    }

    /// The constraints are in the certificates: a leaf signed past our refusal (a stolen
    /// agent key) for a public site is refused by the verifier a phone runs.
    @Test func aForgedLeafForAPublicSiteFailsTheChainsNameConstraints() async throws {
        let (root, intermediate) = try chain()
        let bank = try forged(names: [.dnsName("bank.example.com")], issuer: intermediate)
        #expect(!(await accepted(bank, via: intermediate, root: root, host: "bank.example.com", ip: nil)))
        let publicIP = try forged(names: [.ipAddress(ASN1OctetString(contentBytes: [8, 8, 8, 8]))], issuer: intermediate)
        #expect(!(await accepted(publicIP, via: intermediate, root: root, host: nil, ip: "8.8.8.8")))
        let control = try forged(names: [.dnsName("study-desktop.local")], issuer: intermediate)
        #expect(
            await accepted(control, via: intermediate, root: root, host: "study-desktop.local", ip: nil),
            "the same forgery for a permitted name passes: the test can tell")
    }

    @Test func aLeafFromAnotherHouseholdsCAIsNotTrusted() async throws {
        let (root, _) = try chain()
        let otherKey = P256.Signing.PrivateKey()
        let otherRoot = try HouseholdCA.root(key: otherKey, household: "The Joneses", now: now)
        let otherIntermediate = try HouseholdCA.intermediate(root: otherRoot, rootKey: otherKey, key: agentKey.publicKey, machine: "x", now: now)
        let leaf = try HouseholdCA.leaf(
            issuer: otherIntermediate, issuerKey: agentKey, key: leafKey.publicKey, names: ["study-desktop.local"], addresses: [], now: now)
        #expect(!(await accepted(leaf, via: otherIntermediate, root: root, host: "study-desktop.local", ip: nil)))
    }

    @Test func theRootsFingerprintIsItsKeysWhateverAgentShowsIt() throws {
        let a = try HouseholdCA.root(key: rootKey, household: "The Smiths", now: now)
        let b = try HouseholdCA.root(key: rootKey, household: "The Smiths", now: now + 5)
        #expect(a != b)
        #expect(try HouseholdCA.fingerprint(a) == HouseholdCA.fingerprint(b))
        #expect(try HouseholdCA.fingerprint(a).count == 32 * 3 - 1)
        #expect(try HouseholdCA.pem(a).hasPrefix("-----BEGIN CERTIFICATE-----"))
    }

    @Test(arguments: [
        ("anna.local", true), ("a-b.c.local", true), ("hub.home.arpa", true), ("ANNA.LOCAL", true), ("local", false),
        ("anna.local.", false), ("an na.local", false), ("anna.locals", false), ("xlocal", false), ("home.arpa", false),
        ("anna.example", false), ("-no-.local", false), ("a-1.local", true),
    ])
    func whichNamesItMayVouchFor(name: String, permitted: Bool) {
        #expect(HouseholdCA.isPermitted(name: name) == permitted)
    }

    @Test(arguments: [
        ("10.1.2.3", true), ("172.16.0.1", true), ("172.31.255.255", true), ("172.32.0.1", false), ("192.168.0.1", true),
        ("192.169.0.1", false), ("169.254.1.1", true), ("127.0.0.1", false), ("8.8.8.8", false), ("fd00::1", true),
        ("fc00::1", true), ("fe80::1", true), ("fec0::1", false), ("2001:db8::1", false), ("::1", false),
    ])
    func whichAddressesItMayVouchFor(address: String, permitted: Bool) throws {
        #expect(HouseholdCA.isPermitted(address: try #require(HouseholdCA.addressBytes(address))) == permitted)
    }
}
