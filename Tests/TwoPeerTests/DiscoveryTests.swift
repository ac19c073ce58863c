import Crypto
import Foundation
import Testing
@testable import PeerSync
@testable import PulseStore
@testable import PulseProtocol
@testable import PulseDiscovery

/// Agents that find each other through avahi-daemon, with no static peers. Each test
/// runs in its own network namespaces, each with its own bus and avahi-daemon.
@Suite(.serialized, .enabled(if: TestHost.available, Comment(rawValue: TestHost.unavailableReason)))
struct DiscoveryTests {
    let scratch: Scratch
    init() throws { scratch = try Scratch() }

    func peers(_ status: [String: Any]) -> [[String: Any]] { status["peers"] as? [[String: Any]] ?? [] }

    @Test func twoAgentsOnOneHostFindEachOtherAndConverge() throws {
        let host = try TestHost(label: "one")
        let homes = try scratch.household("a", "b")
        let (a, b) = (homes[0], homes[1])
        try a.run(["shop", "add", "Milk"])
        try b.run(["shop", "add", "Bread"])
        let agentA = try AgentProcess(home: a.path, on: host)
        let agentB = try AgentProcess(home: b.path, on: host)
        let statusA = try a.waitUntil("synced")
        let statusB = try b.waitUntil("synced")
        #expect(try a.export() == b.export())
        #expect(Set(try b.shoppingNames()) == ["Milk", "Bread"])
        // The side that dialed found the other by mDNS (the other may see it as inbound only).
        let foundBy = (peers(statusA) + peers(statusB)).flatMap { $0["foundBy"] as? [String] ?? [] }
        #expect(foundBy.contains("mdns"))
        #expect(!foundBy.contains("static"))
        #expect(((statusA["machine"] as? [String: Any])?["discovery"] as? String)?.contains("published") == true)
        agentB.stop()
        agentA.stop()
    }

    @Test func theAdvertisementIsVisibleToOthersAndAForeignTagIsIgnored() throws {
        let host = try TestHost(label: "adv")
        let homes = try scratch.household("a")
        let a = homes[0]
        let agentA = try AgentProcess(home: a.path, on: host)
        #expect(agentA.waitForLog("published as"))

        // An independent mDNS client sees the service and its TXT records.
        let browse = try host.run(["avahi-browse", "-rpt", "_housepulse._tcp"])
        let line = try #require(browse.split(separator: "\n").first { $0.hasPrefix("=") && $0.contains("127.0.0.1") })
        let fields = line.split(separator: ";", omittingEmptySubsequences: false)
        #expect(fields[8] == String(agentA.port)[...])
        var txt: [String: String] = [:]
        for record in fields[9].split(separator: "\" \"") {
            let item = record.trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            if let eq = item.firstIndex(of: "=") { txt[String(item[..<eq])] = String(item[item.index(after: eq)...]) }
        }
        let household = try Household.open(HouseholdHome(directory: URL(fileURLWithPath: a.path)))
        #expect(txt["v"] == String(PeerMessage.Hello.currentVersion))
        #expect(txt["id"] == nil) // the machine id is not published
        #expect(!line.contains("Anna")) // nor a member's name: "House Pulse on <host>"
        #expect(txt["n"]?.count == 16 && txt["tag"]?.count == 32)
        let id = household.identity.machineID
        #expect(HouseholdTag.machine(publishing: txt, keys: try household.discoveryKeys(), machines: ["ab", id]) == id)
        #expect(HouseholdTag.machine(publishing: txt, keys: [SymmetricKey(size: .bits256)], machines: [id]) == nil)
        #expect(HouseholdTag.machine(publishing: txt, keys: try household.discoveryKeys(), machines: ["ab"]) == nil)
        #expect(!(txt.values.contains { $0.contains(household.householdID) })) // nothing names the household

        // A service with a wrong tag is ignored: no connection is attempted.
        let impostor = try SpawnedProcess(
            host.wrap([
                "avahi-publish", "-s", "Impostor", "_housepulse._tcp", "9", "v=1",
                "id=" + String(repeating: "ab", count: 32), "n=0011223344556677",
                "tag=" + String(repeating: "0", count: 32),
            ]))
        defer { impostor.terminate() }
        #expect(agentA.waitForLog("ignoring a service of another household"))
        #expect(agentA.log.contains("service=Impostor"))
        #expect(peers(try a.waitUntil("disconnected", peers: 0)).isEmpty)
        agentA.stop()
    }

    @Test func twoHostsJoinedByAVethFindEachOtherOverMulticast() throws {
        let hostA = try TestHost(label: "va"), hostB = try TestHost(label: "vb")
        try TestHost.link(hostA, hostB, subnet: Int.random(in: 10...250))
        let homes = try scratch.household("a", "b")
        let (a, b) = (homes[0], homes[1])
        try a.run(["shop", "add", "From host A"])
        try b.run(["shop", "add", "From host B"])
        let agentA = try AgentProcess(home: a.path, on: hostA, listen: "0.0.0.0")
        let agentB = try AgentProcess(home: b.path, on: hostB, listen: "0.0.0.0")
        let statusA = try a.waitUntil("synced", timeout: 150)
        let statusB = try b.waitUntil("synced", timeout: 150)
        #expect(try a.export() == b.export())
        let addresses = (peers(statusA) + peers(statusB)).flatMap { $0["addresses"] as? [String] ?? [] }
        #expect(addresses.contains { $0.hasPrefix("10.77.") }, "resolved over the veth: \(addresses)")
        agentB.stop()
        agentA.stop()
    }

    @Test func agentsKeepTheirSessionAcrossAnAvahiRestartAndANewcomerFindsThem() throws {
        let host = try TestHost(label: "rs")
        let homes = try scratch.household("a", "b", "c")
        let (a, b, c) = (homes[0], homes[1], homes[2])
        let agentA = try AgentProcess(home: a.path, on: host)
        let agentB = try AgentProcess(home: b.path, on: host)
        try a.waitUntil("synced")
        let established = { (agent: AgentProcess) in agent.logLines().filter { $0.contains("session established") }.count }
        let (sessionsA, sessionsB) = (established(agentA), established(agentB))
        let markA = agentA.logLineCount, markB = agentB.logLineCount

        host.stopAvahi()
        #expect(agentA.waitForLog("mDNS unavailable", from: markA))
        try host.startAvahi()
        #expect(agentA.waitForLog("published as", from: markA))
        #expect(agentB.waitForLog("published as", from: markB))
        try a.run(["shop", "add", "After the restart"])
        try b.waitUntil("synced")
        #expect(try b.shoppingNames() == ["After the restart"])
        #expect(established(agentA) == sessionsA && established(agentB) == sessionsB, "the session was kept")

        let agentC = try AgentProcess(home: c.path, on: host)
        try c.waitUntil("synced", peers: 2, timeout: 60)
        #expect(try c.shoppingNames() == ["After the restart"])
        #expect(try c.export() == a.export())
        agentC.stop()
        agentB.stop()
        agentA.stop()
    }

    @Test func anAgentStartedBeforeAvahiSaysSoAndPublishesOnceItRuns() throws {
        let host = try TestHost(label: "late")
        host.stopAvahi()
        let homes = try scratch.household("a")
        let agentA = try AgentProcess(home: homes[0].path, on: host)
        #expect(agentA.waitForLog("mDNS unavailable"))
        let status = try homes[0].run(["status", "--json"]).stdout
        #expect(status.contains("mDNS unavailable"))
        try host.startAvahi()
        #expect(agentA.waitForLog("published as"))
        #expect(try homes[0].run(["status"]).stdout.contains("discovery: mDNS: publish"))
        agentA.stop()
    }
}
