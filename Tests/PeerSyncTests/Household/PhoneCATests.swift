import Crypto
import Foundation
import Testing
@_spi(FixedExpiryValidationTime) import X509
@testable import PulseCA
@testable import PulseHousehold
@testable import PulseModel
@testable import PulseStore

/// One household CA for every agent (protocol 8, decision 0014 option 1): the first root
/// published is the household's, its key stays on its computer; another computer's request
/// travels through the household's rows and comes back signed, so a phone trusting the one
/// root trusts both computers. A removed computer gets nothing more, and a root whose holder
/// was removed is no longer the household's.
@Suite struct PhoneCATests: HouseholdFixture {
    let dir: TemporaryDirectory
    let a: Household
    let now = Date()
    init() throws {
        dir = try TemporaryDirectory()
        a = try Household.create(HouseholdHome(directory: dir.url.appendingPathComponent("a")), name: nil, members: [])
    }

    /// A computer's CA files (its own `phones/` directory).
    func home(_ name: String) -> URL { dir.url.appendingPathComponent("ca-\(name)") }

    func publishRoot(_ household: Household, _ name: String) throws -> Certificate {
        let root = try AgentCertificates.openOrCreate(home: home(name), household: "The Smiths", machine: "\(name).local", now: now).root
        _ = try household.publishCARoot(id: AgentCertificates.rootID(root), certificate: AgentCertificates.base64(root))
        return root
    }

    func trusted(_ chain: [Certificate], root: Certificate, host: String) async -> Bool {
        var verifier = Verifier(rootCertificates: CertificateStore([root])) {
            RFC5280Policy(fixedExpiryValidationTime: now + 60)
            ServerIdentityPolicy(serverHostname: host, serverIP: nil)
        }
        if case .validCertificate = await verifier.validate(leaf: chain[0], intermediates: CertificateStore(Array(chain.dropFirst()))) {
            return true
        }
        return false
    }

    @Test func anotherComputerAsksThroughTheHouseholdAndIsTrustedUnderTheOneRoot() async throws {
        let root = try publishRoot(a, "a")
        let b = try secondMachine()
        let seen = try #require(try b.caRoots().first)
        #expect(seen.holder == a.identity.machineID && !seen.retired)
        let rootSeen = try AgentCertificates.certificate(base64: seen.certificate)
        #expect(try rootSeen == root && AgentCertificates.rootID(rootSeen) == seen.id)

        // B asks; A signs what reached it; B gets it back and serves leaves a phone trusting A's root accepts.
        let request = try AgentCertificates.request(home: home("b"), machine: "b.local")
        let asked = try b.requestCAGrant(request: AgentCertificates.base64(request))
        #expect(asked.certificate == nil && asked.machine == b.identity.machineID)
        try sync(a, b)
        let waiting = try #require(try a.caGrants().first { $0.machine == b.identity.machineID })
        let signed = try AgentCertificates.sign(
            try AgentCertificates.request(base64: waiting.request), machine: waiting.machineName ?? "b", home: home("a"), now: now)
        #expect(AgentCertificates.isCurrent(signed, for: request, under: root, now: now))
        _ = try a.grantCA(machine: waiting.machine, request: waiting.request, certificate: AgentCertificates.base64(signed))
        try sync(a, b)
        let granted = try #require(try b.caGrants().first { $0.machine == b.identity.machineID }?.certificate)
        let certificates = try AgentCertificates.open(home: home("b"), root: rootSeen, granted: AgentCertificates.certificate(base64: granted), now: now)
        let (chain, _) = try certificates.leaf(names: ["b.local"], addresses: ["192.168.1.21"], now: now)
        #expect(await trusted(chain, root: root, host: "b.local"))
        #expect(!AgentCertificates.keepsARoot(home: home("b")), "B never held a root key")

        // Only for its own key: the same certificate is refused by a computer holding another key.
        #expect(throws: AgentCertificates.Refusal.notForThisKey) {
            try AgentCertificates.open(home: home("c"), root: rootSeen, granted: AgentCertificates.certificate(base64: granted), now: now)
        }
        // And only from the household's root: one signed by another root is refused.
        let stranger = try AgentCertificates.openOrCreate(home: home("stranger"), household: "Strangers", machine: "x.local", now: now)
        #expect(throws: AgentCertificates.Refusal.notFromTheRoot) {
            try AgentCertificates.open(home: home("b"), root: stranger.root, granted: AgentCertificates.certificate(base64: granted), now: now)
        }
    }

    @Test func theEarliestRootWinsEverywhereAndARemovedHoldersRootIsRetired() throws {
        let b = try secondMachine()
        let first = try publishRoot(a, "a")
        let second = try publishRoot(b, "b") // published before they met
        try sync(a, b)
        #expect(try a.caRoots().map(\.id) == b.caRoots().map(\.id))
        #expect(try a.caRoots().first?.id == AgentCertificates.rootID(first))
        // Publishing the same root again changes nothing.
        let before = try a.store.versionVector()
        _ = try a.publishCARoot(id: AgentCertificates.rootID(first), certificate: AgentCertificates.base64(first))
        #expect(try a.store.versionVector() == before)

        // A's computer removed (stolen, say): its root is no longer the household's.
        _ = try b.removeMachine(String(a.identity.machineID.prefix(12)))
        let roots = try b.caRoots()
        #expect(try roots.first?.id == AgentCertificates.rootID(second) && roots.last?.retired == true)
    }

    @Test func aRemovedComputerOrAChangedRequestGetsNoCertificateAndBadRowsChangeNothing() throws {
        _ = try publishRoot(a, "a")
        let b = try secondMachine()
        let request = try AgentCertificates.base64(AgentCertificates.request(home: home("b"), machine: "b.local"))
        _ = try b.requestCAGrant(request: request)
        try sync(a, b)
        let other = try AgentCertificates.base64(AgentCertificates.request(home: home("b2"), machine: "b.local"))
        let certificate = try AgentCertificates.base64(
            AgentCertificates.sign(try AgentCertificates.request(base64: request), machine: "b", home: home("a"), now: now))
        #expect(code { _ = try a.grantCA(machine: b.identity.machineID, request: other, certificate: certificate) } == "ca_request_changed")
        #expect(code { _ = try a.grantCA(machine: String(repeating: "0", count: 64), request: request, certificate: certificate) } == "no_ca_request")
        #expect(code { _ = try a.grantCA(machine: b.identity.machineID, request: request, certificate: "not base64!") } == "invalid_certificate")
        #expect(code { _ = try b.requestCAGrant(request: String(repeating: "A", count: 1004)) } == "invalid_certificate")
        #expect(code { _ = try a.publishCARoot(id: "ABC", certificate: certificate) } == "invalid_certificate")
        _ = try a.removeMachine(String(b.identity.machineID.prefix(12)))
        #expect(code { _ = try a.grantCA(machine: b.identity.machineID, request: request, certificate: certificate) } == "ca_machine_removed")
        #expect(try a.caGrants().allSatisfy { $0.certificate == nil })
        // A request not signed by its own key is refused before anything is signed.
        var forged = Array(Data(base64Encoded: request)!)
        forged[forged.count - 3] ^= 0x01
        if let bad = try? AgentCertificates.request(base64: Data(forged).base64EncodedString()) {
            #expect(throws: AgentCertificates.Refusal.requestNotSigned) {
                try AgentCertificates.sign(bad, machine: "b", home: home("a"), now: now)
            }
        }
    }

    /// Rows are written by any machine of the household: one that is hostile (or stolen, before
    /// it is removed) must not get phones to trust a CA for public names, nor a certificate for
    /// an id that is no machine of the household.
    @Test func aRootOrIntermediateNotOfTheHouseholdsFormIsNeverUsedAndNoMachineGetsNothing() throws {
        let household = try AgentCertificates.openOrCreate(home: home("a"), household: "The Smiths", machine: "a.local", now: now)
        #expect(HouseholdCA.isHouseholdRoot(household.root))
        #expect(!HouseholdCA.isHouseholdRoot(household.intermediate), "an intermediate is not a root")
        // A CA with no name constraints, as anyone can make one.
        let key = P256.Signing.PrivateKey()
        let name = try DistinguishedName { CommonName("The Smiths — household") }
        let open = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: Certificate.PublicKey(key.publicKey),
            notValidBefore: now - 60, notValidAfter: now + 86_400, issuer: name, subject: name, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 1))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
            },
            issuerPrivateKey: Certificate.PrivateKey(key))
        #expect(!HouseholdCA.isHouseholdRoot(open))
        // An intermediate the household's root signed without the constraints is refused by the agent using it.
        let request = try AgentCertificates.request(home: home("b"), machine: "b.local")
        let unconstrained = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: request.publicKey,
            notValidBefore: now - 60, notValidAfter: now + 86_400, issuer: household.root.subject, subject: name,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions { Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0)) },
            issuerPrivateKey: Certificate.PrivateKey(
                try P256.Signing.PrivateKey(pemRepresentation: String(contentsOf: home("a").appendingPathComponent("phones/root-key.pem"), encoding: .utf8))))
        #expect(throws: AgentCertificates.Refusal.notFromTheRoot) {
            try AgentCertificates.open(home: home("b"), root: household.root, granted: unconstrained, now: now)
        }
        // A request under an id that is no machine of the household: listed as removed, never signed.
        try a.store.write(member: a.memberID) { tx in
            _ = try tx.put(
                .caGrant, String(repeating: "e", count: 64),
                ["request": .text(try AgentCertificates.base64(request)), "certificate": .null, "requested": .integer(try a.store.orderingKey())])
        }
        #expect(try a.caGrants().first?.removed == true)
    }

    /// An intermediate that already ends with its root is not due for renewal: renewing it could
    /// not make it last longer, and would write the same grant again and again.
    @Test func anIntermediateEndingWithItsRootIsNotRenewedForever() throws {
        let certificates = try AgentCertificates.openOrCreate(home: home("a"), household: "The Smiths", machine: "a.local", now: now)
        let late = certificates.root.notValidAfter - 10 * 86_400
        let renewed = try AgentCertificates.openOrCreate(home: home("a"), household: "The Smiths", machine: "a.local", now: late)
        #expect(renewed.intermediate.notValidAfter == certificates.root.notValidAfter)
        #expect(!AgentCertificates.dueForRenewal(renewed.intermediate, root: renewed.root, now: late))
        let again = try AgentCertificates.openOrCreate(home: home("a"), household: "The Smiths", machine: "a.local", now: late + 60)
        #expect(again.intermediate == renewed.intermediate)
    }
}
