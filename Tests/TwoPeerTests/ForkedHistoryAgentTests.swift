import Foundation
import Testing

/// Histories that forked, with real agents (docs/PROTOCOL.md §5, "Histories that forked"):
/// a machine put back to an older copy that meets a stale peer first, whose numbers after the
/// copy then name different changes on different machines.
@Suite struct ForkedHistoryAgentTests {
    let scratch: Scratch
    init() throws { scratch = try Scratch() }

    /// A, B and C in sync; B stopped; A's home copied; A adds L1–L5, which reach C; A put back
    /// to the copy adds N1…Nk with its agent down; then B starts, then A, which meets B first;
    /// then C. With 3, A used to notice only at C (B lacked L1–L3 for good); with 6 nobody
    /// noticed (A and B lacked L1–L5, C lacked N1–N5) and every status said "in sync".
    @Test(arguments: [3, 6])
    func aRestoredMachineThatMeetsAStalePeerFirstSplitsNothing(k: Int) throws {
        let homes = try scratch.household("a", "b", "c")
        let (a, b, c) = (homes[0], homes[1], homes[2])
        var agentA = try AgentProcess(home: a.path)
        var agentB = try AgentProcess(home: b.path, ["--peer", agentA.address])
        var agentC = try AgentProcess(home: c.path, ["--peer", agentA.address])
        try a.run(["shop", "add", "Milk"])
        try a.waitUntil("synced", peers: 2)
        try b.waitUntil("synced")
        try c.waitUntil("synced")
        #expect(agentB.stop() == 0)
        #expect(agentA.stop() == 0)
        let copy = scratch.home("a-copy")
        try FileManager.default.copyItem(atPath: a.path, toPath: copy)
        agentA = try AgentProcess(home: a.path)
        _ = agentC.stop()
        agentC = try AgentProcess(home: c.path, ["--peer", agentA.address])
        let lost = (1...5).map { "L\($0)" }
        try a.run(["shop", "add"], stdin: lost.joined(separator: "\n"))
        // Bought and needed again: the first of the two changes is overwritten (a stub travels).
        try a.run(["shop", "check", "L2"])
        try a.run(["shop", "restock", "L2"])
        try a.waitUntil("synced")
        try c.waitUntil("synced")
        #expect(Set(try c.shoppingNames()).isSuperset(of: lost))
        #expect(agentA.stop() == 0)
        #expect(agentC.stop() == 0)
        // A's disk dies; its home comes back from the copy, and A writes before meeting anyone.
        try FileManager.default.removeItem(atPath: a.path)
        try FileManager.default.copyItem(atPath: copy, toPath: a.path)
        let made = (1...k).map { "N\($0)" }
        try a.run(["shop", "add"], stdin: made.joined(separator: "\n"))
        try a.run(["shop", "check", "N1"])
        try a.run(["shop", "restock", "N1"])
        agentB = try AgentProcess(home: b.path)
        agentA = try AgentProcess(home: a.path, ["--peer", agentB.address])
        try a.waitUntil("synced")
        try b.waitUntil("synced")
        agentC = try AgentProcess(home: c.path, ["--peer", agentA.address])
        let expected = Set(["Milk"] + lost + made)
        for home in [a, b, c] {
            #expect(eventually(timeout: 60) { (try? Set(home.shoppingNames())) == expected }, "\(home.path): \((try? home.shoppingNames()) ?? [])")
        }
        let synced = try a.waitUntil("synced", peers: 2, timeout: 30, orFail: false)
        #expect((synced["peers"] as? [[String: Any]])?.allSatisfy { $0["inSync"] as? Bool == true } == true, "\(synced)\n\(agentA.log)")
        try b.waitUntil("synced")
        try c.waitUntil("synced")
        #expect(try a.export() == b.export())
        #expect(try b.export() == c.export())
        let logs = agentA.log + agentB.log + agentC.log
        #expect(logs.contains("forked"), "\(logs)")
        #expect(!logs.contains("never made"), "\(logs)")
        // And the household goes on from the restored machine.
        try a.run(["shop", "add", "After"])
        #expect(eventually(timeout: 30) { (try? c.shoppingNames().contains("After")) == true })
        #expect(eventually(timeout: 30) { (try? b.shoppingNames().contains("After")) == true })
        _ = agentC.stop()
        _ = agentA.stop()
        _ = agentB.stop()
    }
}
