import Foundation
import Testing
@testable import PeerSync
@testable import PulseStore

/// Membership across real processes: pairing by short code, removal that sticks (also on a
/// machine offline when it happened, and against a stale peer), and what a stranger meets
/// before it has proved anything (docs/SECURITY.md).
@Suite(.serialized) struct MembershipTests {
    let scratch: Scratch
    init() throws { scratch = try Scratch() }

    func machineID(_ home: Home) throws -> String {
        try #require(
            (try JSONSerialization.jsonObject(with: Data(home.run(["devices", "--json"]).stdout.utf8)) as? [[String: Any]])?
                .first { $0["thisMachine"] as? Bool == true }?["id"] as? String)
    }

    func devices(_ home: Home) throws -> [[String: Any]] {
        try JSONSerialization.jsonObject(with: Data(home.run(["devices", "--json"]).stdout.utf8)) as? [[String: Any]] ?? []
    }

    /// The refusals in `status --json` (either way), as text.
    func refusals(_ home: Home) -> [String] {
        let list = ((try? home.status())?["machine"] as? [String: Any])?["refusals"] as? [[String: Any]] ?? []
        return list.map { "\(($0["byPeer"] as? Bool) == true ? "by " : "")\($0["machineID"] as? String ?? "?"): \($0["reason"] as? String ?? "")" }
    }

    @Test func pairedMachinesSyncAndARemovalIsEnforcedEverywhereEvenByAMachineOfflineWhenItHappened() throws {
        let a = Home(path: scratch.home("a")), b = Home(path: scratch.home("b")), c = Home(path: scratch.home("c"))
        let d = Home(path: scratch.home("d"))
        try a.run(["init"])
        let agentA = try AgentProcess(home: a.path)
        // A code works once: B joins with it, C cannot reuse it.
        let code = try a.run(["invite"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(code.range(of: #"^\d{3}-\d{3}-\d{4}$"#, options: .regularExpression) != nil, "\(code)")
        try b.run(["join", code, "--peer", agentA.address])
        let reused = try PulsePeer.run(["join", code, "--peer", agentA.address, "--home", c.path])
        #expect(reused.status != 0 && reused.stderr.contains("its last one was used"), "\(reused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: c.path + "/household.sqlite"), "nothing written for a refused join")
        try c.pair(with: a, at: agentA)
        try d.pair(with: a, at: agentA) // D stays offline: the stale peer of the end
        let (idA, idB, idC) = (try machineID(a), try machineID(b), try machineID(c))

        var agentB: AgentProcess? = try AgentProcess(home: b.path, ["--peer", agentA.address])
        var agentC: AgentProcess? = try AgentProcess(home: c.path, ["--peer", agentA.address, "--peer", agentB!.address])
        try c.run(["shop", "add", "From C"])
        for home in [a, b, c] { try home.waitUntil("synced", peers: 2) }
        #expect(try b.shoppingNames() == ["From C"])
        #expect(Set(try devices(b).map { $0["id"] as? String ?? "" }).isSuperset(of: [idA, idB, idC]))
        let agentD0 = try AgentProcess(home: d.path, ["--peer", agentA.address])
        try d.waitUntil("synced")
        _ = agentD0.stop()

        // B goes offline; A removes C. C is shut out by A at once and told why.
        _ = agentB?.stop()
        agentB = nil
        let removed = try a.run(["devices", "remove", String(idC.prefix(8))])
        #expect(removed.stdout.contains("Removed"))
        #expect(
            eventually(timeout: 20) { refusals(c).contains { $0.hasPrefix("by \(idA)") && $0.contains("removed from the household") } },
            "\(refusals(c))")
        #expect(refusals(a).contains { $0.hasPrefix(idC) && $0.contains("removed") })
        // Bad input changes nothing: this machine, an unknown id, too short an id, C again.
        for bad in [String(idA.prefix(8)), "ffffffffffff", "ab", String(idC.prefix(8))] {
            #expect(try PulsePeer.run(["devices", "remove", bad, "--home", a.path]).status != 0)
        }
        try c.run(["shop", "add", "C after its removal"])
        _ = agentC?.stop()
        agentC = nil

        // B comes back knowing nothing of it, syncs with A, and learns the removal.
        agentB = try AgentProcess(home: b.path, ["--peer", agentA.address])
        try b.waitUntil("synced")
        #expect(try devices(b).contains { $0["id"] as? String == idC && $0["removed"] is Double })

        // C comes back: both refuse it, before any household data.
        agentC = try AgentProcess(home: c.path, ["--peer", agentA.address, "--peer", agentB!.address])
        #expect(
            eventually(timeout: 30) {
                let seen = refusals(c)
                return seen.contains { $0.hasPrefix("by \(idA)") } && seen.contains { $0.hasPrefix("by \(idB)") }
            }, "\(refusals(c))")
        #expect(try a.shoppingNames() == ["From C"] && b.shoppingNames() == ["From C"], "nothing of C's after its removal")
        #expect(eventually(timeout: 10) { refusals(b).contains { $0.hasPrefix(idC) } })

        // A stale peer: D synced once before the removal (it knows C) and was offline since.
        // It accepts C (it cannot know), takes C's writes, then meets A: it learns the
        // removal and refuses C too; C stays out everywhere, and what D relayed from C is
        // merged (docs/SECURITY.md, "Removal").
        // D remembered A's address from its first run: forget it, or D may meet A first (a race
        // that would make this the ordinary case, not the stale peer's).
        try Household.open(HouseholdHome(directory: URL(fileURLWithPath: d.path))).store.setMeta("static_peers", .text(""))
        let agentD = try AgentProcess(home: d.path, ["--peer", agentC!.address])
        try d.waitUntil("synced")
        #expect(try d.shoppingNames().contains("C after its removal"))
        _ = agentD.stop()
        let agentD2 = try AgentProcess(home: d.path, ["--peer", agentA.address])
        #expect(eventually(timeout: 30) { (try? devices(d).contains { $0["id"] as? String == idC && $0["removed"] is Double }) == true })
        #expect(try devices(a).contains { $0["id"] as? String == idC && $0["removed"] is Double }, "the stale peer did not bring C back")
        #expect(eventually(timeout: 40) { refusals(d).contains { $0.hasPrefix(idC) } }, "D refuses C now: \(refusals(d))\n\(agentD2.log.suffix(4000))")
        try a.waitUntil("synced", peers: 2)
        #expect(try a.shoppingNames().contains("C after its removal"), "relayed by the stale peer, merged")
        _ = agentD2.stop()
        _ = agentC?.stop()
        _ = agentB?.stop()
        _ = agentA.stop()
    }

    @Test func wrongCodesKillTheInvitationAndStrangersGetNothing() throws {
        let homes = try scratch.household("a", "b")
        let (a, b) = (homes[0], homes[1])
        try a.run(["shop", "add", "Secret list"])
        let agentA = try AgentProcess(home: a.path)
        // No invitation open.
        let x = Home(path: scratch.home("x"))
        let none = try PulsePeer.run(["join", "123-456-7890", "--peer", agentA.address, "--home", x.path])
        #expect(none.status != 0 && none.stderr.contains("has no pairing code open"), "\(none.stderr)")
        // Three wrong codes, then the right one is dead too.
        let code = try a.run(["invite"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let wrong = code.hasPrefix("0") ? "1" + code.dropFirst() : "0" + code.dropFirst()
        for _ in 0..<3 {
            let attempt = try PulsePeer.run(["join", String(wrong), "--peer", agentA.address, "--home", x.path])
            #expect(attempt.status != 0 && attempt.stderr.contains("wrong pairing code"), "\(attempt.stderr)")
        }
        let late = try PulsePeer.run(["join", code, "--peer", agentA.address, "--home", x.path])
        #expect(late.status != 0 && late.stderr.contains("too many wrong codes"), "\(late.stderr)")
        #expect(!FileManager.default.fileExists(atPath: x.path + "/household.sqlite"))
        let malformed = try PulsePeer.run(["join", "12345", "--peer", agentA.address, "--home", x.path])
        #expect(malformed.status != 0 && malformed.stderr.contains("10 digits"))

        // A machine of another household: refused with the reason on both sides.
        let other = Home(path: scratch.home("other"))
        try other.run(["init"])
        let agentOther = try AgentProcess(home: other.path, ["--peer", agentA.address])
        #expect(eventually(timeout: 20) { refusals(other).contains { $0.contains("not a member of this household") } }, "\(refusals(other))")
        #expect(try other.shoppingNames().isEmpty)
        _ = agentOther.stop()

        // Bytes from a stranger who completed TLS: each answered with the documented ERROR, nothing else.
        let stranger = try Stranger(scratch: scratch)
        let cases: [(String, String, Int)] = [
            ("garbage", "ffffffff00", 1), // a frame longer than any
            ("oversized before HELLO", "00400000" + "03", 1), // a legal 4 MiB frame, before HELLO
            ("unknown type", "000000016f", 1),
            ("truncated HELLO", "0000000401000300", 1),
            ("VECTOR first", "000000020200", 4),
        ]
        for (name, hex, code) in cases {
            let frames = try stranger.send(hex, to: agentA.port)
            #expect(
                frames.count == 1 && frames.first?["type"] as? Int == 8 && frames.first?["code"] as? Int == code,
                "\(name): \(frames)")
        }
        // Silence: ERROR 7 at the handshake deadline.
        #expect(try stranger.send("", to: agentA.port).first?["code"] as? Int == 7)
        #expect(try a.appliedChanges() == 0)
        #expect(try b.shoppingNames().isEmpty, "B never ran")
        _ = agentA.stop()
    }

    @Test func aHomeReadableByOthersIsRefusedNamingTheFile() throws {
        let a = Home(path: scratch.home("a"))
        try a.run(["init"])
        let database = a.path + "/household.sqlite"
        #expect(chmod(database, 0o644) == 0)
        let run = try PulsePeer.run(["run", "--home", a.path, "--port", "0", "--listen", "127.0.0.1", "--no-mdns"], timeout: 20)
        #expect(run.status != 0 && run.stderr.contains(database) && run.stderr.contains("chmod 600"), "\(run.stderr)")
        #expect(try PulsePeer.run(["shop", "list", "--home", a.path]).status != 0)
        #expect(chmod(database, 0o600) == 0)
        #expect(try PulsePeer.run(["shop", "list", "--home", a.path]).status == 0)
        let identity = a.path + "/identity.pem"
        #expect(chmod(identity, 0o640) == 0)
        let refused = try PulsePeer.run(["shop", "list", "--home", a.path])
        #expect(refused.status != 0 && refused.stderr.contains(identity) && refused.stderr.contains("chmod 600"), "\(refused.stderr)")
        #expect(chmod(identity, 0o600) == 0)
    }

    @Test func aFloodOfStrangersSendingLargeFramesStaysBoundedWhileARealPeerSyncs() throws {
        let homes = try scratch.household("a", "b")
        let (a, b) = (homes[0], homes[1])
        let agentA = try AgentProcess(home: a.path)
        let agentB = try AgentProcess(home: b.path, ["--peer", agentA.address])
        try b.waitUntil("synced")
        let before = try AgentProcess.memory(pid: agentA.process.processIdentifier)
        let stranger = try Stranger(scratch: scratch)
        let flood = try stranger.flood(to: agentA.port, connections: 200, frameBytes: 4 * 1024 * 1024)
        // The real peer keeps syncing through it.
        try b.run(["shop", "add", "During the flood"])
        try a.waitUntil("synced")
        #expect(try a.shoppingNames() == ["During the flood"])
        let result = try flood.finish()
        let after = try AgentProcess.memory(pid: agentA.process.processIdentifier)
        let growth = after.peak - before.current
        print("flood: \(result); agent RSS \(before.current / 1024) MiB before, peak \(after.peak / 1024) MiB (+\(growth / 1024) MiB)")
        #expect(growth < 64 * 1024, "peak RSS grew by \(growth / 1024) MiB")
        #expect((result["refused"] as? Int ?? 0) + (result["tls"] as? Int ?? 0) == 200)
        #expect(((result["error_frames"] as? [String: Int])?["1"] ?? 0) > 0, "the admitted ones got ERROR 1")
        try b.run(["shop", "add", "After the flood"])
        try a.waitUntil("synced")
        #expect(try a.shoppingNames().contains("After the flood"))
        _ = agentB.stop()
        _ = agentA.stop()
    }
}

/// A stranger with a certificate of its own (Tests/hostile_peer.py, Python's ssl; outside the
/// test target's directory so that SwiftPM does not treat it as a resource).
struct Stranger {
    let cert: String, key: String
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("hostile_peer.py").path

    init(scratch: Scratch) throws {
        cert = scratch.home("stranger.crt")
        key = scratch.home("stranger.key")
        let made = try Shell.run([
            "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
            "-keyout", key, "-out", cert, "-days", "1", "-subj", "/CN=stranger",
        ])
        guard made.status == 0 else { throw AgentProcess.Failure(description: "openssl: \(made.stderr)") }
    }

    func send(_ hex: String, to port: Int) throws -> [[String: Any]] {
        let run = try Shell.run(["python3", Self.script, cert, key, "127.0.0.1", String(port), "send", hex], timeout: 30)
        let json = try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any]
        return json?["frames"] as? [[String: Any]] ?? []
    }

    final class Flood {
        let process: Process
        let output: Pipe
        init(process: Process, output: Pipe) { self.process = process; self.output = output }
        func finish() throws -> [String: Any] {
            let data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
        }
    }

    func flood(to port: Int, connections: Int, frameBytes: Int) throws -> Flood {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", Self.script, cert, key, "127.0.0.1", String(port), "flood", String(connections), String(frameBytes)]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        return Flood(process: process, output: output)
    }
}

enum Shell {
    typealias Result = PulsePeer.Result
    static func run(_ command: [String], timeout: TimeInterval = 60) throws -> Result {
        try PulsePeer.runProcess(command, timeout: timeout)
    }
}

extension AgentProcess {
    /// Resident memory now and its peak (VmRSS, VmHWM), in KiB.
    static func memory(pid: Int32) throws -> (current: Int, peak: Int) {
        let text = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        func field(_ name: String) -> Int {
            text.split(separator: "\n").first { $0.hasPrefix(name) }.flatMap { Int($0.split(separator: " ", omittingEmptySubsequences: true)[1]) } ?? 0
        }
        return (field("VmRSS:"), field("VmHWM:"))
    }
}
