import Foundation
import Testing

/// Two machines with their own agents, for tests of what crosses machines (`scratch` holds their homes).
protocol TwoMachineFixture {
    var scratch: Scratch { get }
}

extension TwoMachineFixture {
    func pair() throws -> (Home, Home, AgentProcess, AgentProcess) { try scratch.twoAgents(bFor: "Tom") }

    func synced(_ homes: Home...) throws { for home in homes { try home.waitUntil("synced") } }

    func json(_ text: String) throws -> Any { try JSONSerialization.jsonObject(with: Data(text.utf8)) }

    /// Phones turned on at `home` (any port), and its `phones status` once served: at once on
    /// the computer keeping the household's CA, after a sync on another (its first answer may be
    /// the wait, in words, until the CA's computer signs its certificate).
    func servingPhones(_ home: Home) throws -> [String: Any] {
        let first = try PulsePeer.run(["phones", "on", "--port", "0", "--home", home.path])
        #expect(first.status == 0 || first.stderr.contains("is waiting for"), "\(first.stderr)")
        var state: [String: Any] = [:]
        _ = try eventually(timeout: 30) {
            state = try json(try home.run(["phones", "status", "--json"]).stdout) as? [String: Any] ?? [:]
            return state["fingerprint"] as? String != nil && state["problem"] is NSNull
        }
        return state
    }

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
