import Foundation
import Testing

/// The household rules across two machines, each with its own running agent.
@Suite(.serialized) struct HouseholdSyncTests {
    let scratch: Scratch
    init() throws { scratch = try Scratch() }

    func pair() throws -> (Home, Home, AgentProcess, AgentProcess) { try scratch.twoAgents() }

    func synced(_ homes: Home...) throws { for home in homes { try home.waitUntil("synced") } }

    @Test func theShoppingCycleOnOneMachineIsSeenOnTheOther() throws {
        let (a, b, agentA, agentB) = try pair()
        try a.run(["shop", "add", "Milk", "Eggs"])
        try synced(a, b)
        #expect(try b.shoppingNames() == ["Milk", "Eggs"])
        try a.run(["shop", "check", "Milk"])
        try synced(a, b)
        #expect(try b.run(["shop", "list", "--restock"]).stdout.contains("Milk"))
        try b.run(["shop", "restock", "Milk"])
        try synced(a, b)
        #expect(try a.shoppingNames() == ["Eggs", "Milk"])
        agentB.stop()
        agentA.stop()
    }

    @Test func theFocusRuleMergeCaseKeepsEveryTask() throws {
        let (a, b, agentA, agentB) = try pair()
        agentB.stop()
        try a.waitUntil("disconnected")
        for title in ["A1", "A2", "A3"] { try a.run(["task", "add", title]) }
        for title in ["B1", "B2", "B3"] { try b.run(["task", "add", title]) }
        let restarted = try AgentProcess(home: b.path)
        try synced(a, b)
        let list = try b.run(["task"]).stdout
        #expect(list.contains("6 are active, more than the focus rule's 3"))
        #expect(try a.export() == b.export())
        restarted.stop()
        agentA.stop()
    }

    @Test func deletingACategoryWhileAnItemIsAddedToItLosesNothing() throws {
        let (a, b, agentA, agentB) = try pair()
        try a.run(["backlog", "category", "add", "Vacation"])
        try synced(a, b)
        agentB.stop()
        try a.waitUntil("disconnected")
        try a.run(["backlog", "category", "remove", "Vacation"])
        try b.run(["backlog", "add", "Vacation", "Book hotel"])
        let restarted = try AgentProcess(home: b.path)
        try synced(a, b)
        for home in [a, b] {
            let list = try home.run(["backlog"]).stdout
            #expect(list.contains("VACATION") && list.contains("Book hotel") && list.contains("kept for its items"))
        }
        restarted.stop()
        agentA.stop()
    }

    @Test func aRecurringTaskGeneratedOnBothWhileDisconnectedEndsAsOne() throws {
        let (a, b, agentA, agentB) = try pair()
        try a.run(["recurring", "add", "Water plants", "--daily"])
        try synced(a, b)
        agentA.stop()
        agentB.stop()
        // Both machines, apart, reach the day's period: each generates its task.
        #expect(try a.run(["task"]).stdout.contains("Water plants"))
        #expect(try b.run(["task"]).stdout.contains("Water plants"))
        let agentA2 = try AgentProcess(home: a.path)
        let agentB2 = try AgentProcess(home: b.path, ["--peer", agentA2.address])
        try synced(a, b)
        for home in [a, b] {
            let tasks = try home.run(["task", "--json"]).stdout
            #expect(tasks.components(separatedBy: "Water plants").count - 1 == 1)
        }
        #expect(try a.export() == b.export())
        agentB2.stop()
        agentA2.stop()
    }
}
