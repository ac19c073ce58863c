import FoundationEssentials
import Logging
import PulseModel
import PulseStore
import PulseIdentity
import PulseHousehold
import PulseProtocol
import PulseTransport
import PulseDiscovery

/// Household machines found by mDNS (advertisements whose tag checked out), by machine
/// id. The discovery task writes it; each discovered machine's dialer reads its current
/// addresses from it before every attempt, and stops when the machine is gone.
actor DiscoveredPeers {
    struct Peer: Sendable {
        var serviceName: String
        var addresses: [String]
        var port: Int
        var isLocal: Bool

        /// Where to connect, best first: loopback for a service on this host, then IPv4,
        /// then IPv6 (link-local ones with their scope).
        var candidates: [String] {
            (isLocal ? ["127.0.0.1"] : []) + addresses.filter { !(isLocal && $0 == "127.0.0.1") }
        }
    }

    private var peers: [String: Peer] = [:]
    private var machineByName: [String: String] = [:]

    /// Records a service; true when the machine is new (start dialing it).
    func update(machine: String, _ service: DiscoveredService) -> Bool {
        let isNew = peers[machine] == nil
        if let previous = machineByName[service.name], previous != machine { peers[previous] = nil }
        machineByName[service.name] = machine
        peers[machine] = Peer(serviceName: service.name, addresses: service.addresses, port: service.port, isLocal: service.isLocal)
        return isNew
    }

    func remove(name: String) {
        guard let machine = machineByName.removeValue(forKey: name) else { return }
        if peers[machine]?.serviceName == name { peers[machine] = nil }
    }

    func peer(_ machine: String) -> Peer? { peers[machine] }
}

extension PeerAgent {
    /// Publishes this agent and connects to the household machines it finds, until cancelled.
    func runDiscovery(_ context: Context, port: Int) async {
        let engine = context.engine
        let summary = try? await context.store.summary()
        let host = ProcessInfo.processInfo.hostName.split(separator: ".").first.map(String.init) ?? "host"
        let name = String("\(summary?.member ?? "House Pulse") on \(host)".utf8.prefix(63)) ?? "House Pulse"
        let advertisement = Advertisement(name: name, port: port, txt: HouseholdTag.txtRecords(
            version: Int(PeerMessage.Hello.currentVersion), secret: context.secret, machineID: engine.localMachine, nonce: HouseholdTag.newNonce()))
        let discovery: AvahiDiscovery
        do {
            discovery = try AvahiDiscovery(advertisement: advertisement)
            try discovery.start()
        } catch {
            await engine.setDiscovery("unavailable: \(error)")
            return
        }
        let table = DiscoveredPeers()
        var ignored = Set<String>()
        await withDiscardingTaskGroup { group in
            for await event in discovery.events {
                switch event {
                case let .availability(available, detail):
                    let state = (available ? "mDNS: " : "mDNS unavailable: ") + detail
                    await engine.setDiscovery(state)
                    context.logger.info("discovery", metadata: ["state": "\(state)"])
                case let .found(service):
                    guard let machine = service.txt["id"], machine != engine.localMachine else { continue }
                    guard service.txt["v"] == String(PeerMessage.Hello.currentVersion),
                          HouseholdTag.matches(service.txt, secret: context.secret) else {
                        if ignored.insert(service.name).inserted {
                            context.logger.info("ignoring a service of another household (or a spoofed one)",
                                                metadata: ["service": "\(service.name)"])
                        }
                        continue
                    }
                    await engine.discovered(machine: machine, addresses: service.addresses.map { "\($0):\(service.port)" })
                    if await table.update(machine: machine, service) {
                        context.logger.info("found peer", metadata: ["service": "\(service.name)", "addresses": "\(service.addresses)"])
                        group.addTask { await dialDiscovered(machine, table: table, context) }
                    }
                case let .lost(name):
                    await table.remove(name: name)
                }
            }
            group.cancelAll()
        }
        discovery.stop()
    }

    /// Keeps a session with a discovered machine while it is advertised. When both
    /// machines see each other, the one with the larger id lets the other dial first.
    private func dialDiscovered(_ machine: String, table: DiscoveredPeers, _ context: Context) async {
        var backoff: Duration = .milliseconds(500)
        while !Task.isCancelled {
            guard let peer = await table.peer(machine) else { return } // withdrawn: stop dialing
            if await context.engine.isConnected(machine) {
                await context.engine.waitUntilDisconnected(machine)
                continue
            }
            if context.engine.localMachine > machine {
                do { try await Task.sleep(for: .seconds(2)) } catch { return }
                if await context.engine.isConnected(machine) { continue }
            }
            var lastError = "no address"
            for host in peer.candidates {
                do {
                    let connection = try await PeerTransport.connect(host: host, port: peer.port, tls: context.tls)
                    let started = ContinuousClock.now
                    let reason = await context.session(connection, role: .client, origin: .discovered("\(host):\(peer.port)"))
                    context.logger.info("session ended", metadata: ["peer": "\(host):\(peer.port)", "reason": "\(reason ?? "closed")"])
                    if ContinuousClock.now - started > .seconds(10) { backoff = .milliseconds(500) }
                    lastError = ""
                    break
                } catch {
                    lastError = "\(error)"
                }
            }
            if !lastError.isEmpty { await context.engine.discoveredUnreachable(machine: machine, error: lastError) }
            do { try await Task.sleep(for: backoff + .milliseconds(Int.random(in: 0...250))) } catch { return }
            backoff = min(backoff * 2, .seconds(30))
        }
    }
}
