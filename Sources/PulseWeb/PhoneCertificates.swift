import FoundationEssentials
import PeerSync
import PulseCA
import X509

/// One household CA for every agent (docs/decisions/0014-household-ca.md, option 1): a phone
/// installs one root and trusts every computer of the household. The first computer to turn
/// phones on publishes its root (`ca.publish`); its key never leaves that computer (the
/// holder). Every other agent asks through the household (`ca.request`: a PKCS #10 request for
/// its own intermediate key) and the holder's agent signs it when the request reaches it
/// (`ca.grant`), for computers still in the household only, renewing each before its end.
/// Nothing here is a construction of our own: X.509 and PKCS #10 from swift-certificates.
extension PhoneService {
    /// The household's CA as the household's rows hold it.
    struct CAView {
        let roots: [CARootRecord]
        let grants: [CAGrantRecord]

        /// The household's root: the earliest whose holder is still in the household.
        var householdRoot: CARootRecord? { roots.first { !$0.retired } }
    }

    /// The household CA's rows, its roots only when they are what they claim: the certificate
    /// named by its id, self-signed, of the household CA's form (name-constrained). A root row
    /// that is not is ignored, whoever wrote it.
    func caView() async throws -> CAView {
        let view = try await api.read { CAView(roots: try $0.caRoots(), grants: try $0.caGrants()) }
        let roots = view.roots.filter { root in
            guard let certificate = try? AgentCertificates.certificate(base64: root.certificate),
                (try? AgentCertificates.rootID(certificate)) == root.id, HouseholdCA.isHouseholdRoot(certificate)
            else {
                logger.warning("ignoring a root of the household's CA that is not of its form", metadata: ["root": "\(root.id.prefix(16))"])
                return false
            }
            return true
        }
        return CAView(roots: roots, grants: view.grants)
    }

    /// This computer's id and name in the household.
    func thisMachine() async -> (id: String, name: String)? {
        guard let machine = try? await api.read({ try $0.machines().first(where: \.isThisMachine) }) else { return nil }
        return (machine.id, machine.name)
    }

    /// This agent's certificates under the household's root: as the holder (the root's key is
    /// here), or with the intermediate the holder signed for this agent. Throws the refusal
    /// `phones_waiting_for_ca` after asking (once) when no usable intermediate has come yet.
    func householdCertificates() async throws -> AgentCertificates {
        let household = try await householdSummary()
        let home = api.home.directory
        let hostName = look().names.first ?? "house-pulse"
        guard let me = await thisMachine() else { throw PhoneError("this computer is not on the household's list of machines") }
        var ca = try await caView()
        if ca.householdRoot == nil {
            // No root yet: this computer's becomes the household's (the one it made before, or a new one).
            let root = try await onDispatchThread {
                try AgentCertificates.openOrCreate(home: home, household: household.name, machine: hostName, now: Date()).root
            }
            let (id, certificate) = (try AgentCertificates.rootID(root), try AgentCertificates.base64(root))
            _ = try await api.write { try $0.publishCARoot(id: id, certificate: certificate) }
            logger.notice("this computer keeps the household's certificate authority for phones")
            ca = try await caView()
        }
        guard let root = ca.householdRoot else { throw PhoneError("the household has no certificate authority") }
        let own = try await onDispatchThread { try AgentCertificates.ownRoot(home: home) }
        if let own, try AgentCertificates.rootID(own) == root.id {
            return try await onDispatchThread {
                try AgentCertificates.openOrCreate(home: home, household: household.name, machine: hostName, now: Date())
            }
        }
        let waiting = Refusal(.phonesWaitingForCA, ["holder": .string(root.holderName ?? String(root.holder.prefix(12)))])
        let rootCertificate = try AgentCertificates.certificate(base64: root.certificate)
        let grant = ca.grants.first { $0.machine == me.id }
        if let text = grant?.certificate, let granted = try? AgentCertificates.certificate(base64: text) {
            do {
                let opened = try await onDispatchThread {
                    try AgentCertificates.open(home: home, root: rootCertificate, granted: granted, now: Date())
                }
                if AgentCertificates.dueForRenewal(granted, root: rootCertificate, now: Date()) {
                    try await ask(home: home, hostName: hostName) // served meanwhile with the one it has
                }
                return opened
            } catch AgentCertificates.Refusal.expired where granted.notValidBefore > Date() {
                throw waiting // this computer's clock is behind the holder's: asking again would give the same
            } catch {
                logger.notice("the household's certificate for this computer is not usable; asking again", metadata: ["reason": "\(error)"])
            }
        }
        // Ask, unless the request waiting is this agent's key already (asked before).
        let pending = grant.flatMap { try? AgentCertificates.request(base64: $0.request) }
        let mine = try await onDispatchThread { try AgentCertificates.request(home: home, machine: hostName) }
        if pending?.publicKey != mine.publicKey || grant?.certificate != nil { try await ask(home: home, hostName: hostName) }
        throw waiting
    }

    /// Sends this agent's certificate signing request to the household.
    private func ask(home: URL, hostName: String) async throws {
        let request = try await onDispatchThread { try AgentCertificates.request(home: home, machine: hostName) }
        let text = try AgentCertificates.base64(request)
        _ = try await api.write { try $0.requestCAGrant(request: text) }
        logger.notice("asked the household's certificate authority for this computer's certificate")
    }

    /// On the holder's computer: signs each waiting request of a computer still in the
    /// household, and renews a certificate near its end or made under another root. Elsewhere,
    /// nothing. Returns how many it signed.
    @discardableResult
    func signRequests() async -> Int {
        let home = api.home.directory
        guard AgentCertificates.keepsARoot(home: home), let ca = try? await caView(), let root = ca.householdRoot,
            let own = try? await onDispatchThread({ try AgentCertificates.ownRoot(home: home) }),
            (try? AgentCertificates.rootID(own)) == root.id
        else { return 0 }
        var signed = 0
        for grant in ca.grants where !grant.removed {
            guard let request = try? AgentCertificates.request(base64: grant.request) else { continue }
            if let text = grant.certificate, let current = try? AgentCertificates.certificate(base64: text),
                AgentCertificates.isCurrent(current, for: request, under: own, now: Date())
            {
                continue
            }
            do {
                let name = grant.machineName ?? String(grant.machine.prefix(12))
                let certificate = try await onDispatchThread { try AgentCertificates.sign(request, machine: name, home: home, now: Date()) }
                let signedText = try AgentCertificates.base64(certificate)
                _ = try await api.write { try $0.grantCA(machine: grant.machine, request: grant.request, certificate: signedText) }
                signed += 1
                logger.notice("signed a computer's certificate for phones", metadata: ["machine": "\(name)"])
            } catch {
                logger.warning("cannot sign a computer's certificate request", metadata: ["machine": "\(grant.machine.prefix(12))", "error": "\(error)"])
            }
        }
        return signed
    }
}
