import Foundation
import Testing

/// What families do to their own computers: a second agent started on the same home, a
/// home put back from an older copy, a full disk under an export.
@Suite struct SurvivingItsComputersTests {
    let scratch: Scratch
    init() throws { scratch = try Scratch() }

    @Test func aSecondAgentOnTheSameHomeRefusesNamingThePIDAndTheFirstKeepsWorking() throws {
        let homes = try scratch.household("a", "b")
        let (a, b) = (homes[0], homes[1])
        let agentA = try AgentProcess(home: a.path)
        let agentB = try AgentProcess(home: b.path, ["--peer", agentA.address])
        try a.waitUntil("synced")
        let socket = try FileManager.default.attributesOfItem(atPath: b.path + "/control.sock")
        let second = try PulsePeer.run(["run", "--home", b.path, "--port", "0", "--no-mdns", "--web", "off"], timeout: 30)
        #expect(second.status != 0)
        #expect(second.stderr.contains("an agent is already running"), "\(second.stderr)")
        #expect(second.stderr.contains("process \(agentB.process.processIdentifier)"), "\(second.stderr)")
        #expect(second.stdout.isEmpty, "a refused agent printed a ready line: \(second.stdout)")
        // Nothing of the first agent's was touched: the same socket file, still answering.
        let after = try FileManager.default.attributesOfItem(atPath: b.path + "/control.sock")
        #expect(after[.systemFileNumber] as? Int == socket[.systemFileNumber] as? Int)
        #expect(try b.run(["status"]).status == 0)
        // And the first agent still syncs a CLI change at once.
        try b.run(["shop", "add", "Milk"])
        try b.waitUntil("synced")
        try a.waitUntil("synced")
        #expect(try a.shoppingNames() == ["Milk"])
        // A killed agent's lock goes with it: the next agent starts.
        agentB.kill9()
        let again = try AgentProcess(home: b.path, ["--peer", agentA.address])
        try b.waitUntil("synced")
        _ = again.stop()
        _ = agentA.stop()
    }
}
