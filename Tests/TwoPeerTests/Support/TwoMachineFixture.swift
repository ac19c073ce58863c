import Foundation

/// Two machines with their own agents, for tests of what crosses machines (`scratch` holds their homes).
protocol TwoMachineFixture {
    var scratch: Scratch { get }
}

extension TwoMachineFixture {
    func pair() throws -> (Home, Home, AgentProcess, AgentProcess) { try scratch.twoAgents(bFor: "Tom") }

    func synced(_ homes: Home...) throws { for home in homes { try home.waitUntil("synced") } }

    func json(_ text: String) throws -> Any { try JSONSerialization.jsonObject(with: Data(text.utf8)) }

    /// B's agent stops; `offline` runs on B with no connection; B's agent comes back and both sync.
    func whileBIsOffline(
        _ a: Home, _ b: Home, _ agentB: AgentProcess, online: () throws -> Void,
        offline: () throws -> Void
    ) throws -> AgentProcess {
        agentB.stop()
        try a.waitUntil("disconnected")
        try online()
        try offline()
        let restarted = try AgentProcess(home: b.path)
        try synced(a, b)
        try synced(b, a)
        return restarted
    }
}
