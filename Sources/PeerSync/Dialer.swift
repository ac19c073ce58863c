import FoundationEssentials
import Logging
import PulseDiscovery
import PulseModel
import PulseProtocol
import PulseTransport

/// Where each peer can be reached, whoever told: the static peers (`--peer`, remembered)
/// and mDNS. Address providers only record what they know here; one dial loop per entry
/// (``PeerAgent/keepSession(_:_:_:)``) reads the entry's current addresses before every
/// attempt and stops when the entry is withdrawn. (Syncthing resolves device addresses
/// in one place the same way.)
actor PeerDirectory {
    enum Source: Sendable, Equatable {
        /// Given with `--peer` (or remembered): dialed for as long as the agent runs.
        case configured
        /// Advertised over mDNS with this household's tag: dialed while advertised.
        case discovered
    }

    struct Entry: Sendable {
        let source: Source
        /// The machine, when the source names it (mDNS); a static address learns its
        /// machine from the session (the engine maps addresses to machines).
        let machine: String?
        /// Where to connect, best first.
        var candidates: [PeerAddress]

        /// Whether the dial loop lets the other machine dial first (for 2 s): two machines
        /// that found each other over mDNS, this one with the larger id, and only once its
        /// own advertisement is established — before that, no machine can have found it.
        func letsTheOtherDialFirst(localMachine: String, advertised: Bool) -> Bool {
            guard source == .discovered, let machine, advertised else { return false }
            return localMachine > machine
        }

        /// How a session dialed through this entry was found.
        func origin(_ address: PeerAddress) -> PeerOrigin {
            switch source {
            case .configured: .configured(address)
            case .discovered: .discovered(address.description)
            }
        }
    }

    private var entries: [String: Entry] = [:]
    private var machineByService: [String: String] = [:]
    /// Per entry: the dial loop waiting out its backoff, resumed when the entry's
    /// addresses change or it is withdrawn (``watch(_:)``).
    private var changeWaiters: [String: Waiters] = [:]
    /// Whether this machine's own advertisement is established: only then can the
    /// machines it discovers have discovered it too (``PeerAgent/keepSession(_:_:_:)``).
    private(set) var advertised = false

    func setAdvertised(_ value: Bool) { advertised = value }

    /// Records a static peer; returns its key when it is new (start a dial loop for it).
    func addStatic(_ address: PeerAddress) -> String? {
        let key = "static:\(address)"
        guard entries[key] == nil else { return nil }
        entries[key] = Entry(source: .configured, machine: nil, candidates: [address])
        return key
    }

    /// Records an advertisement of a household machine (its tag checked); returns its key
    /// when the machine is new. Candidates: loopback for a service on this host, then
    /// IPv4, then IPv6 (link-local ones with their scope).
    func discovered(machine: String, _ service: DiscoveredService) -> String? {
        let key = "mdns:\(machine)"
        let isNew = entries[key] == nil
        if let previous = machineByService[service.name], previous != machine { entries["mdns:\(previous)"] = nil }
        machineByService[service.name] = machine
        let hosts = (service.isLocal ? ["127.0.0.1"] : []) + service.addresses.filter { !(service.isLocal && $0 == "127.0.0.1") }
        let candidates = hosts.map { PeerAddress(host: $0, port: service.port) }
        // A machine that came back on another port or address (the first answer may
        // even have come from a cache that still held its last run): its dial loop
        // tries the new addresses now instead of after its backoff.
        if let previous = entries[key], previous.candidates != candidates { changeWaiters[key]?.resumeAll() }
        entries[key] = Entry(source: .discovered, machine: machine, candidates: candidates)
        return isNew ? key : nil
    }

    /// An advertisement was withdrawn: its machine's dial loop ends.
    func lost(service name: String) {
        guard let machine = machineByService.removeValue(forKey: name) else { return }
        entries["mdns:\(machine)"] = nil
        changeWaiters.removeValue(forKey: "mdns:\(machine)")?.resumeAll()
    }

    func entry(_ key: String) -> Entry? { entries[key] }

    /// The entry as it is now, and a ticket that its waiters resume once its addresses
    /// change or it is withdrawn: wait on it (``Waiters/wait(_:)``) exactly once.
    func watch(_ key: String) -> (entry: Entry, waiters: Waiters, ticket: UInt64)? {
        guard let entry = entries[key] else { return nil }
        let waiters = changeWaiters[key] ?? Waiters()
        changeWaiters[key] = waiters
        return (entry, waiters, waiters.register())
    }
}

/// Exponential backoff between dial attempts: 0.5 s doubling to 30 s, plus up to 250 ms
/// of jitter; back to 0.5 s after a session that lasted.
struct DialBackoff {
    private(set) var current: Duration = .milliseconds(500)

    mutating func next() -> Duration {
        defer { current = min(current * 2, .seconds(30)) }
        return current + .milliseconds(Int.random(in: 0...250))
    }

    mutating func reset() { current = .milliseconds(500) }
}

extension PeerAgent {
    /// The one dial loop: keeps a session with the peer of directory entry `key` until
    /// the entry is withdrawn or the task is cancelled. While a session with that machine
    /// is live (it dialed us, or another entry reached it), waits for that one to end.
    func keepSession(_ key: String, _ directory: PeerDirectory, _ context: Context) async {
        let engine = context.engine
        var backoff = DialBackoff()
        while !Task.isCancelled {
            guard let known = await directory.entry(key) else { return }
            if let machine = await engine.connectedMachine(known) {
                await engine.waitUntilDisconnected(machine)
                continue
            }
            // Two machines that found each other over mDNS: the larger id lets the other
            // dial first, so that usually one connection is made. Only when the other can
            // have found this one, though: while this machine's advertisement is still being
            // probed (a newcomer that found an established machine at once) nobody can dial
            // it, and waiting cost the newcomer 1–2 s before its first sync.
            if known.letsTheOtherDialFirst(localMachine: engine.localMachine, advertised: await directory.advertised),
                let machine = known.machine
            {
                do { try await LoopTimer.sleep(for: .seconds(2)) } catch { return }
                if await engine.isConnected(machine) { continue }
            }
            // The addresses as they are now, watched from here on (the wait below ends early
            // when they change).
            guard let (entry, waiters, ticket) = await directory.watch(key).map({ ($0.entry, $0.waiters, $0.ticket) }) else { return }
            await engine.dialing(entry)
            var failure: String? = "no address"
            for address in entry.candidates {
                do {
                    let connection = try await PeerTransport.connect(host: address.host, port: address.port, tls: context.tls)
                    let started = ContinuousClock.now
                    let reason = await context.session(connection, role: .client, origin: entry.origin(address))
                    context.logger.info("session ended", metadata: ["peer": "\(address)", "reason": "\(reason ?? "closed")"])
                    if ContinuousClock.now - started > .seconds(10) { backoff.reset() }
                    failure = nil
                    break
                } catch {
                    failure = "\(error)"
                }
            }
            if let failure {
                await engine.dialFailed(entry, error: failure)
                context.logger.debug("cannot reach peer", metadata: ["peer": "\(entry.candidates)", "error": "\(failure)"])
            }
            let delay = backoff.next()
            let changed = await withTaskGroup(of: Bool.self) { group in
                group.addTask {
                    await waiters.wait(ticket); return true
                }
                group.addTask {
                    try? await LoopTimer.sleep(for: delay); return false
                }
                defer { group.cancelAll() }
                return await group.next() ?? false
            }
            if changed { backoff.reset() }
        }
    }
}
