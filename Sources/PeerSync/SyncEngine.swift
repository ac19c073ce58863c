import FoundationEssentials
import PulseTransport
import PulseProtocol
import PulseModel

/// How a peer was found.
enum PeerOrigin: Sendable, Hashable {
    case configured(PeerAddress)
    case discovered(String)
    case inbound

    var label: String {
        switch self {
        case .configured: "static"
        case .discovered: "mdns"
        case .inbound: "inbound"
        }
    }
}

/// The peer table and the fan-out of "the store changed" to every live session.
/// Sessions report what they learn; `status` reads it. Holds no connection itself.
actor SyncEngine {
    struct SessionEntry {
        let machine: String
        let role: MembershipProof.Role
        /// Closes the session's connection, sending `farewell` (an ERROR) first when given.
        let close: @Sendable (_ farewell: PeerMessage?) -> Void
        let signal: AsyncStream<Void>.Continuation
    }

    struct PeerRecord {
        var machine: String?
        var replica: ReplicaID?
        var addresses: [String] = []
        var foundBy: Set<String> = []
        var state: AgentStatus.Peer.State = .connecting
        var lastSeen: Int64?
        /// The newest version vector the peer told (VECTOR, ACK, CAUGHT_UP, coverage).
        var vector: VersionVector?
        var peerCaughtUp = false
        var weCaughtUp = false
        var lastError: String?
        var session: Int?
        var bytes: ByteCounts?
        /// The peer's wall clock minus ours at the last HELLO, in milliseconds.
        var clockOffset: Int64?
        /// The release its last HELLO named, and the protocol version of that session.
        var release: String?
        var protocolVersion: UInt16?
        /// A batch refused either way, in words, until a whole catch-up both ways succeeds.
        var problem: String?
        /// The same as a message, when it has one (no protocol version in common).
        var notice: AgentStatus.Notice?
    }

    let localMachine: String
    private var peers: [String: PeerRecord] = [:] // "machine:<id>" or "static:<host:port>"
    private var addressToMachine: [PeerAddress: String] = [:]
    private var sessions: [Int: SessionEntry] = [:]
    private var nextSession = 0
    /// Dialers waiting for the session with a machine to end.
    private var sessionEndWaiters: [String: Waiters] = [:]
    /// Bumped whenever the peer table or the store changes; `wait` callers watch it.
    private(set) var generation: UInt64 = 0
    private let generationWaiters = Waiters()

    /// The release this agent runs (`0.10.0`), named to a peer too old to sync with it.
    let release: String?

    init(localMachine: String, release: String? = nil) {
        self.localMachine = localMachine
        self.release = release
    }

    /// Changes from peers applied since the agent started, and `wait` requests pending.
    private(set) var appliedChanges: UInt64 = 0
    private(set) var pendingWaits = 0

    /// Why the store refuses writes right now (a full disk…), for `status`.
    /// Why the last automatic backup failed (nil: it did not).
    private(set) var backupProblem: String?
    func setBackupProblem(_ problem: String?) { backupProblem = problem }
    private(set) var storeProblem: String?

    func setStoreProblem(_ problem: String?) {
        storeProblem = problem
        bump()
    }

    func applied(_ count: Int) {
        appliedChanges += UInt64(count)
        bump()
    }

    func adjustPendingWaits(_ delta: Int) {
        pendingWaits += delta
        bump()
    }

    /// What discovery is doing, for `status`.
    private(set) var discoveryState = "off"

    func setDiscovery(_ state: String) {
        discoveryState = state
        bump()
    }

    /// mDNS found a household machine at `addresses`.
    func discovered(machine: String, addresses: [String]) {
        let key = "machine:\(machine)"
        var record = peers[key] ?? PeerRecord()
        record.machine = machine
        record.foundBy.insert("mdns")
        record.addresses = addresses + record.addresses.filter { !addresses.contains($0) }
        if record.session == nil && record.state != .disconnected { record.state = .connecting }
        peers[key] = record
        bump()
    }

    func discoveredUnreachable(machine: String, error: String) {
        let key = "machine:\(machine)"
        guard var record = peers[key], record.session == nil else { return }
        record.state = .disconnected
        record.lastError = error
        peers[key] = record
        bump()
    }

    func isConnected(_ machine: String) -> Bool { peers["machine:\(machine)"]?.session != nil }

    func newSessionID() -> Int {
        nextSession += 1
        return nextSession
    }

    // MARK: Dialing

    /// The machine a directory entry leads to, when a session with it is live.
    func connectedMachine(_ entry: PeerDirectory.Entry) -> String? {
        if let machine = entry.machine { return isConnected(machine) ? machine : nil }
        return entry.candidates.lazy.compactMap { self.liveMachine(at: $0) }.first
    }

    /// A dial loop is about to try `entry`'s addresses.
    func dialing(_ entry: PeerDirectory.Entry) {
        // A discovered machine's record exists already (mDNS made it).
        guard entry.source == .configured else { return }
        for address in entry.candidates { dialing(address) }
    }

    /// None of `entry`'s addresses answered.
    func dialFailed(_ entry: PeerDirectory.Entry, error: String) {
        if let machine = entry.machine {
            discoveredUnreachable(machine: machine, error: error)
        } else {
            for address in entry.candidates { dialFailed(address, error: error) }
        }
    }

    func dialing(_ address: PeerAddress) {
        let key = recordKey(for: address)
        var record = peers[key] ?? PeerRecord()
        if record.session == nil { record.state = .connecting }
        record.foundBy.insert("static")
        if !record.addresses.contains(address.description) { record.addresses.append(address.description) }
        peers[key] = record
    }

    func dialFailed(_ address: PeerAddress, error: String) {
        let key = recordKey(for: address)
        guard var record = peers[key], record.session == nil else { return }
        record.state = .disconnected
        record.lastError = error
        peers[key] = record
        bump()
    }

    private func recordKey(for address: PeerAddress) -> String {
        if let machine = addressToMachine[address] { return "machine:\(machine)" }
        return "static:\(address)"
    }

    /// The machine last reached at `address`, when a session with it is live.
    func liveMachine(at address: PeerAddress) -> String? {
        guard let machine = addressToMachine[address], peers["machine:\(machine)"]?.session != nil else { return nil }
        return machine
    }

    /// Returns when no session with `machine` is live, or when the task is cancelled.
    func waitUntilDisconnected(_ machine: String) async {
        while peers["machine:\(machine)"]?.session != nil, !Task.isCancelled {
            let waiters = sessionEndWaiters[machine] ?? Waiters()
            sessionEndWaiters[machine] = waiters
            await waiters.wait(waiters.register())
        }
    }

    // MARK: Sessions

    /// `replacedOld`: an earlier session with the same machine was closed for this one.
    enum Registration: Sendable { case accepted(replacedOld: Bool), duplicate }

    /// A session proved membership. One session per machine pair: when two exist because
    /// both sides dialed, both machines keep the one whose client has the smaller machine
    /// id; when the same side dialed again, its old connection is dead on its side (half-open
    /// here, waiting for the silence timeout), so the new session replaces it.
    func register(
        _ id: Int, machine: String, replica: ReplicaID, role: MembershipProof.Role, origin: PeerOrigin,
        remote: String, bytes: ByteCounts, close: @escaping @Sendable (_ farewell: PeerMessage?) -> Void,
        signal: AsyncStream<Void>.Continuation
    ) -> Registration {
        let key = "machine:\(machine)"
        var record = peers[key] ?? PeerRecord()
        var replacedOld = false
        if let existing = record.session, let entry = sessions[existing] {
            if entry.role != role {
                let preferred: MembershipProof.Role = localMachine < machine ? .client : .server
                if entry.role == preferred { return .duplicate }
            }
            entry.close(.error(.duplicateSession, "replaced by a newer session from the same machine"))
            sessions[existing] = nil
            replacedOld = true
        }
        takeStaticRecord(of: origin, for: machine, into: &record)
        record.machine = machine
        record.replica = replica
        record.foundBy.insert(origin.label)
        // A dialed address is where the peer listens; an inbound one is an ephemeral port.
        if role == .client && !record.addresses.contains(remote) { record.addresses.append(remote) }
        record.state = .connected
        record.session = id
        record.bytes = bytes
        record.peerCaughtUp = false
        record.weCaughtUp = false
        // What the peer holds is what this session's VECTOR says: a vector can go down between
        // sessions (a history that forked was healed: PROTOCOL §5).
        record.vector = nil
        record.lastError = nil
        record.lastSeen = WallClock.now()
        if record.notice != nil { (record.problem, record.notice) = (nil, nil) } // versions in common now
        peers[key] = record
        sessions[id] = SessionEntry(machine: machine, role: role, close: close, signal: signal)
        bump()
        return .accepted(replacedOld: replacedOld)
    }

    /// A configured address now known to lead to `machine`: its `static:` record (how it was
    /// found, its addresses) becomes part of the machine's.
    private func takeStaticRecord(of origin: PeerOrigin, for machine: String, into record: inout PeerRecord) {
        guard case let .configured(address) = origin else { return }
        addressToMachine[address] = machine
        if let old = peers.removeValue(forKey: "static:\(address)") {
            record.foundBy.formUnion(old.foundBy)
            for a in old.addresses where !record.addresses.contains(a) { record.addresses.append(a) }
        }
    }

    func unregister(_ id: Int, error: String?) {
        guard let entry = sessions.removeValue(forKey: id) else { return }
        entry.signal.finish()
        let key = "machine:\(entry.machine)"
        if var record = peers[key], record.session == id {
            record.session = nil
            record.state = .disconnected
            record.lastError = error
            peers[key] = record
            sessionEndWaiters.removeValue(forKey: entry.machine)?.resumeAll()
        }
        bump()
    }

    private func update(_ id: Int, _ body: (inout PeerRecord) -> Void) {
        guard let machine = sessions[id]?.machine, var record = peers["machine:\(machine)"], record.session == id else { return }
        body(&record)
        record.lastSeen = WallClock.now()
        peers["machine:\(machine)"] = record
        bump()
    }

    private func bump() {
        generation &+= 1
        generationWaiters.resumeAll()
    }

    /// Returns once something changed after `seen` (a value of `generation`), or when the
    /// task is cancelled.
    func changed(after seen: UInt64) async {
        guard generation == seen else { return }
        await generationWaiters.wait(generationWaiters.register())
    }

    func touch(_ id: Int) { update(id) { _ in } }

    func peerSoftware(_ id: Int, release: String?, version: UInt16) {
        update(id) { ($0.release, $0.protocolVersion) = (release, version) }
    }

    func peerVector(_ id: Int, _ vector: VersionVector) {
        update(id) { $0.vector = ($0.vector ?? VersionVector()).merging(vector) }
    }

    func peerCaughtUp(_ id: Int, _ vector: VersionVector) {
        update(id) {
            $0.vector = ($0.vector ?? VersionVector()).merging(vector)
            $0.peerCaughtUp = true
            if $0.weCaughtUp { ($0.problem, $0.notice) = (nil, nil) }
        }
    }

    func weCaughtUp(_ id: Int) {
        update(id) {
            $0.weCaughtUp = true
            if $0.peerCaughtUp { ($0.problem, $0.notice) = (nil, nil) }
        }
    }

    /// A batch was refused, by this machine (`byPeer` false) or by the peer: the peer is not
    /// in sync, whatever the vectors say, until a later catch-up both ways succeeds.
    func rejected(machine: String, remote: String, problem: String, byPeer: Bool) {
        refused(machine: machine, remote: remote, reason: problem, byPeer: byPeer)
        if var record = peers["machine:\(machine)"] {
            record.problem = problem
            record.notice = nil
            peers["machine:\(machine)"] = record
        }
        bump()
    }

    /// A machine of the household speaks no protocol version this agent speaks (`theirs`: its
    /// versions, from its HELLO, its ERROR 2 or its advertisement): no session can start, and
    /// both statuses say which computer to update until one does.
    func protocolMismatch(machine: String, remote: String, origin: PeerOrigin, name: String, theirs: ClosedRange<UInt16>, byPeer: Bool) {
        let notice = AgentStatus.Notice.protocolMismatch(
            peer: name, ours: PeerMessage.Hello.supportedVersions, theirs: theirs, release: release)
        let text = notice.text()
        refused(machine: machine, remote: remote, reason: text, byPeer: byPeer)
        let key = "machine:\(machine)"
        var record = peers[key] ?? PeerRecord()
        takeStaticRecord(of: origin, for: machine, into: &record)
        record.machine = machine
        record.foundBy.insert(origin.label)
        if origin != .inbound && !record.addresses.contains(remote) { record.addresses.append(remote) }
        if record.session == nil { record.state = .disconnected }
        record.lastError = text
        record.problem = text
        record.notice = notice
        peers[key] = record
        bump()
    }

    func peerClock(_ id: Int, offset: Int64) { update(id) { $0.clockOffset = offset } }

    /// The store changed (a local write, or a batch from session `except`): every other
    /// live session sends what its peer lacks.
    func storeChanged(except: Int? = nil) {
        for (id, entry) in sessions where id != except { entry.signal.yield() }
        bump()
    }

    /// Closes every session but `except` (which said it itself), telling each peer why (ERROR 8).
    func closeAll(_ reason: String = "shutting down", except: Int? = nil) {
        for (id, entry) in sessions where id != except { entry.close(.error(.shuttingDown, reason)) }
    }

    // MARK: Status

    func peerStatus(localVector: VersionVector, labels: [ReplicaID: String]) -> [AgentStatus.Peer] {
        peers.values.map { record in
            let lacks = record.vector.map { $0.missing(from: localVector) }
            let weLack = record.vector.map { localVector.missing(from: $0) }
            let inSync =
                record.state == .connected && record.peerCaughtUp && record.weCaughtUp && lacks == 0 && weLack == 0
                && record.problem == nil
            return AgentStatus.Peer(
                name: record.replica.flatMap { labels[$0] }, machineID: record.machine, replicaID: record.replica?.description,
                addresses: record.addresses, foundBy: record.foundBy.sorted(), state: record.state, lastSeen: record.lastSeen,
                peerLacks: lacks, weLack: weLack, inSync: inSync, lastError: record.lastError,
                sessionBytes: record.bytes?.snapshot, clockOffsetMilliseconds: record.clockOffset, release: record.release,
                protocolVersion: record.protocolVersion.map(Int.init), problem: record.problem,
                notice: record.notice)
        }
        .sorted { ($0.machineID ?? $0.addresses.first ?? "") < ($1.machineID ?? $1.addresses.first ?? "") }
    }

    func knownReplicas() -> [ReplicaID] { peers.values.compactMap(\.replica) }

    /// What needs a person's attention, for `status`.
    var warnings: [String] { [storeProblem, backupProblem].compactMap { $0 } }

    /// The last refusals either way (newest first), for `status`.
    private(set) var refusals: [AgentStatus.Refusal] = []

    /// A session ended in a refusal: `byPeer`, the peer refused this machine; otherwise this
    /// machine refused the peer.
    func refused(machine: String, remote: String, reason: String, byPeer: Bool) {
        refusals.removeAll { $0.machineID == machine && $0.byPeer == byPeer }
        refusals.insert(AgentStatus.Refusal(machineID: machine, remote: remote, reason: reason, byPeer: byPeer, at: WallClock.now()), at: 0)
        if refusals.count > 5 { refusals.removeLast(refusals.count - 5) }
        bump()
    }
}
