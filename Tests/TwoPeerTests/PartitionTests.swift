import Foundation
import Testing

/// Network faults, not crashes: three agents, each in its own network namespace (own bus and
/// avahi-daemon), on one switched LAN. A lossy link, then one machine cut off while every
/// machine writes, then the link back.
///
/// Bounds stated and checked: with `--keepalive 1`, a silent peer is dropped within 3 s
/// (three keepalives; checked against 6 s); after the link returns, all three are in sync
/// within 45 s (the dial backoff is capped at 30 s, plus a handshake and the catch-up).
@Suite(.serialized, .enabled(if: TestHost.available, Comment(rawValue: TestHost.unavailableReason)))
struct PartitionTests {
    let scratch: Scratch
    init() throws { scratch = try Scratch() }

    func peer(_ machineID: String, in status: [String: Any]) -> [String: Any]? {
        (status["peers"] as? [[String: Any]] ?? []).first { $0["machineID"] as? String == machineID }
    }

    func machineID(_ home: Home) throws -> String {
        try #require((home.status()["machine"] as? [String: Any])?["machineID"] as? String)
    }

    @Test func aMachineCutOffWritesOnBothSidesAndRejoinsWithNothingLost() throws {
        let hosts = try ["pa", "pb", "pc"].map { try TestHost(label: $0) }
        let lan = try LAN(hosts, subnet: Int.random(in: 10...250))
        let homes = try scratch.household("a", "b", "c")
        let (a, b, c) = (homes[0], homes[1], homes[2])
        let options = ["--keepalive", "1"]
        let agentA = try AgentProcess(home: a.path, options, on: hosts[0], listen: "0.0.0.0")
        let addressA = "\(lan.addresses[0]):\(agentA.port)"
        let agentB = try AgentProcess(home: b.path, options + ["--peer", addressA], on: hosts[1], listen: "0.0.0.0")
        let addressB = "\(lan.addresses[1]):\(agentB.port)"
        let agentC = try AgentProcess(
            home: c.path, options + ["--peer", addressA, "--peer", addressB], on: hosts[2],
            listen: "0.0.0.0")
        for home in homes { try home.waitUntil("synced", peers: 2) }
        let idC = try machineID(c)
        var written: [String] = []
        func add(_ home: Home, _ names: [String]) throws {
            try home.run(["shop", "add"], stdin: names.joined(separator: "\n")) // exit 0: acknowledged
            written += names
        }

        // 1. A lossy link under C: TCP carries on; everything converges.
        let applied = try hosts[2].degrade(lossPercent: 20, delayMilliseconds: 40)
        try add(c, (1...30).map { "Lossy C \($0)" })
        try add(a, (1...30).map { "Lossy A \($0)" })
        for home in homes { try home.waitUntil("synced", peers: 2, timeout: 90) }
        #expect(try a.shoppingNames().count == written.count, "over a degraded link (\(applied))")
        try hosts[2].restore()

        // 2. C's cable pulled: both sides notice the silence within the keepalive bound,
        //    A and B go on syncing, and everybody writes.
        try hosts[2].cut()
        let cut = Date()
        #expect(eventually(timeout: 6) { (try? a.status()).flatMap { peer(idC, in: $0) }?["state"] as? String == "disconnected" })
        let noticed = Date().timeIntervalSince(cut)
        try c.waitUntil("disconnected", peers: 2, timeout: 6)
        try add(a, (1...20).map { "Partitioned A \($0)" })
        try add(b, (1...5).map { "Partitioned B \($0)" })
        try add(c, (1...20).map { "Partitioned C \($0)" })
        try b.waitUntil("synced", peers: 1, timeout: 30)
        #expect(Set(try b.shoppingNames()).isSuperset(of: (1...20).map { "Partitioned A \($0)" }))
        #expect(try !a.shoppingNames().contains("Partitioned C 1"))

        // 3. The cable back: C reconnects (no duplicate-session lockout) and all converge.
        try hosts[2].heal()
        let healed = Date()
        for home in homes { try home.waitUntil("synced", peers: 2, timeout: 45) }
        let rejoined = Date().timeIntervalSince(healed)
        #expect(rejoined < 45)
        let exports = try homes.map { try $0.export() }
        #expect(exports[0] == exports[1] && exports[1] == exports[2])
        #expect(Set(try c.shoppingNames()) == Set(written), "every acknowledged write, on every machine")
        #expect(try a.shoppingNames().count == written.count)
        print(
            "partition: silence noticed after \(String(format: "%.1f", noticed)) s; in sync \(String(format: "%.1f", rejoined)) s after the heal; link: \(applied)"
        )
        for agent in [agentC, agentB, agentA] { #expect(agent.stop() == 0) }
    }
}
