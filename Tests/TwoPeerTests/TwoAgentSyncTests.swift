import Foundation
import Testing
@testable import PeerSync
@testable import PulseStore
@testable import PulseProtocol
@testable import PulseDiscovery

/// Two (or three) real `pulse-peer run` processes on loopback, each with its own home.
@Suite(.serialized) struct TwoAgentSyncTests {
    let scratch: Scratch
    init() throws { scratch = try Scratch() }

    @Test func itemsAddedOnEachSideAppearOnTheOther() throws {
        let homes = try scratch.household("a", "b")
        let (a, b) = (homes[0], homes[1])
        try a.run(["shop", "add", "Milk", "Eggs"])
        let agentA = try AgentProcess(home: a.path)
        let agentB = try AgentProcess(home: b.path, ["--peer", agentA.address])
        try a.waitUntil("synced")
        try b.waitUntil("synced")
        #expect(try b.shoppingNames() == ["Milk", "Eggs"])

        // Written while both agents run: pushed at once, no polling interval.
        try b.run(["shop", "add", "Bread"])
        try a.run(["shop", "add", "Butter"])
        try a.waitUntil("synced")
        try b.waitUntil("synced")
        #expect(Set(try a.shoppingNames()) == ["Milk", "Eggs", "Bread", "Butter"])
        #expect(try a.export() == b.export())
        #expect(agentA.stop() == 0)
        #expect(agentB.stop() == 0)
    }

    /// A CLI write reaches the running agent through its pipe (`changed.fifo`: the owner's
    /// only, made afresh by each agent, removed when it stops); with no pipe there (an agent of
    /// an earlier release), through the control socket's `changed`. Nothing else is written to.
    @Test func theCLITellsTheAgentThroughItsPipeOrElseTheControlSocket() throws {
        let homes = try scratch.household("a", "b")
        let (a, b) = (homes[0], homes[1])
        var agentA = try AgentProcess(home: a.path)
        let agentB = try AgentProcess(home: b.path, ["--peer", agentA.address])
        try b.waitUntil("synced")
        let pipe = a.path + "/changed.fifo", socket = a.path + "/control.sock"
        func isOwnersPipe() -> Bool {
            var info = stat()
            return lstat(pipe, &info) == 0 && info.st_mode & S_IFMT == S_IFIFO && info.st_mode & 0o777 == 0o600
        }
        func reachesB(_ name: String) -> Bool { eventually(timeout: 20) { (try? b.shoppingNames())?.contains(name) == true } }
        #expect(isOwnersPipe())
        // The control socket out of reach: only the pipe can tell A.
        #expect(rename(socket, socket + ".aside") == 0)
        try a.run(["shop", "add", "Through the pipe"])
        #expect(reachesB("Through the pipe"))
        #expect(rename(socket + ".aside", socket) == 0)
        // A plain file in the pipe's place is not written to: the control socket tells A.
        #expect(unlink(pipe) == 0 && FileManager.default.createFile(atPath: pipe, contents: Data()))
        try a.run(["shop", "add", "Through the socket"])
        #expect(reachesB("Through the socket"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: pipe)).isEmpty)
        // A new agent makes its pipe afresh, and removes it when it stops.
        #expect(agentA.stop() == 0)
        agentA = try AgentProcess(home: a.path)
        #expect(isOwnersPipe())
        #expect(agentA.stop() == 0)
        #expect(!FileManager.default.fileExists(atPath: pipe))
        agentB.stop()
    }

    @Test func offlineEditsConvergeAndTheReconnectSendsOnlyWhatIsNew() throws {
        let homes = try scratch.household("a", "b")
        let (a, b) = (homes[0], homes[1])
        try a.run(["shop", "add"], stdin: (1...50).map { "Item \($0)" }.joined(separator: "\n"))
        let agentA = try AgentProcess(home: a.path)
        var agentB = try AgentProcess(home: b.path, ["--peer", agentA.address])
        try b.waitUntil("synced")
        #expect(agentB.stop() == 0)
        try a.waitUntil("disconnected")

        let appliedByA = try a.appliedChanges()
        try a.run(["shop", "add", "From A 1", "From A 2"])
        try b.run(["shop", "add", "From B"]) // B is offline: committed locally
        agentB = try AgentProcess(home: b.path) // the peer was remembered
        try a.waitUntil("synced")
        try b.waitUntil("synced")
        #expect(try a.export() == b.export())
        #expect(Set(try b.shoppingNames()).isSuperset(of: ["Item 1", "Item 50", "From A 1", "From A 2", "From B"]))
        // The second connection carried only the three new changes, one each way or two.
        #expect(try b.appliedChanges() == 2)
        #expect(try a.appliedChanges() - appliedByA == 1)
        agentB.stop()
        agentA.stop()
    }

    /// The losing write is always logged on the machine that made it (it receives the
    /// winner); the other machine logs it too when the loser reaches it, which a race
    /// decides: a change already overwritten when its machine sends is not sent.
    @Test func concurrentEditsOfOneItemPickTheSameWinnerAndAreLoggedWhereTheLoserWasWritten() throws {
        let homes = try scratch.household("a", "b")
        let (a, b) = (homes[0], homes[1])
        try a.run(["shop", "add", "Milk"])
        let agentA = try AgentProcess(home: a.path)
        var agentB = try AgentProcess(home: b.path, ["--peer", agentA.address])
        try b.waitUntil("synced")
        agentB.stop()
        try a.waitUntil("disconnected")
        try a.run(["shop", "rename", "Milk", "Oat milk"])
        try b.run(["shop", "rename", "Milk", "Whole milk"]) // later: the winner
        agentB = try AgentProcess(home: b.path)
        try a.waitUntil("synced")
        try b.waitUntil("synced")
        #expect(try a.shoppingNames() == ["Whole milk"])
        #expect(try b.shoppingNames() == ["Whole milk"])
        for home in [a, b] {
            let log = try home.run(["conflicts", "--json"]).stdout
            let entries = try JSONSerialization.jsonObject(with: Data(log.utf8)) as? [[String: Any]] ?? []
            #expect(home.path == a.path ? entries.count == 1 : entries.count <= 1, "\(home.path): \(entries)")
            for entry in entries {
                #expect((entry["lost"] as? [String: Any])?["value"] as? String == "Oat milk")
                #expect((entry["kept"] as? [String: Any])?["value"] as? String == "Whole milk")
                #expect((entry["summary"] as? String)?.contains("the shopping item “Whole milk”") == true, "\(entry)")
            }
        }
        agentB.stop()
        agentA.stop()
    }

    @Test func killNineDuringALargeCatchUpLosesNothingAndResumes() throws {
        let homes = try scratch.household("a", "b")
        let (a, b) = (homes[0], homes[1])
        try a.run(["shop", "add"], stdin: (1...20_000).map { "Thing \($0)" }.joined(separator: "\n"))
        try b.run(["shop", "add", "Acknowledged on B"])
        let agentA = try AgentProcess(home: a.path)
        var agentB = try AgentProcess(home: b.path, ["--peer", agentA.address])
        // Kill it once it has applied a first batch (the agent's own counter, polled).
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline, (try? b.appliedChanges()) ?? 0 == 0 {}
        agentB.kill9()

        // The database is whole, and what B acknowledged is there.
        let partial: UInt64
        do {
            let store = try ReplicaStore(path: b.path + "/household.sqlite")
            #expect(try store.integrityCheck() == "ok")
            let names = try store.connection.query("SELECT name FROM shopping_item") { statement in
                var names: [String] = []
                while try statement.step() { names.append(statement.text(0)) }
                return names
            }
            #expect(names.contains("Acknowledged on B"))
            partial = UInt64(names.count)
            #expect(partial > 1 && partial < 20_001, "killed while the catch-up was under way (\(partial) items)")
        }
        agentB = try AgentProcess(home: b.path)
        try a.waitUntil("synced", timeout: 120)
        try b.waitUntil("synced", timeout: 120)
        #expect(try a.export() == b.export())
        #expect(try b.shoppingNames().count == 20_001)
        // It resumed: the second run did not receive again what the first had applied.
        #expect(try b.appliedChanges() <= 20_000 - Int(partial) + 1 + 1)
        agentB.stop()
        agentA.stop()
    }

    @Test func strangersAndGarbageAreRefusedWhileTheRealPeerIsServed() throws {
        let homes = try scratch.household("a", "b")
        let (a, b) = (homes[0], homes[1])
        let stranger = Home(path: scratch.home("other"))
        try stranger.run(["init", "--household", "Other Family", "--member", "Eve"])
        try stranger.run(["shop", "add", "Secret of the other family"])
        try a.run(["shop", "add", "Private item"])
        let agentA = try AgentProcess(home: a.path)
        let agentB = try AgentProcess(home: b.path, ["--peer", agentA.address])
        try b.waitUntil("synced")

        // Another household's machine dials A: refused on both sides, nothing exchanged.
        let agentC = try AgentProcess(home: stranger.path, ["--peer", agentA.address])
        #expect(agentC.waitForLog("not a member of this household"))
        // Raw garbage on A's port.
        try sendGarbage(to: agentA.port)

        try a.run(["shop", "add", "After the attacks"])
        try a.waitUntil("synced")
        try b.waitUntil("synced")
        #expect(try b.shoppingNames().contains("After the attacks"))
        #expect(!(try stranger.export().contains("Private item")))
        #expect(!(try a.export().contains("Secret of the other family")))
        let status = try a.run(["status", "--json"]).stdout
        let peers = (try JSONSerialization.jsonObject(with: Data(status.utf8)) as? [String: Any])?["peers"] as? [[String: Any]] ?? []
        #expect(peers.filter { $0["state"] as? String == "connected" }.count == 1)
        agentC.stop()
        agentB.stop()
        agentA.stop()
    }

    @Test func statusShowsThePeerInSyncThenDisconnected() throws {
        let homes = try scratch.household("a", "b")
        let (a, b) = (homes[0], homes[1])
        try a.run(["shop", "add", "Milk"])
        let agentA = try AgentProcess(home: a.path)
        let agentB = try AgentProcess(home: b.path, ["--peer", agentA.address])
        let synced = try b.waitUntil("synced")
        let peer = try #require((synced["peers"] as? [[String: Any]])?.first)
        #expect(peer["state"] as? String == "connected")
        #expect(peer["inSync"] as? Bool == true)
        #expect(peer["peerLacks"] as? Int == 0 && peer["weLack"] as? Int == 0)
        #expect((peer["foundBy"] as? [String]) == ["static"])
        #expect((peer["machineID"] as? String)?.count == 64)
        let human = try b.run(["status"]).stdout
        #expect(human.contains("connected") && human.contains("in sync"))

        agentB.stop()
        let after = try a.waitUntil("disconnected")
        let gone = try #require((after["peers"] as? [[String: Any]])?.first)
        #expect(gone["state"] as? String == "disconnected")
        #expect(gone["inSync"] as? Bool == false)
        agentA.stop()
        let none = try PulsePeer.run(["status", "--home", a.path])
        #expect(none.status != 0)
        #expect(none.stderr.contains("no agent is running"))
    }
}

/// Connects to `port` on loopback, sends bytes that are not TLS, and waits for the close.
func sendGarbage(to port: Int) throws {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard connected == 0 else { throw AgentProcess.Failure(description: "cannot connect to \(port)") }
    var tv = timeval(tv_sec: 10, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    var garbage = [UInt8](repeating: 0, count: 4096)
    for index in garbage.indices { garbage[index] = UInt8(truncatingIfNeeded: index &* 7919 &+ 13) }
    _ = send(fd, garbage, garbage.count, Int32(MSG_NOSIGNAL))
    var buffer = [UInt8](repeating: 0, count: 4096)
    while recv(fd, &buffer, buffer.count, 0) > 0 {} // the agent answers with an alert at most, then closes
}
