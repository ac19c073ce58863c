import FoundationEssentials
import Synchronization
import NIOCore
import PulseDiscovery
import PulseIdentity
import PulseModel
import PulseProtocol
import PulseStore
import PulseTransport

/// Errors of `pulse-peer join`; each says what to do.
public enum PairingError: Error, CustomStringConvertible, Equatable {
    case badCode
    /// The inviting machine refused (wrong code, expired, used, no invitation…).
    case refused(String)
    /// No machine on the LAN had an open invitation (or none answered) in time.
    case noInviter(String)
    case failed(String)

    public var description: String {
        switch self {
        case .badCode: "a pairing code is 10 digits, as `pulse-peer invite` printed it (e.g. 123-456-7890)"
        case let .refused(reason): "the inviting machine refused: \(reason)"
        case let .noInviter(detail): "no inviting machine found: \(detail)"
        case let .failed(reason): reason
        }
    }
}

extension PairingError {
    /// The refusal a page shows (its code, in the reader's words; the inviting machine's own
    /// reason and a failure's detail stay as they came).
    public var refusal: Refusal {
        switch self {
        case .badCode: Refusal(.pairingCodeFormat)
        case let .refused(reason):
            switch PairingInvitation.Refusal(wireText: reason) {
            case .none?: Refusal(.pairingNoInvitation)
            case .expired?: Refusal(.pairingExpired)
            case .exhausted?: Refusal(.pairingExhausted)
            case .used?: Refusal(.pairingUsed)
            case nil: Refusal(.pairingRefused, ["reason": .string(reason)])
            }
        case let .noInviter(detail): Refusal(.noInviter, ["detail": .string(detail)])
        case let .failed(reason): Refusal(.failed, ["detail": .string(reason)])
        }
    }
}

/// The joining side of pairing (docs/PROTOCOL.md §9): finds the inviting machine, proves
/// the code with SPAKE2 and key confirmation inside mutual TLS, and sets up the home as a
/// replica from the welcome. The inviting side is the agent's session (PeerSession).
public enum Pairing {
    public struct Joined: Sendable {
        public var householdID: String
        public var householdName: String
        public var inviterName: String
        public var inviterMachine: String
        public var machineID: String
        /// Who uses this computer, as said when joining (taken once the household's data arrives).
        public var member: String?
        /// No member said, and the invitation named one: this computer is that member's.
        public var suggestedMember: Bool
    }

    /// Joins with `code` at `peer`, or at the machines advertising the service on the LAN
    /// (tried as they appear, until `timeout`). Nothing is written to `home` unless the
    /// welcome arrived.
    public static func join(
        home: HouseholdHome, code typed: String, peer: PeerAddress?, timeout: Duration = .seconds(30),
        label: String? = nil, member: String? = nil
    ) async throws -> Joined {
        guard let code = PairingCode.normalize(typed) else { throw PairingError.badCode }
        // A name that could never be a member is refused before the code is spent.
        _ = try member.map(Validation.memberName)
        guard !home.hasHousehold else { throw HouseholdError.alreadyExists(home.path) }
        if let problem = home.problem { throw HouseholdError.refused(problem) }
        // Nothing is written before the welcome: a new key stays in memory until then.
        let (identity, isNew) = try MachineIdentity.loadOrMake(in: home.directory)
        let tls = try PeerTLS(identity: identity)
        let name = Household.machineName(label)

        let (message, inviter) =
            if let peer {
                try await exchange(at: peer, code: code, tls: tls, name: name)
            } else {
                try await joinDiscovered(code: code, tls: tls, name: name, timeout: timeout)
            }
        do {
            try FileManager.default.createDirectory(
                at: home.directory, withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700])
        } catch {
            throw HouseholdError.io("cannot create \(home.path): \(error)")
        }
        if isNew { try identity.save(in: home.directory) }
        try Household.join(
            home,
            invitation: Invitation(
                householdID: message.householdID, secret: message.secret,
                memberID: message.memberID),
            introducedBy: inviter, discoveryKey: message.discoveryKey, label: label, member: member)
        return Joined(
            householdID: message.householdID, householdName: message.householdName, inviterName: message.inviterName,
            inviterMachine: inviter, machineID: identity.machineID, member: member,
            suggestedMember: member == nil && message.memberID != nil)
    }

    /// Browses mDNS and tries each House Pulse service found; a machine without an open
    /// invitation says so at once and costs nothing.
    private static func joinDiscovered(
        code: String, tls: PeerTLS, name: String,
        timeout: Duration
    ) async throws -> (PeerMessage.PairWelcome, String) {
        let discovery = try AvahiDiscovery(advertisement: nil)
        try discovery.start()
        defer { discovery.stop() }
        let lastRefusal = LastRefusal()
        let deadline = ContinuousClock.now + timeout
        let result: (PeerMessage.PairWelcome, String)? = try await withThrowingTaskGroup(
            of: (PeerMessage.PairWelcome, String)?.self
        ) { group in
            group.addTask {
                try await Task.sleep(until: deadline)
                return nil
            }
            group.addTask {
                var tried = Set<PeerAddress>()
                for await event in discovery.events {
                    guard case let .found(service) = event else { continue }
                    let hosts = (service.isLocal ? ["127.0.0.1"] : []) + service.addresses
                    for host in hosts {
                        let address = PeerAddress(host: host, port: service.port)
                        guard !tried.contains(address) else { continue }
                        tried.insert(address)
                        do {
                            return try await exchange(at: address, code: code, tls: tls, name: name)
                        } catch let PairingError.refused(reason) where reason == PairingInvitation.Refusal.none.description {
                            continue // not the inviting machine
                        } catch let error as PairingError {
                            if case .refused = error { throw error }
                            lastRefusal.set("\(error)")
                        } catch {
                            lastRefusal.set("\(error)")
                        }
                    }
                }
                return nil
            }
            defer { group.cancelAll() }
            return try await group.next() ?? nil
        }
        guard let result else {
            throw PairingError.noInviter(
                lastRefusal.get() ?? "within \(timeout), no machine with an open invitation answered over mDNS; "
                    + "is `pulse-peer invite` running there, on this network? (or give --peer HOST:PORT)")
        }
        return result
    }

    /// One pairing exchange with the agent at `address`: its welcome and its machine id.
    static func exchange(at address: PeerAddress, code: String, tls: PeerTLS, name: String) async throws -> (PeerMessage.PairWelcome, String) {
        let connection: PeerChannel
        do {
            connection = try await PeerTransport.connect(host: address.host, port: address.port, tls: tls)
        } catch {
            throw PairingError.failed("cannot reach \(address): \(error)")
        }
        return try await withThrowingTaskGroup(of: (PeerMessage.PairWelcome, String)?.self) { group in
            group.addTask {
                try await LoopTimer.sleep(for: .seconds(15))
                connection.channel.channel.close(promise: nil)
                return nil
            }
            group.addTask {
                try await connection.channel.executeThenClose { inbound, outbound in
                    let server = try await connection.peerMachine.get()
                    guard let exchange = Spake2(role: .alice, myName: tls.localMachine, theirName: server),
                        let message = exchange.message(password: PairingCode.password(code))
                    else {
                        throw PairingError.failed("cannot start the key exchange")
                    }
                    var messages = inbound.makeAsyncIterator()
                    func next() async throws -> PeerMessage {
                        guard let message = try await messages.next() else {
                            throw PairingError.failed("\(address) closed the connection during pairing")
                        }
                        if case let .error(_, reason) = message { throw PairingError.refused(reason) }
                        return message
                    }
                    try await outbound.write(.pairStart(.init(message: message, name: name)))
                    guard case let .pairReply(reply, confirmation) = try await next(),
                        let key = exchange.key(peerMessage: reply)
                    else {
                        throw PairingError.failed("\(address) answered pairing with an unexpected message")
                    }
                    func expected(_ role: MembershipProof.Role) -> [UInt8] {
                        PairingConfirmation.expected(
                            key: key, role: role, clientMachine: tls.localMachine, serverMachine: server,
                            clientMessage: message, serverMessage: reply)
                    }
                    guard PairingConfirmation.matches(confirmation, expected(.server)) else {
                        try? await outbound.write(.error(.notAMember, "wrong pairing code"))
                        throw PairingError.refused("wrong pairing code (check the digits, or make a new code)")
                    }
                    try await outbound.write(.pairConfirm(expected(.client)))
                    guard case let .pairWelcome(welcome) = try await next() else {
                        throw PairingError.failed("\(address) answered pairing with an unexpected message")
                    }
                    return (welcome, Hex.string(server))
                }
            }
            defer { group.cancelAll() }
            guard let welcome = try await group.next() ?? nil else {
                throw PairingError.failed("\(address) did not finish pairing within 15 s")
            }
            return welcome
        }
    }
}

/// The last failure seen while trying discovered machines (for the final message).
private final class LastRefusal: Sendable {
    private let value = Mutex<String?>(nil)
    func set(_ text: String) { value.withLock { $0 = text } }
    func get() -> String? { value.withLock { $0 } }
}

// The answering side: an agent whose household opened an invitation (`pulse-peer invite`),
// inside a session (PeerSession.swift hands it the PAIR messages).
extension PeerSession {

    /// A machine asks to pair: one attempt of the open invitation is spent now; answer with
    /// our SPAKE2 message and key confirmation.
    func startPairing(
        _ start: PeerMessage.PairStart, _ outbound: Outbox, shared: Shared,
        peerMachine: [UInt8], machineHex: String
    ) async throws {
        let invitation: PairingInvitation
        switch host.beginPairingAttempt() {
        case let .failure(refusal):
            let reason = "\(refusal)"
            try? await outbound.write(.error(.notAMember, reason))
            await host.refused(machine: machineHex, remote: connection.remoteAddress, reason: "pairing: \(reason)", byPeer: false)
            logger.notice("refused a pairing attempt", metadata: ["machine": "\(machineHex.prefix(12))", "reason": "\(reason)"])
            throw End.closed(reason)
        case let .success(open):
            invitation = open
        }
        guard let exchange = Spake2(role: .bob, myName: host.localMachine, theirName: peerMachine),
            let reply = exchange.message(password: PairingCode.password(invitation.code)),
            let key = exchange.key(peerMessage: start.message)
        else {
            try? await outbound.write(.error(.malformed, "invalid pairing message"))
            throw End.closed("invalid pairing message")
        }
        func confirmation(_ role: MembershipProof.Role) -> [UInt8] {
            PairingConfirmation.expected(
                key: key, role: role, clientMachine: peerMachine, serverMachine: host.localMachine,
                clientMessage: start.message, serverMessage: reply)
        }
        let name = String(start.name.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F }.map(Character.init)).trimmed
        shared.state.withLock {
            $0.pairing = .init(
                expectedConfirmation: confirmation(.client), name: String((name.isEmpty ? "unnamed" : name).prefix(100)),
                memberID: invitation.memberID, code: invitation.code)
        }
        try await outbound.write(.pairReply(message: reply, confirmation: confirmation(.server)))
    }

    /// The joiner's confirmation: right, the invitation is spent and the machine admitted
    /// (durably, before the welcome is sent); wrong, the code was wrong.
    func finishPairing(_ confirmation: [UInt8], _ outbound: Outbox, shared: Shared, machineHex: String) async throws {
        guard let pending = shared.state.withLock({ $0.pairing }) else { throw End.closed("no pairing in progress") }
        guard PairingConfirmation.matches(confirmation, pending.expectedConfirmation) else {
            let reason = "wrong pairing code"
            try? await outbound.write(.error(.notAMember, reason))
            await host.refused(machine: machineHex, remote: connection.remoteAddress, reason: "pairing: \(reason)", byPeer: false)
            logger.notice("refused a pairing attempt", metadata: ["machine": "\(machineHex.prefix(12))", "reason": "\(reason)"])
            throw End.closed(reason)
        }
        host.pairingSucceeded(code: pending.code)
        let welcome: PeerMessage.PairWelcome
        do {
            welcome = try await host.admitPaired(machine: machineHex, name: pending.name, memberID: pending.memberID)
        } catch {
            let reason = "\(error)"
            try? await outbound.write(.error(.notAMember, reason))
            throw End.closed(reason)
        }
        try await outbound.write(.pairWelcome(welcome))
        logger.notice("paired a new machine", metadata: ["machine": "\(machineHex.prefix(12))", "name": "\(pending.name)"])
        await host.storeChanged(except: nil)
    }
}
