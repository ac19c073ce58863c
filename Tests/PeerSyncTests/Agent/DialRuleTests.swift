import Testing
@testable import PulseModel
@testable import PeerSync

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
        let entry = PeerDirectory.Entry(source: source, machine: source == .discovered ? remote : nil,
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
}
