import Crypto
import FoundationEssentials
import Logging
import PulseDiscovery
import PulseProtocol
import PulseModel

extension PeerAgent {
    /// The mDNS address provider: publishes this agent and records the household machines
    /// it finds in `directory`, starting the dial loop of each new one, until cancelled.
    func runDiscovery(_ context: Context, port: Int, directory: PeerDirectory) async {
        let engine = context.engine
        // The service name carries the host's name only (already public on the LAN), never a
        // member's or the household's name (docs/SECURITY.md, "What the LAN learns").
        let host = ProcessInfo.processInfo.hostName.split(separator: ".").first.map(String.init) ?? "host"
        let name = String("House Pulse on \(host)".utf8.prefix(63)) ?? "House Pulse"
        let key: SymmetricKey
        do {
            key = try await context.store.discoveryKeys()[0]
        } catch {
            await engine.setDiscovery("unavailable: \(error)")
            return
        }
        let advertisement = Advertisement(
            name: name, port: port,
            txt: HouseholdTag.txtRecords(
                version: Int(PeerMessage.Hello.currentVersion), key: key, machineID: engine.localMachine, nonce: HouseholdTag.newNonce()))
        let discovery: AvahiDiscovery
        do {
            discovery = try AvahiDiscovery(advertisement: advertisement)
            try discovery.start()
        } catch {
            await engine.setDiscovery("unavailable: \(error)")
            return
        }
        var ignored = Set<String>()
        /// Advertisements not recognised yet: checked again whenever the household's data
        /// changes (a machine admitted since, or a new key, makes one recognisable).
        var unrecognized: [String: DiscoveredService] = [:]
        enum Input: Sendable { case event(DiscoveryEvent), householdChanged }
        let (inputs, input) = AsyncStream<Input>.makeStream()
        await withDiscardingTaskGroup { group in
            group.addTask {
                for await event in discovery.events { input.yield(.event(event)) }
                input.finish()
            }
            group.addTask {
                var seen = await engine.generation
                while !Task.isCancelled {
                    await engine.changed(after: seen)
                    seen = await engine.generation
                    input.yield(.householdChanged)
                }
            }
            func trust() async -> (keys: [SymmetricKey], machines: [String]) {
                ((try? await context.store.discoveryKeys()) ?? [], (try? await context.store.trustedMachines()) ?? [])
            }
            func consider(_ service: DiscoveredService, keys: [SymmetricKey], machines: [String]) async {
                // A household machine of another protocol version is dialed all the same: its
                // HELLO or ERROR 2, over TLS with its own key, says which versions it speaks, and
                // both statuses then say which computer to update (an advertisement's `v` is
                // not signed: a spoofer could change it, so it decides nothing).
                guard service.txt["v"].flatMap({ UInt16($0) }) != nil,
                    let machine = HouseholdTag.machine(publishing: service.txt, keys: keys, machines: machines)
                else {
                    unrecognized[service.name] = service
                    if ignored.insert(service.name).inserted {
                        context.logger.info(
                            "ignoring a service of another household (or a spoofed one)",
                            metadata: ["service": "\(service.name)"])
                    }
                    return
                }
                unrecognized[service.name] = nil
                await engine.discovered(machine: machine, addresses: service.addresses.map { "\($0):\(service.port)" })
                if let key = await directory.discovered(machine: machine, service) {
                    context.logger.info("found peer", metadata: ["service": "\(service.name)", "addresses": "\(service.addresses)"])
                    group.addTask { await keepSession(key, directory, context) }
                }
            }
            for await next in inputs {
                switch next {
                case let .event(.availability(available, detail)):
                    let state = (available ? "mDNS: " : "mDNS unavailable: ") + detail
                    await engine.setDiscovery(state)
                    context.logger.info("discovery", metadata: ["state": "\(state)"])
                    // Not (or no longer) published: publishing again starts with probes.
                    await directory.setAdvertised(false)
                case let .event(.published(name)):
                    let state = "mDNS: published as \"\(name)\""
                    await engine.setDiscovery(state)
                    context.logger.info("discovery", metadata: ["state": "\(state)"])
                    await directory.setAdvertised(true)
                case let .event(.found(service)):
                    let (keys, machines) = await trust()
                    await consider(service, keys: keys, machines: machines)
                case let .event(.lost(name)):
                    unrecognized[name] = nil
                    await directory.lost(service: name)
                case .householdChanged:
                    // One read of the household's trust per change, and none when nothing waits.
                    guard !unrecognized.isEmpty else { continue }
                    let (keys, machines) = await trust()
                    for service in unrecognized.values { await consider(service, keys: keys, machines: machines) }
                }
            }
            group.cancelAll()
        }
        discovery.stop()
    }
}
