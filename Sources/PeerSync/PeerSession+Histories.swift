import PulseModel
import PulseProtocol

/// What a comparison of histories found (StoreService.checkHistories): origins whose
/// histories forked (to compare with HISTORY), and what was healed already.
struct HistoryCheck: Sendable {
    var forked: [(origin: ReplicaID, upTo: UInt64)] = []
    /// What was done, in a sentence each (logged): forks healed, seals adopted.
    var healed: [String] = []
    /// This machine's own replica was sealed: it continues under this id, whose changes
    /// start at this number.
    var continuesAs: (replica: ReplicaID, counter: UInt64)?

    /// Every session must start again (the vector went down, or the replica id changed).
    var restarts: Bool { !healed.isEmpty || continuesAs != nil }

    func merging(_ other: HistoryCheck) -> HistoryCheck {
        HistoryCheck(forked: forked + other.forked, healed: healed + other.healed, continuesAs: other.continuesAs ?? continuesAs)
    }
}

/// One origin whose histories differ between the two sides of a session: the stamps each
/// sent (HISTORY), until both are complete.
struct ForkExchange: Sendable {
    let upTo: UInt64
    var mine: [UInt64]?
    var theirs: [UInt64] = []
    var healed = false
}

/// Histories that forked (docs/PROTOCOL.md §5): after the VECTORs, each side compares the
/// peer's entries with its own; where the stamps at the lower entry differ, it sends its
/// stamps of that origin (HISTORY) and nothing else. The other side answers with its own;
/// each then finds the same fork point, moves its branch to its derived id and seals the
/// origin, and every session starts again (ERROR 8): the next VECTORs carry the seal, and
/// the two branches travel as two replicas.
extension PeerSession {
    /// Whether the session goes on to its catch-up (false: it waits for the peer's stamps).
    func checkHistories(_ theirs: HistoryHeads, _ outbound: Outbox, shared: Shared, machineHex: String) async throws -> Bool {
        let peer = (await host.machineName(machineHex)) ?? String(machineHex.prefix(12))
        let check = try await host.checkHistories(theirs, peer: peer)
        try await restartIfHealed(check, outbound)
        guard !check.forked.isEmpty else { return true }
        for (origin, upTo) in check.forked {
            logger.warning(
                "this machine and the peer hold different histories under one replica id; comparing them",
                metadata: ["replica": "\(origin)", "up to": "\(upTo)", "peer": "\(peer)"])
            shared.state.withLock { $0.forks[origin] = ForkExchange(upTo: upTo) }
            try await sendStamps(of: origin, upTo: upTo, outbound, shared: shared)
        }
        return false
    }

    /// The peer's stamps of an origin: answered with this side's, and the fork healed once
    /// both are complete.
    func receiveHistory(_ stamps: HistoryStamps, _ outbound: Outbox, shared: Shared, machineHex: String) async throws {
        let (sent, peerHeads) = shared.state.withLock { ($0.sentHeads, $0.peerHeads) }
        guard let sent, let peerHeads else { throw End.closed("HISTORY before the VECTORs") }
        // The numbers compared are the lower of the two entries the VECTORs gave.
        let upTo = min(sent[stamps.origin].seq, peerHeads[stamps.origin].seq)
        let expected = shared.state.withLock { $0.forks[stamps.origin].map { UInt64($0.theirs.count) + 1 } } ?? 1
        guard stamps.upTo == upTo, stamps.from == expected, stamps.from - 1 + UInt64(stamps.hlcs.count) <= upTo else {
            try? await outbound.write(.error(.unexpectedMessage, "HISTORY of \(stamps.origin) does not follow the VECTORs"))
            throw End.closed("the peer's HISTORY of \(stamps.origin) does not follow the VECTORs")
        }
        let first = shared.state.withLock { state in
            if state.forks[stamps.origin] == nil { state.forks[stamps.origin] = ForkExchange(upTo: upTo) }
            state.forks[stamps.origin]!.theirs += stamps.hlcs
            return state.forks[stamps.origin]!.mine == nil
        }
        if first { try await sendStamps(of: stamps.origin, upTo: upTo, outbound, shared: shared) }
        guard let exchange = shared.state.withLock({ $0.forks[stamps.origin] }), let mine = exchange.mine,
            UInt64(exchange.theirs.count) == upTo, !exchange.healed
        else { return }
        shared.state.withLock { $0.forks[stamps.origin]!.healed = true }
        let peer = (await host.machineName(machineHex)) ?? String(machineHex.prefix(12))
        if let forkAt = HistoryRules.forkPoint(mine: mine, theirs: exchange.theirs) {
            // Healed here, or already by another session (then nothing restarts: below).
            try await restartIfHealed(try await host.healFork(of: stamps.origin, forkAt: forkAt, peer: peer), outbound)
        } else {
            // Both agree wherever both know (two checks collided): said, not hidden.
            logger.error(
                "the peer's history of a replica differs from this machine's at its entry, but no fork point was found",
                metadata: ["replica": "\(stamps.origin)"])
        }
        // Every origin compared: the session starts again (what it held back was never sent).
        guard !shared.state.withLock({ $0.forks.values.contains { !$0.healed } }) else { return }
        try? await outbound.write(.error(.shuttingDown, "histories compared; starting again"))
        throw End.closed("histories compared; starting again")
    }

    private func sendStamps(of origin: ReplicaID, upTo: UInt64, _ outbound: Outbox, shared: Shared) async throws {
        let mine = try await host.historyStamps(of: origin, upTo: upTo)
        shared.state.withLock { $0.forks[origin, default: ForkExchange(upTo: upTo)].mine = mine }
        var from = 0
        repeat {
            let chunk = Array(mine[from..<min(mine.count, from + WireLimits.maxStampsPerHistory)])
            try await outbound.write(.history(HistoryStamps(origin: origin, from: UInt64(from) + 1, upTo: upTo, hlcs: chunk)))
            from += chunk.count
        } while from < mine.count
    }

    /// After a heal: logs what was done, and every session (this one too) starts again.
    private func restartIfHealed(_ check: HistoryCheck, _ outbound: Outbox) async throws {
        guard check.restarts else { return }
        for sentence in check.healed { logger.warning("\(sentence)") }
        if let (replica, counter) = check.continuesAs {
            logger.warning("this machine's own history forked: it continues under a new replica id", metadata: ["replica": "\(replica)"])
            await host.replicaRestarted(localSeq: counter)
        }
        let reason = "a history that forked was healed; starting again"
        try? await outbound.write(.error(.shuttingDown, reason))
        await host.closeAll(reason, except: id)
        throw End.closed(reason)
    }
}
