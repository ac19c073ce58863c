import Foundation
import Testing

/// Two computers of one household whose agents share no protocol version (one of them
/// started speaking another, as `PULSE_PEER_TEST_PROTOCOL` lets a test do): no session
/// starts, and each side's `status` says which computer to update — the older one, named —
/// in words and as a message key the page renders in its reader's language.
@Suite(.serialized) struct ProtocolVersionTests {
    let scratch: Scratch
    init() throws { scratch = try Scratch() }

    /// The peer entry of `home`'s `status --json` that carries a notice, once one does.
    func notice(_ home: Home, timeout: TimeInterval = 20) throws -> [String: Any]? {
        var found: [String: Any]?
        _ = try eventually(timeout: timeout) {
            let peers = try home.status()["peers"] as? [[String: Any]] ?? []
            found = peers.compactMap { $0["notice"] as? [String: Any] }.first
            return found != nil
        }
        return found
    }

    @Test func bothComputersSayWhichOneToUpdateWhenTheirProtocolsDiffer() throws {
        let homes = [Home(path: scratch.home("a")), Home(path: scratch.home("b"))]
        try homes[0].run(["init"])
        let agentA = try AgentProcess(home: homes[0].path)
        let code = try homes[0].run(["invite"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        try homes[1].run(["join", code, "--peer", agentA.address, "--name", "Study PC"])
        // B is the older release (0.9.x, the last closed one): it speaks protocol 8, and dials A.
        let agentB = try AgentProcess(
            home: homes[1].path, ["--peer", agentA.address], environment: ["PULSE_PEER_TEST_PROTOCOL": "8"])
        let onA = try #require(try notice(homes[0]), "A's status never said anything of B")
        #expect(onA["key"] as? String == "status.update_peer")
        let paramsA = onA["params"] as? [String: Any] ?? [:]
        #expect(paramsA["name"] as? String == "Study PC")
        #expect(paramsA["theirs"] as? String == "8")
        #expect(paramsA["ours"] as? String == "9")
        #expect((paramsA["release"] as? String)?.isEmpty == false)
        let onB = try #require(try notice(homes[1]), "B's status never said anything of A")
        #expect(onB["key"] as? String == "status.update_self")
        let nameOfA = try #require((onB["params"] as? [String: Any])?["name"] as? String)
        #expect(!nameOfA.isEmpty)
        // In words, in the reader's language too; and never "in sync".
        let human = try homes[0].run(["status"]).stdout
        #expect(human.contains("Study PC runs an older pulse-peer (protocol 8; this computer speaks 9)"), "\(human)")
        let polish = try homes[1].run(["status", "--lang", "pl"]).stdout
        #expect(polish.contains("\(nameOfA) ma nowszy pulse-peer"), "\(polish)")
        #expect(try homes[0].run(["status", "--wait", "synced", "--timeout", "1"], orFail: false).status != 0)
        #expect(agentB.stop() == 0)
        // B updated (started again speaking A's version): they sync, and the notice is gone.
        let updated = try AgentProcess(home: homes[1].path, ["--peer", agentA.address])
        try homes[1].waitUntil("synced")
        let peers = try homes[0].status()["peers"] as? [[String: Any]] ?? []
        #expect(peers.allSatisfy { $0["notice"] == nil }, "\(peers)")
        // Each status names the release and protocol of the machine and of its peer (HELLO, 9).
        let machine = try homes[0].status()["machine"] as? [String: Any] ?? [:]
        #expect(machine["protocols"] as? String == "9")
        let release = try #require((machine["software"] as? String)?.split(separator: " ").dropFirst().first.map(String.init))
        #expect(peers.first?["release"] as? String == release, "\(peers)")
        #expect(peers.first?["protocolVersion"] as? Int == 9, "\(peers)")
        #expect(try homes[0].run(["status"]).stdout.contains("pulse-peer \(release), protocol 9"))
        #expect(updated.stop() == 0)
        #expect(agentA.stop() == 0)
    }
}
