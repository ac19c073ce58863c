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
                    guard let version = service.txt["v"].flatMap({ UInt16($0) }), PeerMessage.Hello.supportedVersions.contains(version),
                          HouseholdTag.matches(service.txt, secret: context.secret) else {
                        if ignored.insert(service.name).inserted {
                            context.logger.info("ignoring a service of another household (or a spoofed one)",
                                                metadata: ["service": "\(service.name)"])
                        }
                        continue
                    }
                    await engine.discovered(machine: machine, addresses: service.addresses.map { "\($0):\(service.port)" })
                    if let key = await directory.discovered(machine: machine, service) {
                        context.logger.info("found peer", metadata: ["service": "\(service.name)", "addresses": "\(service.addresses)"])
                        group.addTask { await keepSession(key, directory, context) }
                    }
                case let .lost(name):
                    await directory.lost(service: name)
                }
            }
            group.cancelAll()
        }
        discovery.stop()
    }
}
