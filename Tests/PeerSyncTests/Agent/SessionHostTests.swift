import Crypto
import Logging
import NIOCore
import NIOEmbedded
import Synchronization
import Testing
@testable import PeerSync
@testable import PulseHousehold
@testable import PulseModel
@testable import PulseProtocol
@testable import PulseStore
@testable import PulseTransport

/// A session's logic with its host faked: no SQLite, no socket, no other sessions. The
/// test plays the peer with its own `SessionStateMachine` over a testing channel.
@Suite(.timeLimit(.minutes(2))) struct SessionHostTests {
    let secret = SymmetricKey(size: .bits256)
    let localMachine = Array(repeating: UInt8(2), count: 32)
    let peerMachine = Array(repeating: UInt8(1), count: 32)
    let peerReplica = ReplicaID(rawValue: 11)

    /// A host that remembers what the session asked of it.
    final class FakeHost: SessionHost {
        struct Calls {
            var registered: [String] = []
            var applied: [DeltaBatch] = []
            var refused: [String] = []
            var unregistered: [Int] = []
            var caughtUp = 0
        }
        let options = SessionOptions()
        let secret: SymmetricKey
        let localMachine: [UInt8]
        let standing: SessionStateMachine.PeerStanding
        let calls = Mutex(Calls())
        var trace: (@Sendable (TraceHop) -> Void)? { nil }

        init(secret: SymmetricKey, localMachine: [UInt8], standing: SessionStateMachine.PeerStanding) {
            self.secret = secret
            self.localMachine = localMachine
            self.standing = standing
        }

        func replicaID() async -> ReplicaID { ReplicaID(rawValue: 22) }
        func standing(of machine: String) async throws -> SessionStateMachine.PeerStanding { standing }
        func historyHeads() async throws -> HistoryHeads { HistoryHeads() }
        func checkHistories(_ theirs: HistoryHeads, peer: String) async throws -> HistoryCheck { HistoryCheck() }
        func historyStamps(of origin: ReplicaID, upTo: UInt64) async throws -> [UInt64] { [] }
        func healFork(of origin: ReplicaID, forkAt: UInt64, peer: String) async throws -> HistoryCheck { HistoryCheck() }
        func machineName(_ machine: String) async -> String? { "Tom's laptop" }
        func checkNotBehindItself(replica: ReplicaID, peerVector: VersionVector, peer: String) async throws -> WentBackInTime? { nil }
        func apply(_ batch: DeltaBatch) async throws -> ApplyOutcome {
            calls.withLock { $0.applied.append(batch) }
            var outcome = ApplyOutcome()
            for claim in batch.coverage { outcome.versionVector[claim.origin] = claim.upTo }
            return outcome
        }
        func noteCaughtUp() async throws { calls.withLock { $0.caughtUp += 1 } }
        func publishedSeq() -> UInt64 { 0 }
        func markPublished(upTo seq: UInt64, of replica: ReplicaID) async throws -> Bool { true }
        func openReader() throws -> any SessionReader { EmptyReader(standing: standing) }
        func admitPaired(machine: String, name: String, memberID: String?) async throws -> PeerMessage.PairWelcome {
            throw CancellationError()
        }
        func register(
            _ id: Int, machine: String, replica: ReplicaID, role: MembershipProof.Role, origin: PeerOrigin,
            remote: String, bytes: ByteCounts, close: @escaping @Sendable (_ farewell: PeerMessage?) -> Void,
            signal: AsyncStream<Void>.Continuation
        ) async -> SyncEngine.Registration {
            calls.withLock { $0.registered.append(machine) }
            return .accepted(replacedOld: false)
        }
        func unregister(_ id: Int, error: String?) async { calls.withLock { $0.unregistered.append(id) } }
        func touch(_ id: Int) async {}
        func peerClock(_ id: Int, offset: Int64) async {}
        func peerSoftware(_ id: Int, release: String?, version: UInt16) async {}
        func peerVector(_ id: Int, _ vector: VersionVector) async {}
        func peerCaughtUp(_ id: Int, _ vector: VersionVector) async {}
        func weCaughtUp(_ id: Int) async {}
        func rejected(machine: String, remote: String, problem: String, byPeer: Bool) async {}
        func refused(machine: String, remote: String, reason: String, byPeer: Bool) async {
            calls.withLock { $0.refused.append(reason) }
        }
        func protocolMismatch(machine: String, remote: String, origin: PeerOrigin, theirs: ClosedRange<UInt16>, byPeer: Bool) async {}
        func countApplied(_ count: Int) async {}
        func storeChanged(except: Int?) async {}
        func closeAll(_ reason: String, except: Int?) async {}
        func setStoreProblem(_ problem: String?) async {}
        func applied(_ outcome: ApplyOutcome) async {}
        func peerEvent(_ kind: HouseholdEvent.Kind, machine: String) async {}
        func replicaRestarted(localSeq: UInt64) async {}
        func beginPairingAttempt() -> Result<PairingInvitation, PairingInvitation.Refusal> { .failure(.none) }
        func pairingSucceeded(code: String) {}
    }

    /// A database with nothing to send.
    struct EmptyReader: SessionReader {
        let standing: SessionStateMachine.PeerStanding
        final class Nothing: SessionDeltas {
            let standing: SessionStateMachine.PeerStanding
            init(standing: SessionStateMachine.PeerStanding) { self.standing = standing }
            var ownReplica: ReplicaID? { ReplicaID(rawValue: 22) }
            var publishedSeq: UInt64 { 0 }
            var snapshotVector: VersionVector { VersionVector() }
            func standing(of machine: String) throws -> SessionStateMachine.PeerStanding { standing }
            func next() throws -> DeltaBatch? { nil }
        }
        func deltas(for peerVector: VersionVector, batchLimit: Int) throws -> any SessionDeltas { Nothing(standing: standing) }
    }

    /// Runs a server session over a testing channel; `peer` plays the other side.
    func withSession(
        host: FakeHost, _ peer: (_ receive: () async throws -> PeerMessage, _ send: (PeerMessage) async throws -> Void) async throws -> Void
    ) async throws -> String? {
        let channel = NIOAsyncTestingChannel()
        let loop = channel.testingEventLoop
        let wrapped = try await loop.executeInContext {
            try NIOAsyncChannel<PeerMessage, PeerMessage>(wrappingChannelSynchronously: channel)
        }
        let connection = PeerChannel(
            channel: wrapped, peerMachine: loop.makeSucceededFuture(peerMachine), bytes: ByteCounts(),
            frameLimit: FrameLimit(authenticated: false), admission: nil)
        let session = Task {
            await PeerSession(
                id: 1, connection: connection, role: .server, origin: .inbound, host: host,
                logger: Logger(label: "test")
            ).run()
        }
        // Waits for the session's next write, not a slice of wall time: a busy machine
        // (the suite runs tests in parallel on two cores) may starve the session for a
        // while. The wait still ends: the session's watchdog closes the channel (no
        // handshake within 10 s, or the peer silent), which fails the wait, and the
        // suite has a time limit. A keepalive PING is not an answer.
        func receive() async throws -> PeerMessage {
            while true {
                let message = try await channel.waitForOutboundWrite(as: PeerMessage.self)
                if case .ping = message { continue }
                return message
            }
        }
        func send(_ message: PeerMessage) async throws {
            try await channel.writeInbound(message)
            await loop.run()
        }
        do { try await peer(receive, send) } catch {
            session.cancel()
            throw error
        }
        try? await channel.close() // the session may have closed it already (a refusal)
        return await session.value
    }

    @Test func aMemberIsRegisteredAndItsBatchAppliedThroughTheHostAndAcknowledged() async throws {
        let host = FakeHost(secret: secret, localMachine: localMachine, standing: .member)
        _ = try await withSession(host: host) { receive, send in
            var peer = SessionStateMachine(
                role: .client, secret: secret, localMachine: peerMachine, peerMachine: localMachine, localReplica: peerReplica)
            for case let .send(hello) in peer.start() { try await send(hello) }
            let reply = try await receive()
            #expect(peer.receive(reply).contains(.established(peer: ReplicaID(rawValue: 22))))
            guard case .vector = try await receive() else { Issue.record("no VECTOR after the handshake"); return }
            try await send(.vector(HistoryHeads()))
            let told = try await receive()
            guard case .caughtUp = told else { Issue.record("no CAUGHT_UP: nothing to send, but \(told)"); return }
            let batch = DeltaBatch(coverage: [Coverage(origin: peerReplica, after: 0, upTo: 3)])
            try await send(.batch(batch))
            guard case let .ack(vector) = try await receive() else { Issue.record("the batch was not acknowledged"); return }
            #expect(vector[peerReplica] == 3)
            #expect(host.calls.withLock { $0.applied } == [batch])
        }
        #expect(host.calls.withLock { $0.registered } == [Hex.string(peerMachine)])
    }

    @Test func aRemovedMachineIsRefusedAndNeverRegistered() async throws {
        let host = FakeHost(secret: secret, localMachine: localMachine, standing: .removed)
        _ = try await withSession(host: host) { receive, send in
            var peer = SessionStateMachine(
                role: .client, secret: secret, localMachine: peerMachine, peerMachine: localMachine, localReplica: peerReplica)
            for case let .send(hello) in peer.start() { try await send(hello) }
            guard case .error(.notAMember, _) = try await receive() else { Issue.record("not refused"); return }
        }
        #expect(host.calls.withLock { $0.registered }.isEmpty && host.calls.withLock { $0.applied }.isEmpty)
        #expect(!host.calls.withLock { $0.refused }.isEmpty)
    }
}
