import Crypto
import Synchronization
import FoundationEssentials
import PulseStore
import PulseIdentity
import PulseModel
import PulseHousehold
import PulseProtocol

/// The agent's single owner of the household database. Every store call of the agent
/// goes through this actor, so the (non-Sendable) connection is used by one task at a
/// time. Delta cursors are handed out as `sending` values: each session's sender owns
/// its cursor, which reads on a connection of its own.
actor StoreService {
    private let household: Household
    let householdID: String
    /// This database's replica id: a new one when it went back in time (``checkNotBehindItself(replica:peerVector:peer:)``).
    private(set) var replicaID: ReplicaID
    /// The highest change number of this replica that may have left this machine, as last
    /// read or written (PulseStore/Rewind.swift): the senders check it without a hop here.
    nonisolated let published: Mutex<UInt64>
    let machineID: String
    let databasePath: String
    /// The database file opened (checked by the agent's watch).
    nonisolated let file: DatabaseFile

    /// This agent's token (HomeLock): written into `meta` once a peer's vector passed the check.
    private let agentToken: String

    /// One element after each piece of work of this actor that committed local changes —
    /// a method of the API, the repeating-task maker, an admission —, whatever its name says:
    /// the agent tells the sessions and the events at once (the store's ``ReplicaStore/localCommits``
    /// is the one invariant; a method that wrote while named as a read was never sent).
    nonisolated let localWrites: AsyncStream<Void>
    private let localWritesContinuation: AsyncStream<Void>.Continuation
    private var reportedCommits: UInt64 = 0

    /// Tells of local commits made since the last report (a comparison when there are none).
    private func reportLocalWrites() {
        let commits = household.store.localCommits
        guard commits != reportedCommits else { return }
        reportedCommits = commits
        localWritesContinuation.yield()
    }

    init(home: HouseholdHome, maxClockAheadMilliseconds: Int64, agentToken: String) throws {
        let household = try Household.open(home, maxClockAheadMilliseconds: maxClockAheadMilliseconds)
        // What a former release kept of a later one's that this release knows becomes live
        // (PulseStore/KeptChanges.swift): merged now, before any session or page reads.
        try household.store.adoptKnownKeptChanges()
        (localWrites, localWritesContinuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        reportedCommits = household.store.localCommits // a migration at opening: sent by every session's first vector
        self.agentToken = agentToken
        self.household = household
        householdID = household.householdID
        replicaID = household.store.replicaID
        machineID = household.identity.machineID
        databasePath = household.home.databasePath
        file = household.store.file
        published = Mutex(try household.store.publishedSeq())
    }

    // MARK: A database that went back in time (PulseStore/Rewind.swift)

    /// Before a BATCH carrying this replica's changes up to `seq` is sent: records that they
    /// may have left this machine (a no-op when already recorded).
    /// False when `replica` is no longer this database's (it went back in time meanwhile):
    /// nothing is marked, and the batch must not leave.
    func markPublished(upTo seq: UInt64, of replica: ReplicaID) throws -> Bool {
        guard replica == replicaID else { return false }
        guard seq > published.withLock({ $0 }) else { return true }
        try household.store.markPublished(upTo: seq)
        published.withLock { $0 = max($0, seq) }
        return true
    }

    /// After this agent's own write: with the check passed, its changes are published as they
    /// are made (the mark rose in the write's own transaction).
    private func notePublishedWrites() throws {
        guard household.store.publishesWrites else { return }
        let mark = try household.store.publishedSeq()
        published.withLock { $0 = max($0, mark) }
    }

    /// A peer's VECTOR arrived. When it holds more of this replica than this machine ever
    /// sent, this database went back in time: it continues as a new replica (once, even when
    /// several sessions see it) and the answer says what happened. Otherwise the check passed,
    /// and from now on this agent's own writes mark themselves published as they commit.
    func checkNotBehindItself(replica: ReplicaID, peerVector: VersionVector, peer: String) throws -> WentBackInTime? {
        guard replica == replicaID else { return nil } // a new replica already: the session ends anyway
        let mark = try household.store.publishedSeq()
        let held = peerVector[replica]
        guard held > mark else {
            if !household.store.publishesWrites { try household.startPublishingWrites(token: agentToken) }
            return nil
        }
        let result = try household.continueAsNewReplica()
        // Not reported as a local write: every session starts again under the new id and
        // sends it, and the events must first learn where the new numbering starts.
        reportedCommits = household.store.localCommits
        replicaID = result.current
        published.withLock { $0 = 0 }
        try household.stopPublishingWrites()
        let record = WentBackInTime(
            at: ReplicaStore.systemClock(), peer: peer, published: mark, peerHeld: held,
            reissued: result.reissued, former: result.former, current: result.current,
            counter: try household.store.versionVector()[result.current])
        try household.store.setMeta("went_back_in_time", .text(record.stored))
        return record
    }

    // MARK: Histories that forked (PulseStore/Histories.swift, PeerSession+Histories.swift)

    func historyHeads() throws -> HistoryHeads { try household.store.historyHeads() }

    func historyStamps(of origin: ReplicaID, upTo: UInt64) throws -> [UInt64] {
        try household.store.historyStamps(of: origin, upTo: upTo)
    }

    /// The peer's VECTOR beside this database's histories (``HistoryRules``): forks to compare
    /// are named; when there are none, the peer's seals are carried out here at once.
    func checkHistories(_ theirs: HistoryHeads, peer: String) throws -> HistoryCheck {
        let store = household.store
        let mine = try store.historyHeads()
        var check = HistoryCheck()
        var seals: [(ReplicaID, HistoryRules.Verdict)] = []
        for (origin, head) in theirs.entries.sorted(by: { $0.key < $1.key }) {
            let own = mine[origin]
            let atTheirs = head.seq > 0 && head.seq <= own.seq && head.check != 0 ? try store.stamp(of: origin, head.seq) : 0
            switch HistoryRules.verdict(mine: own, theirs: head, mineAtTheirs: atTheirs) {
            case .same: break
            case let .forked(upTo): check.forked.append((origin, upTo))
            case let verdict: seals.append((origin, verdict))
            }
        }
        guard check.forked.isEmpty else { return check }
        for (origin, verdict) in seals {
            switch verdict {
            case let .sealBeyond(seal):
                check = check.merging(try heal(origin, forkAt: seal + 1, peer: peer, because: "its history ends at #\(seal) on \(peer)"))
            case let .adoptSeal(seal):
                let fresh = try household.adoptSeal(of: origin, at: seal)
                if let fresh { check.continuesAs = try continued(as: fresh) }
            default: break
            }
        }
        return check
    }

    /// Heals a fork of `origin` found at `forkAt` with a peer (the stamps compared).
    func healFork(of origin: ReplicaID, forkAt: UInt64, peer: String) throws -> HistoryCheck {
        try heal(origin, forkAt: forkAt, peer: peer, because: "\(peer) holds another history from #\(forkAt)")
    }

    private func heal(_ origin: ReplicaID, forkAt: UInt64, peer: String, because: String) throws -> HistoryCheck {
        let store = household.store
        if let seal = try store.seals()[origin], seal < forkAt { return HistoryCheck() } // healed meanwhile (another session)
        let branch = HistoryRules.branch(of: origin, forkAt: forkAt, hlc: try store.stamp(of: origin, forkAt))
        let healed = try household.healFork(of: origin, from: forkAt, into: branch)
        var check = HistoryCheck()
        check.healed.append(
            "replica \(origin) forked (\(because)): its \(healed.moved) changes here from #\(forkAt) travel on as replica \(branch)")
        if let fresh = healed.continuesAs { check.continuesAs = try continued(as: fresh) }
        return check
    }

    /// This database's own replica was sealed: the agent goes on under `fresh`.
    private func continued(as fresh: ReplicaID) throws -> (replica: ReplicaID, counter: UInt64) {
        reportedCommits = household.store.localCommits
        replicaID = fresh
        published.withLock { $0 = 0 }
        try household.stopPublishingWrites()
        return (fresh, try household.store.versionVector()[fresh])
    }

    private var syncedOnce: Bool?

    /// A peer's catch-up ended here (its CAUGHT_UP): this database holds the household's data.
    func noteCaughtUp() throws {
        defer { reportLocalWrites() }
        // Who uses this computer, said when joining, once the members are here. A refusal
        // (a name taken meanwhile…) never ends the session: the next catch-up tries again,
        // and `whoami --set` remains.
        _ = try? household.claimWantedMember()
        if syncedOnce == true { return }
        try household.noteSyncedOnce()
        syncedOnce = true
    }

    /// The last time this database was found to have gone back in time, if it was.
    func lastWentBackInTime() throws -> WentBackInTime? {
        try household.store.meta("went_back_in_time")?.textValue.flatMap(WentBackInTime.init(stored:))
    }

    func identity() -> MachineIdentity { household.identity }

    func membershipKey() throws -> SymmetricKey { try household.membershipKey() }

    func versionVector() throws -> VersionVector { try household.store.versionVector() }

    /// A household method of the local API (the same rules as the CLI), for `caller`. A method
    /// declared as only reading is not followed by the look for writes to push.
    func call(_ method: String, _ params: [String: JSONValue], as caller: APICaller) throws -> JSONValue {
        guard HouseholdAPI.registry[method]?.writes != false else { return try HouseholdAPI.call(method, params, on: household, as: caller) }
        defer {
            try? notePublishedWrites()
            reportLocalWrites()
        }
        return try HouseholdAPI.call(method, params, on: household, as: caller)
    }

    /// A rule of the household called in process (``LocalAPI/read(_:)``, ``LocalAPI/write(_:)``):
    /// after one that writes, its writes are looked for and pushed as after a method's.
    func perform<T>(writes: Bool, _ body: (Household) throws -> T) throws -> T {
        guard writes else { return try body(household) }
        defer {
            try? notePublishedWrites()
            reportLocalWrites()
        }
        return try body(household)
    }

    func generateRecurringTasks() throws -> Int {
        defer { reportLocalWrites() }
        return try household.generateRecurringTasks()
    }

    func apply(_ batch: DeltaBatch, trace: (@Sendable (TraceHop) -> Void)? = nil) throws -> ApplyOutcome {
        trace?(.applyStarted)
        defer { trace?(.committed) }
        return try household.store.apply(batch)
    }

    func releaseHeldChanges() throws -> ApplyOutcome? { try household.store.releaseHeldChanges() }

    func heldChanges() throws -> (count: Int, aheadMilliseconds: Int64) { try household.store.heldChanges() }
    func millisecondsUntilHeldDue() throws -> Int64? { try household.store.millisecondsUntilHeldDue() }

    /// A reader of deltas on a connection of its own (one per session's sender).
    nonisolated func openReader() throws -> DeltaReader {
        try DeltaReader(path: databasePath)
    }

    func staticPeers() throws -> [PeerAddress] {
        guard case let .text(list)? = try household.store.meta("static_peers") else { return [] }
        return list.split(separator: "\n").compactMap { PeerAddress(String($0)) }
    }

    /// Adds peers to the persisted list (the household config of this machine).
    func rememberStaticPeers(_ peers: [PeerAddress]) throws {
        var all = try staticPeers()
        for peer in peers where !all.contains(peer) { all.append(peer) }
        try household.store.setMeta("static_peers", .text(all.map(\.description).joined(separator: "\n")))
    }

    func summary() throws -> (household: String, member: String?) {
        let name = try household.store.value(.household, "profile", "name")?.textValue ?? "(not yet synced)"
        let member = try household.memberID.flatMap { try household.store.value(.member, $0, "name")?.textValue }
        return (name, member)
    }

    /// What the household's data says of `machine` (hex id), for the handshake.
    func standing(of machine: String) throws -> SessionStateMachine.PeerStanding {
        try Self.standing(of: machine, in: household.store)
    }

    /// The same, read by a session's sender on its own connection (no wait for this actor).
    static func standing(of machine: String, in reader: some StoreReading) throws -> SessionStateMachine.PeerStanding {
        switch try Household.trust(of: machine, in: reader) {
        case .member: .member
        case .removed: .removed
        case .unknown: .unknown
        }
    }

    /// The household's machines (for `devices` and to recognise advertisements).
    func machines() throws -> [MachineRecord] { try household.machines() }

    /// The machines that may sync (recognised in advertisements): members, and the machine
    /// that admitted this one until the household's list has arrived.
    func trustedMachines() throws -> [String] {
        var ids = try household.machines().filter { !$0.isRemoved && !$0.isThisMachine }.map(\.id)
        if let introducer = try household.store.meta(Household.introducedByKey)?.textValue, !ids.contains(introducer),
            try household.trust(of: introducer) == .member
        {
            ids.append(introducer)
        }
        return ids
    }

    func discoveryKeys() throws -> [SymmetricKey] { try household.discoveryKeys() }

    /// Admits a machine that proved the pairing code, durably, and returns what it needs.
    func admitPaired(machine: String, name: String, memberID: String?) throws -> PeerMessage.PairWelcome {
        try household.admit(machine: machine, name: name, memberID: memberID)
        reportLocalWrites()
        let summary = try summary()
        let names = try household.machines()
        return PeerMessage.PairWelcome(
            householdID: household.householdID, householdName: summary.household,
            secret: try household.membershipKey().withUnsafeBytes { Array($0) },
            discoveryKey: try household.discoveryKeys()[0].withUnsafeBytes { Array($0) },
            memberID: memberID, inviterName: names.first(where: \.isThisMachine)?.name ?? "a machine of the household")
    }

    /// The member id called `name` (for an invitation); nil for no name: an invitation then
    /// suggests nobody (the joining computer says who uses it).
    func memberID(named name: String?) throws -> String? {
        guard let name else { return nil }
        return try household.memberID(named: name)
    }

    /// The label a peer's replica gave itself (its host name), once its record arrived.
    func label(of replica: ReplicaID) throws -> String? {
        try household.store.value(.replica, replica.description, "label")?.textValue
    }

    // MARK: Events and notifications

    func replicaLabels() throws -> [ReplicaID: String] { try household.replicaLabels() }

    func filledIn(_ events: [HouseholdEvent], local: Bool) throws -> [HouseholdEvent] {
        try household.filledIn(events, local: local)
    }

    /// This replica's changes numbered after `seq` (what was committed here since), and the
    /// number they go up to.
    func localChanges(after seq: UInt64) throws -> (changes: [Change], upTo: UInt64) {
        try household.store.ownChanges(after: seq)
    }

    /// This machine's member and its notification settings (read at each use: `pulse-peer
    /// notifications` changes them while the agent runs).
    /// Who this machine's person is, what they want to hear of, and since when this computer
    /// is in the household: what the policy needs to pick the events (``notificationWords``
    /// gives the words, once something is to be shown).
    func notificationContext() throws -> (me: String?, settings: NotificationSettings, joined: Int64?) {
        (try household.currentMemberID(), try household.notificationSettings(), try household.joinedAt())
    }

    /// The words notifications are shown in: the language chosen here or by this computer's
    /// member, else `language` (the agent's), else English; a broken message file of the home
    /// gives English and the problem to tell. Read only when something is to be shown: a
    /// catalogue is decoded at its first use.
    func notificationWords(language: String?) throws -> (words: MessageCatalogue, problem: HouseholdError?) {
        let chosen = try household.languageChoice().chosen ?? language ?? "en"
        do { return (try MessageCatalogue.load(chosen, home: household.home), nil) } catch { return (.english, error) }
    }

    /// The ledger entries the rule declines now (id → title), to tell of newly declined ones.
    func declinedLedgerEntries() throws -> [String: (title: String, titleKey: String?)] {
        Dictionary(try household.declinedLedgerEntries().map { ($0.id, ($0.title, $0.titleKey)) }, uniquingKeysWith: { first, _ in first })
    }

    /// A machine's name, for peer events.
    func machineName(_ machine: String) throws -> String {
        try household.machines().first { $0.id == machine }?.name ?? String(machine.prefix(12))
    }
}

/// What was found when this database went back in time, and what it did (kept in `meta`,
/// shown by `status`).
struct WentBackInTime: Sendable, Equatable {
    /// When it was found (Unix milliseconds).
    let at: Int64
    /// The peer whose data showed it.
    let peer: String
    /// This replica's changes this database had sent, and how many the peer held.
    let published: UInt64
    let peerHeld: UInt64
    /// Changes issued again under the new replica id.
    let reissued: Int
    let former: ReplicaID
    let current: ReplicaID
    /// The new replica's counter right after (its re-issued changes and its replica row).
    let counter: UInt64

    var stored: String {
        [
            String(at), String(published), String(peerHeld), String(reissued), former.description, current.description,
            String(counter), peer,
        ].joined(separator: "\n")
    }

    init(
        at: Int64, peer: String, published: UInt64, peerHeld: UInt64, reissued: Int, former: ReplicaID, current: ReplicaID,
        counter: UInt64
    ) {
        (self.at, self.peer, self.published, self.peerHeld, self.reissued) = (at, peer, published, peerHeld, reissued)
        (self.former, self.current, self.counter) = (former, current, counter)
    }

    init?(stored: String) {
        let parts = stored.split(separator: "\n", maxSplits: 7, omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 8, let at = Int64(parts[0]), let published = UInt64(parts[1]), let held = UInt64(parts[2]),
            let reissued = Int(parts[3]), let former = ReplicaID(hex: parts[4]), let current = ReplicaID(hex: parts[5]),
            let counter = UInt64(parts[6])
        else { return nil }
        self.init(
            at: at, peer: parts[7], published: published, peerHeld: held, reissued: reissued, former: former,
            current: current, counter: counter)
    }

    /// As data for `status`, each reader's words (`ago`: how long ago, in words).
    func notice(ago: String) -> AgentStatus.Notice {
        AgentStatus.Notice(
            "status.went_back",
            [
                "published": .integer(Int64(clamping: published)), "peer": .string(peer), "held": .integer(Int64(clamping: peerHeld)),
                "reissued": JSONValue(reissued), "ago": .string(ago),
            ])
    }

    /// In words, for the log.
    var sentence: String {
        "this computer's household data went back in time (restored from a backup or an older copy?): "
            + "it had sent its own changes up to #\(published), but \(peer) holds #\(peerHeld) of them. "
            + "Recovered by itself: it continues under a new replica id, its \(reissued) change\(reissued == 1 ? "" : "s") "
            + "issued again so that every computer gets them, and what it had lost is taken back from the other computers"
    }
}
