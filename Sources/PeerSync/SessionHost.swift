import Crypto
import PulseHousehold
import PulseModel
import PulseProtocol
import PulseStore
import PulseTransport

/// What one session needs of the agent that runs it, and nothing more: the household's
/// database as a session sees it, the agent's table of sessions and peers, its events, the
/// open pairing invitation. The agent's `PeerAgent.Context` is the real host (below); a
/// test gives another (no SQLite, no other sessions), so a session's logic is tested over
/// a testing channel (`SessionHostTests`).
protocol SessionHost: Sendable {
    var options: SessionOptions { get }
    /// The household secret (membership proofs).
    var secret: SymmetricKey { get }
    /// This machine's id (its certificate key's hash).
    var localMachine: [UInt8] { get }
    var trace: (@Sendable (TraceHop) -> Void)? { get }

    // MARK: The household's database

    func replicaID() async -> ReplicaID
    func standing(of machine: String) async throws -> SessionStateMachine.PeerStanding
    /// The VECTOR this side sends (protocol 9: the stamp at each entry, the seals).
    func historyHeads() async throws -> HistoryHeads
    /// Compares the peer's VECTOR with this database's histories: heals what a seal of the
    /// peer's says at once, and names the origins whose histories forked (PeerSession+Histories.swift).
    func checkHistories(_ theirs: HistoryHeads, peer: String) async throws -> HistoryCheck
    /// This database's stamps of `origin`'s numbers `1…upTo`.
    func historyStamps(of origin: ReplicaID, upTo: UInt64) async throws -> [UInt64]
    /// Heals a fork of `origin` found at `forkAt` with a peer: this side's branch moves to its own id.
    func healFork(of origin: ReplicaID, forkAt: UInt64, peer: String) async throws -> HistoryCheck
    /// A machine's name in the household's list, if it has one.
    func machineName(_ machine: String) async -> String?
    /// Whether the peer's vector shows this database went back in time (it then continues
    /// as a new replica: PulseStore/Rewind.swift).
    func checkNotBehindItself(replica: ReplicaID, peerVector: VersionVector, peer: String) async throws -> WentBackInTime?
    func apply(_ batch: DeltaBatch) async throws -> ApplyOutcome
    /// A peer's catch-up ended here: this database holds the household's data.
    func noteCaughtUp() async throws
    /// How far this replica's changes are marked as possibly sent.
    func publishedSeq() -> UInt64
    /// Marks this replica's changes up to `seq` as possibly sent; false when the database
    /// left `replica` meanwhile (then nothing of it may leave).
    func markPublished(upTo seq: UInt64, of replica: ReplicaID) async throws -> Bool
    /// A reader of the sender's own: snapshots, away from the store's actor.
    func openReader() throws -> any SessionReader
    func admitPaired(machine: String, name: String, memberID: String?) async throws -> PeerMessage.PairWelcome

    // MARK: The agent's sessions and peers

    func register(
        _ id: Int, machine: String, replica: ReplicaID, role: MembershipProof.Role, origin: PeerOrigin,
        remote: String, bytes: ByteCounts, close: @escaping @Sendable (_ farewell: PeerMessage?) -> Void,
        signal: AsyncStream<Void>.Continuation
    ) async -> SyncEngine.Registration
    func unregister(_ id: Int, error: String?) async
    func touch(_ id: Int) async
    func peerClock(_ id: Int, offset: Int64) async
    /// The release the peer named (protocol 9) and the protocol version of the session.
    func peerSoftware(_ id: Int, release: String?, version: UInt16) async
    func peerVector(_ id: Int, _ vector: VersionVector) async
    func peerCaughtUp(_ id: Int, _ vector: VersionVector) async
    func weCaughtUp(_ id: Int) async
    func rejected(machine: String, remote: String, problem: String, byPeer: Bool) async
    func refused(machine: String, remote: String, reason: String, byPeer: Bool) async
    /// The peer speaks none of this agent's protocol versions (`theirs`): refused by it
    /// (`byPeer`), or by this machine.
    func protocolMismatch(machine: String, remote: String, origin: PeerOrigin, theirs: ClosedRange<UInt16>, byPeer: Bool) async
    func countApplied(_ count: Int) async
    /// Every other session looks for something to send.
    func storeChanged(except: Int?) async
    func closeAll(_ reason: String, except: Int?) async
    func setStoreProblem(_ problem: String?) async

    // MARK: Events

    /// A batch was applied: before its ACK, the changes go to the events (and the held
    /// ones wake whoever waits for them).
    func applied(_ outcome: ApplyOutcome) async
    func peerEvent(_ kind: HouseholdEvent.Kind, machine: String) async
    func replicaRestarted(localSeq: UInt64) async

    // MARK: Pairing (the answering side)

    func beginPairingAttempt() -> Result<PairingInvitation, PairingInvitation.Refusal>
    func pairingSucceeded(code: String)
}

/// The snapshot reader a sender streams from.
protocol SessionReader {
    func deltas(for peerVector: VersionVector, batchLimit: Int) throws -> any SessionDeltas
}

/// One snapshot's batches for a peer (``DeltaCursor``).
protocol SessionDeltas: AnyObject {
    var ownReplica: ReplicaID? { get }
    var publishedSeq: UInt64 { get }
    var snapshotVector: VersionVector { get }
    /// What the snapshot's household data says of `machine` (hex id): read before the first
    /// batch, in the snapshot's own read transaction.
    func standing(of machine: String) throws -> SessionStateMachine.PeerStanding
    func next() throws -> DeltaBatch?
}

extension DeltaCursor: SessionDeltas {
    func standing(of machine: String) throws -> SessionStateMachine.PeerStanding { try StoreService.standing(of: machine, in: self) }
}

extension DeltaReader: SessionReader {
    func deltas(for peerVector: VersionVector, batchLimit: Int) throws -> any SessionDeltas {
        try deltas(for: peerVector, batchLimit: batchLimit, byteLimit: DeltaCursor.defaultByteLimit)
    }
}

/// The agent as its sessions' host: each call goes to the store's actor, the engine, the
/// event pipeline or the invitation book.
extension PeerAgent.Context: SessionHost {
    var localMachine: [UInt8] { tls.localMachine }

    func replicaID() async -> ReplicaID { await store.replicaID }
    func standing(of machine: String) async throws -> SessionStateMachine.PeerStanding { try await store.standing(of: machine) }
    func historyHeads() async throws -> HistoryHeads { try await store.historyHeads() }
    func checkHistories(_ theirs: HistoryHeads, peer: String) async throws -> HistoryCheck {
        try await store.checkHistories(theirs, peer: peer)
    }
    func historyStamps(of origin: ReplicaID, upTo: UInt64) async throws -> [UInt64] {
        try await store.historyStamps(of: origin, upTo: upTo)
    }
    func healFork(of origin: ReplicaID, forkAt: UInt64, peer: String) async throws -> HistoryCheck {
        try await store.healFork(of: origin, forkAt: forkAt, peer: peer)
    }
    func machineName(_ machine: String) async -> String? { try? await store.machineName(machine) }
    func checkNotBehindItself(replica: ReplicaID, peerVector: VersionVector, peer: String) async throws -> WentBackInTime? {
        try await store.checkNotBehindItself(replica: replica, peerVector: peerVector, peer: peer)
    }
    func apply(_ batch: DeltaBatch) async throws -> ApplyOutcome { try await store.apply(batch, trace: trace) }
    func noteCaughtUp() async throws { try await store.noteCaughtUp() }
    func publishedSeq() -> UInt64 { store.published.withLock { $0 } }
    func markPublished(upTo seq: UInt64, of replica: ReplicaID) async throws -> Bool {
        try await store.markPublished(upTo: seq, of: replica)
    }
    func openReader() throws -> any SessionReader { try store.openReader() }
    func admitPaired(machine: String, name: String, memberID: String?) async throws -> PeerMessage.PairWelcome {
        try await store.admitPaired(machine: machine, name: name, memberID: memberID)
    }

    func register(
        _ id: Int, machine: String, replica: ReplicaID, role: MembershipProof.Role, origin: PeerOrigin,
        remote: String, bytes: ByteCounts, close: @escaping @Sendable (_ farewell: PeerMessage?) -> Void,
        signal: AsyncStream<Void>.Continuation
    ) async -> SyncEngine.Registration {
        await engine.register(
            id, machine: machine, replica: replica, role: role, origin: origin, remote: remote, bytes: bytes,
            close: close, signal: signal)
    }
    func unregister(_ id: Int, error: String?) async { await engine.unregister(id, error: error) }
    func touch(_ id: Int) async { await engine.touch(id) }
    func peerClock(_ id: Int, offset: Int64) async { await engine.peerClock(id, offset: offset) }
    func peerSoftware(_ id: Int, release: String?, version: UInt16) async { await engine.peerSoftware(id, release: release, version: version) }
    func peerVector(_ id: Int, _ vector: VersionVector) async { await engine.peerVector(id, vector) }
    func peerCaughtUp(_ id: Int, _ vector: VersionVector) async { await engine.peerCaughtUp(id, vector) }
    func weCaughtUp(_ id: Int) async { await engine.weCaughtUp(id) }
    func rejected(machine: String, remote: String, problem: String, byPeer: Bool) async {
        await engine.rejected(machine: machine, remote: remote, problem: problem, byPeer: byPeer)
    }
    func refused(machine: String, remote: String, reason: String, byPeer: Bool) async {
        await engine.refused(machine: machine, remote: remote, reason: reason, byPeer: byPeer)
    }
    func protocolMismatch(machine: String, remote: String, origin: PeerOrigin, theirs: ClosedRange<UInt16>, byPeer: Bool) async {
        // A stranger's versions are nobody's business here: only a machine of the household
        // gets a line in the status saying which computer to update.
        guard (try? await store.standing(of: machine)) == .member else {
            await engine.refused(
                machine: machine, remote: remote, reason: "speaks protocol versions \(theirs.lowerBound)–\(theirs.upperBound)", byPeer: byPeer)
            return
        }
        let name = (try? await store.machineName(machine)) ?? String(machine.prefix(12))
        await engine.protocolMismatch(machine: machine, remote: remote, origin: origin, name: name, theirs: theirs, byPeer: byPeer)
    }
    func countApplied(_ count: Int) async { await engine.applied(count) }
    func storeChanged(except: Int?) async { await engine.storeChanged(except: except) }
    func closeAll(_ reason: String, except: Int?) async { await engine.closeAll(reason, except: except) }
    func setStoreProblem(_ problem: String?) async { await engine.setStoreProblem(problem) }

    func applied(_ outcome: ApplyOutcome) async {
        onApplied?(outcome)
        await events.applied(outcome)
        if !outcome.held.isEmpty { heldArrived.resumeAll() }
    }
    func peerEvent(_ kind: HouseholdEvent.Kind, machine: String) async { await events.peer(kind, machine: machine) }
    func replicaRestarted(localSeq: UInt64) async { await events.replicaRestarted(localSeq: localSeq) }

    func beginPairingAttempt() -> Result<PairingInvitation, PairingInvitation.Refusal> { invitations.beginAttempt() }
    func pairingSucceeded(code: String) { invitations.succeed(code: code) }
}
