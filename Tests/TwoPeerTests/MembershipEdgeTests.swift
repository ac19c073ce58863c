import Crypto
import Foundation
import NIOCore
import Testing
@testable import PeerSync
@testable import PulseProtocol

/// The edges of membership across real processes: a code that outlived its minutes, a
/// member's HELLO replayed by someone else, a machine redialing while its old connection is
/// half-open on the other side, and `join` finding the inviter over mDNS.
@Suite(.serialized) struct MembershipEdgeTests {
    let scratch: Scratch
    init() throws { scratch = try Scratch() }

    /// The agent's wall clock is moved past the invitation's expiry while it runs (libfaketime
    /// re-reading its offset from a file; monotonic time untouched so timers behave).
    @Test(.enabled(if: FakeTime.available, "needs libfaketime (scripts/setup.sh --tests installs `faketime`)"))
    func anExpiredCodeIsRefusedAndNothingIsWritten() throws {
        let a = Home(path: scratch.home("a")), x = Home(path: scratch.home("x"))
        try a.run(["init"])
        let offsetFile = scratch.home("faketime-offset")
        try "+0".write(toFile: offsetFile, atomically: true, encoding: .utf8)
        let wrapper = [
            "/usr/bin/env", "LD_PRELOAD=\(FakeTime.library)", "FAKETIME_TIMESTAMP_FILE=\(offsetFile)",
            "FAKETIME_NO_CACHE=1", "FAKETIME_DONT_FAKE_MONOTONIC=1", "/bin/sh", "-c", "exec \"$@\"", "sh",
        ]
        let agentA = try AgentProcess(home: a.path, wrapper: wrapper)
        defer { _ = agentA.stop(); FakeTime.removeLeftovers() }
        let code = try a.run(["invite", "--minutes", "1"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(((try a.status()["machine"] as? [String: Any])?["invitationExpires"]) != nil, "the invitation is open")
        try "+61s".write(toFile: offsetFile, atomically: true, encoding: .utf8)
        let late = try PulsePeer.run(["join", code, "--peer", agentA.address, "--home", x.path])
        #expect(late.status != 0 && late.stderr.contains("expired"), "\(late.stderr)")
        #expect(!FileManager.default.fileExists(atPath: x.path + "/household.sqlite"), "nothing written for a refused join")
        #expect(((try a.status()["machine"] as? [String: Any])?["invitationExpires"]) == nil, "status no longer shows it")
        // A fresh code made on the moved clock works: the refusal was the expiry, not the clock.
        let fresh = try a.run(["invite"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        try x.run(["join", fresh, "--peer", agentA.address])
    }

    /// B's HELLO to A is valid only inside a TLS session between B's and A's keys: an
    /// attacker who captured it and sends it over a connection of its own (its own
    /// certificate, as anyone's must be) is refused as not a member, and learns nothing.
    @Test func aMembersHelloReplayedOverAnotherConnectionIsRefused() throws {
        let homes = try scratch.household("a", "b")
        let (a, b) = (homes[0], homes[1])
        try a.run(["shop", "add", "Private"])
        let householdB = try Household.open(HouseholdHome(directory: URL(fileURLWithPath: b.path)))
        let householdA = try Household.open(HouseholdHome(directory: URL(fileURLWithPath: a.path)))
        let proof = MembershipProof.compute(
            secret: try householdB.membershipKey(), role: .client,
            clientMachine: try #require(Hex.bytes(householdB.identity.machineID)),
            serverMachine: try #require(Hex.bytes(householdA.identity.machineID)))
        let hello = PeerMessage.hello(
            .init(
                replica: householdB.store.replicaID, proof: proof,
                clock: Int64(Date().timeIntervalSince1970 * 1000)))
        var payload = ByteBuffer()
        WireCodec.encode(hello, into: &payload)
        var frame = ByteBuffer()
        frame.writeInteger(UInt32(payload.readableBytes))
        frame.writeBuffer(&payload)
        let hex = frame.readableBytesView.map { String(format: "%02x", $0) }.joined()

        let agentA = try AgentProcess(home: a.path)
        defer { _ = agentA.stop() }
        let frames = try Stranger(scratch: scratch).send(hex, to: agentA.port)
        #expect(frames.count == 1 && frames.first?["type"] as? Int == 8 && frames.first?["code"] as? Int == 3, "\(frames)")
        #expect((frames.first?["reason"] as? String)?.contains("not a member") == true, "\(frames)")
        #expect(agentA.waitForLog("not a member"), "A logged the refusal")
        #expect(try a.appliedChanges() == 0)
        // B itself, over its own TLS session, is welcome.
        let agentB = try AgentProcess(home: b.path, ["--peer", agentA.address])
        defer { _ = agentB.stop() }
        try b.waitUntil("synced")
        #expect(try b.shoppingNames() == ["Private"])
    }
}

/// Pairing and reconnection inside network namespaces (own bus and avahi-daemon each).
@Suite(.serialized, .enabled(if: TestHost.available, Comment(rawValue: TestHost.unavailableReason)))
struct MembershipOnALANTests {
    let scratch: Scratch
    init() throws { scratch = try Scratch() }

    @Test func joinFindsTheInvitingMachineOverMDNS() throws {
        let host = try TestHost(label: "join")
        let a = Home(path: scratch.home("a")), b = Home(path: scratch.home("b"))
        try a.run(["init"])
        try a.run(["shop", "add", "Found by mDNS"])
        let agentA = try AgentProcess(home: a.path, on: host)
        defer { _ = agentA.stop() }
        #expect(agentA.waitForLog("published as"))
        let code = try a.run(["invite"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        // No --peer: the joiner browses the namespace's avahi-daemon.
        let joined = try Shell.run(host.wrap([PulsePeer.executable.path, "join", code, "--home", b.path, "--timeout", "30"]))
        #expect(joined.status == 0, "\(joined.stderr)")
        let agentB = try AgentProcess(home: b.path, on: host)
        defer { _ = agentB.stop() }
        try b.waitUntil("synced")
        #expect(try b.shoppingNames() == ["Found by mDNS"])
    }

    /// B is killed while its FIN and RST never reach A (an nftables rule in B's namespace drops
    /// them, as a pulled cable or a sleeping laptop would): A still holds the old session. B
    /// starts again and dials: A replaces the dead session at once instead of refusing B as a
    /// duplicate until the 45 s silence timeout.
    @Test func aMachineRedialingWhileItsOldSessionIsHalfOpenIsAcceptedAtOnce() throws {
        let hostA = try TestHost(label: "ha"), hostB = try TestHost(label: "hb")
        let subnet = Int.random(in: 10...250)
        try TestHost.link(hostA, hostB, subnet: subnet)
        let homes = try scratch.household("a", "b")
        let (a, b) = (homes[0], homes[1])
        let agentA = try AgentProcess(home: a.path, ["--no-mdns"], on: hostA, listen: "0.0.0.0")
        defer { _ = agentA.stop() }
        let addressA = "10.77.\(subnet).1:\(agentA.port)"
        var agentB = try AgentProcess(home: b.path, ["--no-mdns", "--peer", addressA], on: hostB, listen: "0.0.0.0")
        try a.waitUntil("synced")
        try hostB.run(["nft", "add", "table", "inet", "halfopen"])
        try hostB.run(["nft", "add chain inet halfopen output { type filter hook output priority 0; }"])
        try hostB.run(["nft", "add", "rule", "inet", "halfopen", "output", "tcp", "flags", "&", "(fin|rst)", "!=", "0", "drop"])
        agentB.kill9()
        #expect(
            try a.status()["peers"].map { ($0 as? [[String: Any]])?.first?["state"] as? String } == "connected",
            "A still believes in the old session")
        let mark = agentA.logLineCount
        try b.run(["shop", "add", "After the restart"])
        agentB = try AgentProcess(home: b.path, ["--no-mdns", "--peer", addressA], on: hostB, listen: "0.0.0.0")
        defer { _ = agentB.stop() }
        try a.waitUntil("synced", timeout: 15) // far below the 45 s a duplicate refusal would cost
        #expect(try a.shoppingNames() == ["After the restart"])
        #expect(agentA.waitForLog("replaced the previous session", from: mark, timeout: 1))
        #expect(!agentA.logLines(from: mark).contains { $0.contains("duplicate") }, "\(agentA.logLines(from: mark))")
        try hostB.run(["nft", "delete", "table", "inet", "halfopen"])
    }
}
