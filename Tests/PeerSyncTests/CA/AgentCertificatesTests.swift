import Crypto
import Foundation
import Testing
@_spi(FixedExpiryValidationTime) import X509
@testable import PulseCA

/// This computer's CA files (decision 0014): made once, keys owner-only, the same root on
/// every open, an intermediate re-issued near its end under that root, and leaves a phone
/// trusting the root accepts. A damaged key is an error, never a silent new root (every
/// phone would have to install it again).
@Suite struct AgentCertificatesTests {
    let home: URL
    let now = Date(timeIntervalSince1970: 1_795_600_000)
    init() throws {
        home = FileManager.default.temporaryDirectory.appendingPathComponent("ca-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
    }

    func mode(_ name: String) throws -> Int {
        try FileManager.default.attributesOfItem(atPath: home.appendingPathComponent("phones/\(name)").path)[.posixPermissions] as! Int
    }

    func trusted(_ chain: [Certificate], root: Certificate, host: String, at time: Date) async -> Bool {
        var verifier = Verifier(rootCertificates: CertificateStore([root])) {
            RFC5280Policy(fixedExpiryValidationTime: time)
            ServerIdentityPolicy(serverHostname: host, serverIP: nil)
        }
        if case .validCertificate = await verifier.validate(leaf: chain[0], intermediates: CertificateStore(Array(chain.dropFirst()))) {
            return true
        }
        return false
    }

    @Test func theFilesAreMadeOnceKeptPrivateAndGiveLeavesThePhoneTrusts() async throws {
        let first = try AgentCertificates.openOrCreate(home: home, household: "The Smiths", machine: "Study desktop", now: now)
        #expect(try mode("") & 0o777 == 0o700 && mode("root-key.pem") & 0o777 == 0o600 && mode("agent-key.pem") & 0o777 == 0o600)
        let again = try AgentCertificates.openOrCreate(home: home, household: "The Smiths", machine: "Study desktop", now: now + 3600)
        #expect(again.root == first.root && again.intermediate == first.intermediate)
        let (chain, _) = try again.leaf(names: ["study-desktop.local"], addresses: ["192.168.1.20"], now: now + 3600)
        #expect(chain.count == 2 && chain[1] == first.intermediate)
        #expect(await trusted(chain, root: first.root, host: "study-desktop.local", at: now + 7200))
    }

    @Test func anIntermediateNearItsEndIsReissuedUnderTheSameRoot() async throws {
        let first = try AgentCertificates.openOrCreate(home: home, household: "The Smiths", machine: "Study desktop", now: now)
        let later = now + 70 * 86_400 // 20 days left of 90
        let renewed = try AgentCertificates.openOrCreate(home: home, household: "The Smiths", machine: "Study desktop", now: later)
        #expect(renewed.root == first.root && renewed.intermediate != first.intermediate)
        #expect(renewed.intermediate.notValidAfter > first.intermediate.notValidAfter)
        let (chain, _) = try renewed.leaf(names: ["study-desktop.local"], addresses: [], now: later)
        #expect(await trusted(chain, root: first.root, host: "study-desktop.local", at: later + 60))
    }

    @Test func aDamagedKeyIsAnErrorNotASilentNewRoot() throws {
        let first = try AgentCertificates.openOrCreate(home: home, household: "The Smiths", machine: "Study desktop", now: now)
        try Data("not a key".utf8).write(to: home.appendingPathComponent("phones/root-key.pem"))
        #expect(throws: (any Error).self) {
            try AgentCertificates.openOrCreate(home: home, household: "The Smiths", machine: "Study desktop", now: now)
        }
        #expect(try Certificate(pemEncoded: String(contentsOf: home.appendingPathComponent("phones/root.pem"), encoding: .utf8)) == first.root)
    }
}
