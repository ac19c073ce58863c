import Testing
@testable import PulseModel
@testable import PeerSync
@testable import PulseDiscovery

/// Who dials first when two machines find each other over mDNS: the smaller id at once; the
/// larger lets it, but only once its own advertisement is established (before that the other
/// cannot have found it, and a newcomer would wait for a dial that cannot come).
@Suite struct DialRuleTests {
    @Test(arguments: [
        // (source, local, remote, advertised, waits)
        (PeerDirectory.Source.discovered, "bb", "aa", true, true), // larger, found and findable: lets the other dial
        (.discovered, "bb", "aa", false, false), // larger, but still probing: nobody can dial it, so it dials
        (.discovered, "aa", "bb", true, false), // smaller: dials at once
        (.discovered, "aa", "bb", false, false),
        (.configured, "bb", "aa", true, false), // a --peer address: always dialed
    ])
    func whoDialsFirst(source: PeerDirectory.Source, local: String, remote: String, advertised: Bool, waits: Bool) {
        let entry = PeerDirectory.Entry(
            source: source, machine: source == .discovered ? remote : nil,
            candidates: [PeerAddress(host: "127.0.0.1", port: 1)])
        #expect(entry.letsTheOtherDialFirst(localMachine: local, advertised: advertised) == waits)
    }

    /// The directory starts not advertised, and follows the discovery loop's events.
    @Test func theDirectoryKnowsWhetherThisMachineIsAdvertised() async {
        let directory = PeerDirectory()
        #expect(await directory.advertised == false)
        await directory.setAdvertised(true)
        #expect(await directory.advertised)
        await directory.setAdvertised(false)
        #expect(await directory.advertised == false)
    }

    /// A dial loop waiting out its backoff is woken when its machine's addresses change (it
    /// came back on another port, or the first answer came from a cache holding its last
    /// run) or when the machine is withdrawn, and not by an advertisement that says again
    /// what the directory knows.
    @Test func aChangedAddressWakesTheDialLoop() async throws {
        let directory = PeerDirectory()
        func service(port: Int) -> DiscoveredService {
            DiscoveredService(name: "House Pulse on kitchen", txt: [:], port: port, addresses: ["192.168.1.20"], isLocal: false)
        }
        let key = try #require(await directory.discovered(machine: "aa", service(port: 40001)))
        let first = try #require(await directory.watch(key))
        #expect(first.entry.candidates == [PeerAddress(host: "192.168.1.20", port: 40001)])
        #expect(await directory.discovered(machine: "aa", service(port: 40001)) == nil)
        #expect(first.waiters.count == 1, "the same addresses again: still waiting")
        #expect(await directory.discovered(machine: "aa", service(port: 40002)) == nil) // not new: no second loop
        #expect(first.waiters.count == 0, "the new port: woken")
        await first.waiters.wait(first.ticket) // returns at once
        let second = try #require(await directory.watch(key))
        #expect(second.entry.candidates == [PeerAddress(host: "192.168.1.20", port: 40002)])
        await directory.lost(service: "House Pulse on kitchen")
        #expect(second.waiters.count == 0, "withdrawn: woken, and the loop finds no entry")
        await second.waiters.wait(second.ticket)
        #expect(await directory.watch(key) == nil)
    }
}
