import Crypto
import FoundationEssentials
import PulseModel

/// The protocol state of one session, as a plain value: feed it events, carry out the
/// actions it returns. No I/O, no store: the agent's session does those.
///
/// Order (docs/PROTOCOL.md): the client sends HELLO; the server checks it and answers
/// HELLO; the client checks that. Each side then sends VECTOR, streams BATCHes of what
/// the other lacks, and sends CAUGHT_UP; afterwards BATCHes carry live changes, ACKs
/// report the receiver's vector, PING/PONG keep the session alive.
public struct SessionStateMachine: Sendable {
    public enum Action: Sendable, Equatable {
        case send(PeerMessage)
        /// The peer proved membership: it is replica `peer`. Send our VECTOR now.
        case established(peer: ReplicaID)
        /// The peer's wall clock when it sent HELLO (version 2), Unix milliseconds; comes
        /// right before `established`.
        case peerClock(Int64)
        /// The release the peer runs (version 9), when its HELLO named one; before `established`.
        case peerRelease(String)
        /// The peer told what it has (with the stamps at its entries and its seals): check the
        /// histories, then stream it what it lacks.
        case startCatchUp(HistoryHeads)
        /// The peer's stamps of an origin whose history forked (HISTORY).
        case historyStamps(HistoryStamps)
        case apply(DeltaBatch)
        case peerCaughtUp(VersionVector)
        case peerAcknowledged(VersionVector)
        /// Close the session; `notify` is sent first when set.
        case close(reason: String, notify: PeerMessage?)
        /// A machine asks to pair (server only): check the invitation, answer with
        /// PAIR_REPLY (docs/PROTOCOL.md §9).
        case pairingStarted(PeerMessage.PairStart)
        /// The joining machine's key confirmation: check it, then welcome or refuse.
        case pairingConfirmed([UInt8])
    }

    /// What this machine's household data says of the peer's machine id (from TLS),
    /// judged when the connection is up.
    public enum PeerStanding: Sendable, Equatable {
        case member
        case removed
        case unknown
    }

    package enum State: Sendable {
        case awaitingHello
        case pairing(confirmed: Bool)
        case established(peerVectorSeen: Bool)
        case closed
    }

    public let role: MembershipProof.Role
    private let secret: SymmetricKey
    private let localMachine: [UInt8]
    private let peerMachine: [UInt8]
    private let localReplica: ReplicaID
    private let peerStanding: PeerStanding
    private let wallClock: @Sendable () -> Int64
    /// The release this side names in its HELLO.
    private let release: String?
    private var state: State = .awaitingHello
    /// The protocol versions this side speaks.
    private let versions: ClosedRange<UInt16>
    /// The version of this side's HELLO: the highest it speaks (a client's); once the peer's
    /// HELLO is in, the session's version — the highest both speak (PROTOCOL.md §7).
    private var version: UInt16

    /// The session's protocol version, agreed once the peer's HELLO is in.
    public var sessionVersion: UInt16 { version }

    /// `localMachine`/`peerMachine`: the SHA-256 of each side's certificate public key,
    /// as TLS established them.
    /// `wallClock`: Unix milliseconds, sent in HELLO so that peers can compare clocks.
    /// `peerStanding`: whether the household lists the peer's machine (checked with the
    /// proof, before any household data is sent).
    public init(
        role: MembershipProof.Role, secret: SymmetricKey, localMachine: [UInt8], peerMachine: [UInt8], localReplica: ReplicaID,
        peerStanding: PeerStanding = .member, versions: ClosedRange<UInt16> = PeerMessage.Hello.supportedVersions,
        release: String? = nil, wallClock: @escaping @Sendable () -> Int64 = WallClock.system
    ) {
        self.versions = versions
        self.release = release
        version = versions.upperBound
        self.wallClock = wallClock
        self.peerStanding = peerStanding
        self.role = role
        self.secret = secret
        self.localMachine = localMachine
        self.peerMachine = peerMachine
        self.localReplica = localReplica
    }

    public var isEstablished: Bool { if case .established = state { true } else { false } }

    private var clientMachine: [UInt8] { role == .client ? localMachine : peerMachine }
    private var serverMachine: [UInt8] { role == .client ? peerMachine : localMachine }

    private func ownHello() -> PeerMessage {
        .hello(
            .init(
                version: version, replica: localReplica,
                proof: MembershipProof.compute(secret: secret, role: role, clientMachine: clientMachine, serverMachine: serverMachine),
                clock: wallClock(), release: release))
    }

    /// What to do when the connection is up: the client speaks first.
    public mutating func start() -> [Action] {
        role == .client ? [.send(ownHello())] : []
    }

    public mutating func receive(_ message: PeerMessage) -> [Action] {
        switch (state, message) {
        case (.closed, _):
            return []
        case let (_, .error(code, reason)):
            state = .closed
            return [.close(reason: "peer closed the session: \(reason) (code \(code.rawValue))", notify: nil)]
        case let (.awaitingHello, .hello(hello)):
            // Versions negotiated (§7): a client's HELLO names the highest version it speaks;
            // the server answers in the highest both speak, or refuses a client whose highest
            // is below its own lowest; the client refuses an answer it does not speak.
            let agreed: UInt16? =
                role == .server
                ? (hello.version >= versions.lowerBound ? min(hello.version, versions.upperBound) : nil)
                : (versions.contains(hello.version) && hello.version <= version ? hello.version : nil)
            guard let agreed else {
                return fail(
                    .unsupportedVersion,
                    "unsupported protocol version \(hello.version) "
                        + "(this agent speaks \(versions.lowerBound)–\(versions.upperBound))")
            }
            version = agreed
            let peerRole: MembershipProof.Role = role == .client ? .server : .client
            guard
                MembershipProof.verify(
                    hello.proof, secret: secret, role: peerRole,
                    clientMachine: clientMachine, serverMachine: serverMachine)
            else {
                return fail(.notAMember, "not a member of this household")
            }
            switch peerStanding {
            case .member: break
            case .removed: return fail(.notAMember, "this machine was removed from the household")
            case .unknown:
                return fail(
                    .notAMember,
                    "this machine is not on the household's list of machines (pair it: "
                        + "`pulse-peer invite` on a machine of the household, `pulse-peer join CODE` on this one)")
            }
            guard hello.replica != localReplica else { return fail(.selfConnection, "connected to itself") }
            state = .established(peerVectorSeen: false)
            return (role == .server ? [.send(ownHello())] : []) + (hello.clock.map { [.peerClock($0)] } ?? [])
                + (hello.release.map { [.peerRelease($0)] } ?? []) + [.established(peer: hello.replica)]
        case let (.awaitingHello, .pairStart(start)) where role == .server:
            guard start.version == PeerMessage.PairStart.currentVersion else {
                return fail(.unsupportedVersion, "unsupported pairing version \(start.version) (this agent speaks 1)")
            }
            state = .pairing(confirmed: false)
            return [.pairingStarted(start)]
        case let (.pairing(false), .pairConfirm(confirmation)):
            state = .pairing(confirmed: true)
            return [.pairingConfirmed(confirmation)]
        case (.pairing, _):
            return fail(.unexpectedMessage, "unexpected message while pairing")
        case (.awaitingHello, _):
            return fail(.unexpectedMessage, "expected HELLO first")
        case (.established, .hello):
            return fail(.unexpectedMessage, "HELLO sent twice")
        case let (.established(seen), .vector(vector)):
            guard !seen else { return fail(.unexpectedMessage, "VECTOR sent twice") }
            state = .established(peerVectorSeen: true)
            return [.startCatchUp(vector)]
        case (.established(false), _):
            return fail(.unexpectedMessage, "expected VECTOR after HELLO")
        case let (.established, .batch(batch)):
            return [.apply(batch)]
        case let (.established, .history(stamps)):
            return [.historyStamps(stamps)]
        case let (.established, .caughtUp(vector)):
            return [.peerCaughtUp(vector)]
        case let (.established, .ack(vector)):
            return [.peerAcknowledged(vector)]
        case let (.established, .ping(token)):
            return [.send(.pong(token))]
        case (.established, .pong):
            return []
        case (.established, .pairStart), (.established, .pairReply), (.established, .pairConfirm), (.established, .pairWelcome):
            return fail(.unexpectedMessage, "a pairing message in a sync session")
        }
    }

    /// A protocol violation or local failure: tell the peer why and close.
    public mutating func fail(_ code: ProtocolErrorCode, _ reason: String) -> [Action] {
        state = .closed
        return [.close(reason: reason, notify: .error(code, reason))]
    }
}
