import Foundation
import Testing

/// Waits that always end, and a shutdown that is bounded, on a lone agent.
@Suite struct AgentLifecycleTests {
    let scratch: Scratch
    init() throws { scratch = try Scratch() }

    @Test func aWaitThatCannotBeMetTimesOutOnTime() throws {
        let home = try scratch.household("lone")[0]
        let agent = try AgentProcess(home: home.path)
        let started = Date()
        let result = try PulsePeer.run(["status", "--home", home.path, "--wait", "synced", "--timeout", "2"])
        let elapsed = Date().timeIntervalSince(started)
        #expect(result.status != 0)
        #expect(result.stderr.contains("timed out after 2"), "\(result.stderr)")
        #expect(elapsed >= 2 && elapsed < 4, "answered after \(elapsed) s")
        #expect(agent.stop() == 0)
    }

    @Test func sigtermWhileAWaitIsPendingEndsTheAgentAtOnce() throws {
        let home = try scratch.household("lone")[0]
        let agent = try AgentProcess(home: home.path)
        // A client waiting for a condition that will not come.
        let waiter = Process()
        waiter.executableURL = PulsePeer.executable
        waiter.arguments = ["status", "--home", home.path, "--wait", "synced", "--timeout", "600"]
        waiter.standardOutput = FileHandle.nullDevice
        waiter.standardError = FileHandle.nullDevice
        try waiter.run()
        defer { if waiter.isRunning { waiter.terminate() } }
        // Poll the agent until it counts the pending wait (a condition, not a fixed sleep).
        let deadline = Date().addingTimeInterval(10)
        func pending() -> Int {
            let status = try? JSONSerialization.jsonObject(with: Data(home.run(["status", "--json"]).stdout.utf8)) as? [String: Any]
            return (status?["machine"] as? [String: Any])?["pendingWaits"] as? Int ?? 0
        }
        while Date() < deadline, pending() == 0 {}
        #expect(pending() == 1)
        let started = Date()
        let status = agent.stop(timeout: 10)
        let elapsed = Date().timeIntervalSince(started)
        #expect(status == 0)
        #expect(elapsed < 2, "SIGTERM took \(elapsed) s")
        waiter.waitUntilExit()
        #expect(waiter.terminationStatus != 0) // the agent went away: the wait says so
    }
}
