import Crypto
import FoundationEssentials
import Logging
import NIOCore
import Synchronization
import PulseStore
import PulseProtocol
import PulseTransport
import PulseModel

/// Timings and sizes of sessions.
public struct SessionOptions: Sendable {
    /// A PING is sent after this long; a peer silent for three intervals is dead.
    public var keepalive: Duration = .seconds(15)
    /// TLS and the membership handshake must finish within this.
    public var handshakeTimeout: Duration = .seconds(10)
    /// Changes per BATCH (and at most ``DeltaCursor/defaultByteLimit`` bytes of them).
    public var batchLimit = DeltaCursor.defaultBatchLimit
    /// BATCHes sent and not yet acknowledged before the sender waits. Two keep the pipe
    /// full (the peer applies one while the next travels); waiting beyond that lets
    /// changes made meanwhile gather into the next batch, so a peer under a burst of
    /// writes applies a few large batches (one fsync each) instead of one per write.
    public var batchesInFlight = 2
    /// The release this agent names in its HELLO (protocol 9), from `--version`'s words.
    public var release: String?

    public init() {}

    func naming(_ release: String?) -> SessionOptions {
        var options = self
        options.release = release
        return options
    }

    var idleTimeout: Duration { keepalive * 3 }
}

/// One session with another agent, from TLS to close: the handshake (through
/// ``SessionStateMachine``), the catch-up both ways, live pushes, keepalive.
///
/// Four child tasks share the connection: the reader (owns the state machine, applies
/// batches), the sender (catch-up, then what the peer lacks after each store change),
/// the pinger and the watchdog. The first to end ends the session; the channel is closed.
struct PeerSession {
    let id: Int
    let connection: PeerChannel
    let role: MembershipProof.Role
    let origin: PeerOrigin
    /// What the session needs of the agent that runs it (SessionHost.swift).
    let host: any SessionHost
    /// The agent's logger, with this connection's remote address.
    let logger: Logger

    var options: SessionOptions { host.options }

    /// State the tasks share.
    final class Shared: Sendable {
        struct State {
            var lastInbound = ContinuousClock.now
            var established = false
            /// The protocol version the peer's HELLO named (said back if it is refused).
            var peerVersion: UInt16?
            /// The peer's wall clock minus ours at HELLO, in milliseconds (protocol 2).
            var clockOffset: Int64?
            /// The release the peer's HELLO named (protocol 9).
            var peerRelease: String?
            /// Held changes were logged once for this session.
            var reportedHeld = false
            /// What the peer is known to have: its VECTOR, its ACKs, the coverage of
            /// batches it sent us, and what we have sent it.
            var peerKnown = VersionVector()
            /// The peer's machine id once the session is established (for the "lost" event).
            var peerMachine: String?
            /// A pairing in progress (server): what the joiner must confirm, and for whom.
            var pairing: PendingPairing?
            /// The replica id this session said HELLO with.
            var localReplica: ReplicaID?
            /// The VECTOR this side sent, and the peer's (protocol 9: stamps and seals).
            var sentHeads: HistoryHeads?
            var peerHeads: HistoryHeads?
            /// Origins whose histories the two sides found different, by origin
            /// (PeerSession+Histories.swift).
            var forks: [ReplicaID: ForkExchange] = [:]
            /// Why this side ended the session, set before it closes the channel: the
            /// close also ends the reader, which may finish first (and cleanly).
            var endedBecause: String?
        }
        struct PendingPairing {
            let expectedConfirmation: [UInt8]
            let name: String
            let memberID: String?
            let code: String
        }
        let state = Mutex(State())
    }

    enum End: Error, CustomStringConvertible {
        case closed(String)
        case timeout(String)
        var description: String {
            switch self {
            case let .closed(reason), let .timeout(reason): reason
            }
        }
    }

    /// Runs until the connection ends; returns why (nil: the peer hung up cleanly).
    func run() async -> String? {
        let shared = Shared()
        let (signals, signal) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let (peerVectors, peerVector) = AsyncStream<VersionVector>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let (acks, ack) = AsyncStream<Void>.makeStream()
        let channel = connection.channel.channel
        var endReason: String?
        do {
            try await connection.channel.executeThenClose { inbound, writer in
                let outbound = Outbox(writer)
                do {
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        group.addTask {
                            try await read(inbound, outbound, shared: shared, signal: signal, peerVector: peerVector, ack: ack)
                        }
                        group.addTask {
                            try await send(outbound, shared: shared, peerVectors: peerVectors, signals: signals, acks: acks)
                        }
                        group.addTask { try await watchdog(shared: shared, channel: channel, outbound: outbound) }
                        group.addTask { try await pinger(outbound, shared: shared) }
                        defer { group.cancelAll() }
                        try await group.next()
                    }
                } catch {
                    // The session is over now, even if closing TLS waits for the peer.
                    await host.unregister(id, error: shared.state.withLock(\.endedBecause) ?? "\(error)")
                    throw error
                }
                // Ended by this side's watchdog, though the reader's clean end came first.
                let endedBecause = shared.state.withLock(\.endedBecause)
                await host.unregister(id, error: endedBecause)
                if let endedBecause { throw End.timeout(endedBecause) }
            }
        } catch {
            endReason = shared.state.withLock(\.endedBecause) ?? "\(error)"
        }
        signal.finish()
        peerVector.finish()
        ack.finish()
        await host.unregister(id, error: endReason)
        if let machine = shared.state.withLock({ $0.peerMachine }) {
            await host.peerEvent(.peerLost, machine: (await host.machineName(machine)) ?? String(machine.prefix(12)))
        }
        return endReason
    }

    // MARK: Reader

    private func read(
        _ inbound: NIOAsyncChannelInboundStream<PeerMessage>, _ outbound: Outbox,
        shared: Shared, signal: AsyncStream<Void>.Continuation,
        peerVector: AsyncStream<VersionVector>.Continuation,
        ack: AsyncStream<Void>.Continuation
    ) async throws {
        let peerMachine = try await connection.peerMachine.get()
        let machineHex = Hex.string(peerMachine)
        let localReplica = await host.replicaID()
        shared.state.withLock { $0.localReplica = localReplica }
        var machine = SessionStateMachine(
            role: role, secret: host.secret, localMachine: host.localMachine,
            peerMachine: peerMachine, localReplica: localReplica,
            peerStanding: try await host.standing(of: machineHex), release: options.release)
        try await perform(machine.start(), outbound, shared: shared, machineHex: machineHex, signal: signal, peerVector: peerVector, ack: ack)
        var messages = inbound.makeAsyncIterator()
        while true {
            let next: PeerMessage?
            do {
                next = try await messages.next()
            } catch let error as WireError {
                // Bytes that are not a valid message (or a frame too large): say so and close.
                try await perform(
                    machine.fail(error.code, "\(error)"), outbound, shared: shared, machineHex: machineHex,
                    signal: signal, peerVector: peerVector, ack: ack)
                return
            }
            guard let message = next else { return }
            if case let .error(.rejectedBatch, reason) = message {
                await host.rejected(
                    machine: machineHex, remote: connection.remoteAddress,
                    problem: "it refused this machine's changes (\(reason)). They stay here and are offered "
                        + "again at every connection; see `pulse-peer status` on it for what to do",
                    byPeer: true)
                logger.warning("the peer rejected our changes", metadata: ["peer": "\(machineHex.prefix(12))", "reason": "\(reason)"])
            }
            if case let .hello(hello) = message { shared.state.withLock { $0.peerVersion = hello.version } }
            if case let .error(.unsupportedVersion, reason) = message, let theirs = PeerMessage.Hello.spokenVersions(in: reason) {
                await host.protocolMismatch(machine: machineHex, remote: connection.remoteAddress, origin: origin, theirs: theirs, byPeer: true)
                logger.warning("the peer speaks other protocol versions", metadata: ["peer": "\(machineHex.prefix(12))", "reason": "\(reason)"])
            }
            if case let .error(.notAMember, reason) = message {
                if shared.state.withLock({ $0.pairing != nil }) {
                    // The joiner found our confirmation wrong: it tried a wrong code.
                    await host.refused(
                        machine: machineHex, remote: connection.remoteAddress, reason: "pairing: wrong pairing code",
                        byPeer: false)
                } else {
                    await host.refused(machine: machineHex, remote: connection.remoteAddress, reason: reason, byPeer: true)
                    logger.warning("refused by the peer", metadata: ["machine": "\(machineHex.prefix(12))", "reason": "\(reason)"])
                }
            }
            logger.trace("inbound", metadata: ["message": "\(String(describing: message).prefix(40))"])
            shared.state.withLock { $0.lastInbound = .now }
            if shared.state.withLock({ $0.established }) { await host.touch(id) }
            var actions = machine.receive(message)
            do {
                try await perform(actions, outbound, shared: shared, machineHex: machineHex, signal: signal, peerVector: peerVector, ack: ack)
            } catch let error as StoreError {
                await host.rejected(
                    machine: machineHex, remote: connection.remoteAddress,
                    problem: "this machine refused its changes: \(error). Nothing of them was applied here; "
                        + "they are offered again at every connection. If both run the same pulse-peer, its "
                        + "database may be damaged (see `pulse-peer status` on it)",
                    byPeer: false)
                logger.warning("rejected a batch", metadata: ["peer": "\(machineHex.prefix(12))", "error": "\(error)"])
                actions = machine.fail(.rejectedBatch, "rejected a batch: \(error)")
                try await perform(actions, outbound, shared: shared, machineHex: machineHex, signal: signal, peerVector: peerVector, ack: ack)
            }
        }
    }

    private func perform(
        _ actions: [SessionStateMachine.Action], _ outbound: Outbox,
        shared: Shared, machineHex: String, signal: AsyncStream<Void>.Continuation,
        peerVector: AsyncStream<VersionVector>.Continuation,
        ack: AsyncStream<Void>.Continuation
    ) async throws {
        for action in actions {
            switch action {
            case let .send(message):
                try await outbound.write(message)
            case let .peerRelease(release):
                shared.state.withLock { $0.peerRelease = release }
            case let .peerClock(clock):
                let offset = clock - ReplicaStore.systemClock()
                shared.state.withLock { $0.clockOffset = offset }
                if abs(offset) >= AgentStatus.clockWarningMilliseconds {
                    logger.warning(
                        "the peer's clock differs from this machine's",
                        metadata: [
                            "offset": "\(AgentStatus.describe(milliseconds: offset))",
                            "peer": "\(machineHex.prefix(12))",
                        ])
                }
            case let .established(peer):
                connection.authenticated()
                let channel = connection.channel.channel
                let registration = await host.register(
                    id, machine: machineHex, replica: peer, role: role, origin: origin,
                    remote: connection.remoteAddress, bytes: connection.bytes,
                    close: { farewell in
                        if let farewell { channel.writeAndFlush(farewell, promise: nil) }
                        channel.close(promise: nil)
                    }, signal: signal)
                if case .duplicate = registration {
                    try? await outbound.write(.error(.duplicateSession, "already connected"))
                    throw End.closed("duplicate session with \(machineHex.prefix(12))")
                }
                if case .accepted(replacedOld: true) = registration {
                    logger.info(
                        "replaced the previous session with this machine (dead on its side)",
                        metadata: ["peer": "\(machineHex.prefix(12))"])
                }
                let offset = shared.state.withLock { state in
                    state.established = true
                    return state.clockOffset
                }
                if let offset { await host.peerClock(id, offset: offset) }
                // The session's version: the highest both speak (the peer's HELLO named its own or the agreed one).
                let (release, named) = shared.state.withLock { ($0.peerRelease, $0.peerVersion ?? 0) }
                await host.peerSoftware(id, release: release, version: min(named, PeerMessage.Hello.supportedVersions.upperBound))
                logger.info("session established", metadata: ["peer": "\(machineHex.prefix(12))", "role": "\(role)"])
                await host.peerEvent(.peerConnected, machine: (await host.machineName(machineHex)) ?? String(machineHex.prefix(12)))
                shared.state.withLock { $0.peerMachine = machineHex }
                let heads = try await host.historyHeads()
                shared.state.withLock { $0.sentHeads = heads }
                try await outbound.write(.vector(heads))
            case let .startCatchUp(heads):
                let vector = heads.vector
                try await checkNotBehindItself(vector, outbound, shared: shared, machineHex: machineHex)
                shared.state.withLock { $0.peerHeads = heads }
                // Histories that forked are found and healed before anything is sent.
                guard try await checkHistories(heads, outbound, shared: shared, machineHex: machineHex) else { break }
                shared.state.withLock { $0.peerKnown = $0.peerKnown.merging(vector) }
                await host.peerVector(id, vector)
                peerVector.yield(vector)
            case let .apply(batch):
                host.trace?(.batchDecoded)
                let outcome = try await applyPatiently(batch, shared: shared)
                host.trace?(.batchApplied)
                await host.applied(outcome)
                if let ahead = outcome.held.map({ $0.hlc.milliseconds - ReplicaStore.systemClock() }).max(),
                    !shared.state.withLock({ $0.reportedHeld })
                {
                    shared.state.withLock { $0.reportedHeld = true }
                    logger.warning(
                        "holding changes stamped too far ahead of this machine's clock until it catches up",
                        metadata: [
                            "changes": "\(outcome.held.count)",
                            "ahead": "\(AgentStatus.describe(milliseconds: ahead))",
                        ])
                }
                var covered = VersionVector()
                for claim in batch.coverage { covered[claim.origin] = max(covered[claim.origin], claim.upTo) }
                shared.state.withLock { $0.peerKnown = $0.peerKnown.merging(covered) }
                try await outbound.write(.ack(outcome.versionVector))
                await host.peerVector(id, covered)
                // Kept changes (a later release's: PulseStore/KeptChanges.swift) travel on too.
                if !outcome.applied.isEmpty || outcome.kept > 0 {
                    await host.countApplied(outcome.applied.count)
                    await host.storeChanged(except: id)
                    logger.debug("applied batch", metadata: ["changes": "\(outcome.applied.count)", "conflicts": "\(outcome.conflicts)"])
                }
            case let .historyStamps(stamps):
                try await receiveHistory(stamps, outbound, shared: shared, machineHex: machineHex)
            case let .peerCaughtUp(vector):
                do { try await host.noteCaughtUp() } catch {
                    logger.warning("cannot record the first sync", metadata: ["error": "\(error)"])
                }
                await host.peerCaughtUp(id, vector)
            case let .peerAcknowledged(vector):
                shared.state.withLock { $0.peerKnown = $0.peerKnown.merging(vector) }
                await host.peerVector(id, vector)
                ack.yield() // the peer answers every BATCH with one ACK, in order
            case let .close(reason, notify):
                if let notify { try? await outbound.write(notify) }
                if case .error(.unsupportedVersion, _)? = notify, let version = shared.state.withLock({ $0.peerVersion }) {
                    await host.protocolMismatch(
                        machine: machineHex, remote: connection.remoteAddress, origin: origin, theirs: version...version, byPeer: false)
                }
                if case let .error(code, text)? = notify, code == .notAMember {
                    await host.refused(machine: machineHex, remote: connection.remoteAddress, reason: text, byPeer: false)
                    logger.notice("refused a machine", metadata: ["machine": "\(machineHex.prefix(12))", "reason": "\(text)"])
                }
                throw End.closed(reason)
            case let .pairingStarted(start):
                try await startPairing(start, outbound, shared: shared, peerMachine: Hex.bytes(machineHex) ?? [], machineHex: machineHex)
            case let .pairingConfirmed(confirmation):
                try await finishPairing(confirmation, outbound, shared: shared, machineHex: machineHex)
            }
        }
    }

    /// The peer's VECTOR holds more of this replica than this machine ever sent: this
    /// database went back in time (PulseStore/Rewind.swift). It continues as a new replica,
    /// says so, and every session starts again under the new id (the peers send back what
    /// was lost here; the re-issued changes reach them under new numbers).
    private func checkNotBehindItself(_ vector: VersionVector, _ outbound: Outbox, shared: Shared, machineHex: String) async throws {
        guard let replica = shared.state.withLock({ $0.localReplica }) else { return }
        let peer = (await host.machineName(machineHex)) ?? String(machineHex.prefix(12))
        guard let found = try await host.checkNotBehindItself(replica: replica, peerVector: vector, peer: peer) else {
            if await host.replicaID() != replica {
                try? await outbound.write(.error(.shuttingDown, "this machine continues under a new replica id"))
                throw End.closed("this machine continues under a new replica id")
            }
            return
        }
        logger.warning("\(found.sentence)", metadata: ["former replica": "\(found.former)", "replica": "\(found.current)"])
        await host.replicaRestarted(localSeq: found.counter)
        try? await outbound.write(.error(.shuttingDown, "this machine continues under a new replica id"))
        await host.closeAll("this machine continues under a new replica id", except: id) // this one said it above
        throw End.closed("this machine went back in time; it continues under a new replica id")
    }

    /// Applies a batch. While the store refuses it for a reason that passes by itself (the
    /// disk is full, another process holds the write lock), waits and tries again with
    /// backoff (0.25 s doubling to 10 s): nothing is acknowledged meanwhile (the peer keeps
    /// the changes and its window stops it), the session stays, the problem is logged once
    /// and shown in `status`, and the catch-up resumes by itself once the store takes writes.
    private func applyPatiently(_ batch: DeltaBatch, shared: Shared) async throws -> ApplyOutcome {
        var delay: Duration = .milliseconds(250)
        var reported = false
        while true {
            do {
                let outcome = try await host.apply(batch)
                if reported {
                    logger.notice("the store takes writes again; catching up")
                    await host.setStoreProblem(nil)
                }
                return outcome
            } catch let error as StoreError where error.isTransient {
                if !reported {
                    logger.warning("cannot store changes from the peer; retrying", metadata: ["error": "\(error)"])
                    await host.setStoreProblem("\(error)")
                    reported = true
                }
                // Waiting by choice: the reader is not reading, so the peer is not silent.
                shared.state.withLock { $0.lastInbound = .now }
                try await LoopTimer.sleep(for: delay)
                delay = min(delay * 2, .seconds(10))
            }
        }
    }

    // MARK: Sender

    private func send(
        _ outbound: Outbox, shared: Shared,
        peerVectors: AsyncStream<VersionVector>, signals: AsyncStream<Void>,
        acks: AsyncStream<Void>
    ) async throws {
        var vectors = peerVectors.makeAsyncIterator()
        guard await vectors.next() != nil else { return } // the peer's VECTOR: what it has
        let peerMachineHex = Hex.string(try await connection.peerMachine.get())
        var window = Window(limit: max(1, options.batchesInFlight), acks: acks.makeAsyncIterator())
        let reader = try host.openReader()
        // Every send checks the peer's standing first (sendMissing): the first one too, now that
        // the session is registered (a removal applied during the handshake, after the first
        // look and before registration, signalled nobody).
        var told = try await sendMissing(outbound, shared: shared, reader: reader, peer: peerMachineHex, window: &window).snapshot
        try await outbound.write(.caughtUp(told))
        await host.weCaughtUp(id)
        for await _ in signals {
            host.trace?(.senderWoken)
            // Wait for room first: what is written meanwhile joins this snapshot.
            guard await window.waitForRoom() else { return }
            let sent = try await sendMissing(outbound, shared: shared, reader: reader, peer: peerMachineHex, window: &window)
            told = told.merging(sent.covered)
            // Our vector advanced by changes the peer already has (held changes merged
            // late): no BATCH tells it, so CAUGHT_UP again (docs/PROTOCOL.md, Live).
            if told.missing(from: sent.snapshot) > 0 {
                try await outbound.write(.caughtUp(sent.snapshot))
                told = sent.snapshot
            }
        }
    }

    /// Ends the session, telling the peer and recording the refusal, unless the household's
    /// data (the snapshot about to be sent) lists the peer as a member.
    private func refuseUnlessMember(_ peerMachineHex: String, _ outbound: Outbox, standing: SessionStateMachine.PeerStanding) async throws {
        guard standing != .member else { return }
        let reason =
            standing == .removed
            ? "this machine was removed from the household"
            : "this machine is not on the household's list of machines"
        try? await outbound.write(.error(.notAMember, reason))
        await host.refused(machine: peerMachineHex, remote: connection.remoteAddress, reason: reason, byPeer: false)
        throw End.closed(reason)
    }

    /// Counts BATCHes the peer has not acknowledged yet.
    struct Window {
        let limit: Int
        var acks: AsyncStream<Void>.Iterator
        var inFlight = 0

        /// Waits until fewer than `limit` batches are unacknowledged; false when the
        /// session ended meanwhile.
        mutating func waitForRoom() async -> Bool {
            while inFlight >= limit {
                guard await acks.next() != nil else { return false }
                inFlight -= 1
            }
            return true
        }
    }

    /// Streams what the peer lacks from one snapshot; returns the snapshot's vector and
    /// what the batches' coverage told the peer about it.
    ///
    /// A machine removed meanwhile gets nothing more (not the removal, not the new
    /// advertisement key): its standing is read from the snapshot itself before any batch of
    /// it, in the same read transaction, on the sender's own connection (the store's actor may
    /// be busy with other work). A read transaction of its own per check cost a fifth of
    /// propagation's time beyond the commit and the wire (issue 54).
    private func sendMissing(
        _ outbound: Outbox, shared: Shared,
        reader: any SessionReader, peer peerMachineHex: String, window: inout Window
    ) async throws -> (snapshot: VersionVector, covered: VersionVector) {
        let known = shared.state.withLock { $0.peerKnown }
        let cursor = try reader.deltas(for: known, batchLimit: options.batchLimit)
        try await refuseUnlessMember(peerMachineHex, outbound, standing: try cursor.standing(of: peerMachineHex))
        host.trace?(.standingChecked)
        var covered = VersionVector()
        // This database's replica as the snapshot holds it (a new one since the session began
        // is marked too: the session is being closed, but its batch may still leave).
        let mine = cursor.ownReplica
        while let batch = try cursor.next() {
            host.trace?(.batchRead)
            guard await window.waitForRoom() else { throw End.closed("session ended while sending") }
            // Marked "may have left this machine" before it leaves (PulseStore/Rewind.swift).
            if let mine, let own = batch.coverage.lazy.filter({ $0.origin == mine }).map(\.upTo).max(),
                own > max(cursor.publishedSeq, host.publishedSeq()),
                try await !host.markPublished(upTo: own, of: mine)
            {
                throw End.closed("this machine continues under a new replica id")
            }
            try await outbound.write(.batch(batch))
            host.trace?(.batchWritten)
            window.inFlight += 1
            for claim in batch.coverage { covered[claim.origin] = max(covered[claim.origin], claim.upTo) }
        }
        let snapshot = cursor.snapshotVector
        shared.state.withLock { $0.peerKnown = $0.peerKnown.merging(snapshot) }
        return (snapshot, covered)
    }

    // MARK: Keepalive

    /// Ends the session when the handshake takes too long or the peer falls silent.
    /// Never writes, so a peer that stopped reading cannot block it.
    private func watchdog(shared: Shared, channel: Channel, outbound: Outbox) async throws {
        let started = ContinuousClock.now
        while true {
            let (established, lastInbound) = shared.state.withLock { ($0.established, $0.lastInbound) }
            let now = ContinuousClock.now
            if !established {
                let waited = now - started
                if waited >= options.handshakeTimeout {
                    shared.state.withLock { $0.endedBecause = "no handshake within \(options.handshakeTimeout)" }
                    outbound.finish(with: .error(.timeout, "no handshake within \(options.handshakeTimeout)"), on: channel)
                    channel.close(promise: nil) // also fails a TLS handshake still waiting
                    throw End.timeout("no handshake within \(options.handshakeTimeout)")
                }
                try await LoopTimer.sleep(for: min(options.handshakeTimeout - waited, options.keepalive))
                continue
            }
            let silent = now - lastInbound
            if silent >= options.idleTimeout {
                let seconds = Double(silent.components.seconds) + Double(silent.components.attoseconds) / 1e18
                let reason = "peer silent for \((seconds * 10).rounded() / 10) s"
                shared.state.withLock { $0.endedBecause = reason }
                outbound.finish(with: .error(.timeout, reason), on: channel)
                channel.close(promise: nil)
                throw End.timeout(reason)
            }
            try await LoopTimer.sleep(for: options.idleTimeout - silent)
        }
    }

    /// Sends a PING when nothing came from the peer for a keepalive interval (the
    /// peer's PONG, or any other message, keeps the session alive).
    private func pinger(_ outbound: Outbox, shared: Shared) async throws {
        var token: UInt64 = 0
        while true {
            let (established, lastInbound) = shared.state.withLock { ($0.established, $0.lastInbound) }
            let silent = ContinuousClock.now - lastInbound
            if established && silent >= options.keepalive {
                token &+= 1
                try await outbound.write(.ping(token)) // no PING before the handshake: a protocol error
                try await LoopTimer.sleep(for: options.keepalive)
            } else {
                try await LoopTimer.sleep(for: options.keepalive - min(silent, options.keepalive))
            }
        }
    }
}

/// The session's writes, in order. After the first ERROR nothing more is sent (docs/PROTOCOL.md
/// §5.8): a write after it fails, and the other tasks end.
///
/// Not an actor: NIO's writer takes concurrent writes itself, and the flag is all there is to
/// guard. As an actor, each write hopped onto it and off it around the writer's own await
/// (a write of a change's BATCH was ≈ a fifth of propagation's time beyond the commit and
/// the wire: issue 54).
final class Outbox: Sendable {
    private let writer: NIOAsyncChannelOutboundWriter<PeerMessage>
    private let finished = Mutex(false)

    init(_ writer: NIOAsyncChannelOutboundWriter<PeerMessage>) { self.writer = writer }

    func write(_ message: PeerMessage) async throws {
        let closing = finished.withLock { finished -> Bool in
            if finished { return true }
            if case .error = message { finished = true }
            return false
        }
        if closing { throw PeerSession.End.closed("the session is closing") }
        try await writer.write(message)
    }

    /// Ends the session with `message` without waiting for the writer (a peer that stopped
    /// reading cannot block it): written straight to the channel, then nothing more.
    func finish(with message: PeerMessage, on channel: Channel) {
        let first = finished.withLock { finished -> Bool in
            defer { finished = true }
            return !finished
        }
        if first { channel.writeAndFlush(message, promise: nil) }
    }
}
