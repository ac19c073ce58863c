import Crypto
import Testing
@testable import PulseModel
@testable import PulseProtocol
import PeerSync

@Suite struct SessionStateMachineTests {
    let secret = SymmetricKey(size: .bits256)
    let clientMachine = Array(repeating: UInt8(1), count: 32)
    let serverMachine = Array(repeating: UInt8(2), count: 32)

    func pair(serverSecret: SymmetricKey? = nil) -> (SessionStateMachine, SessionStateMachine) {
        (
            SessionStateMachine(
                role: .client, secret: secret, localMachine: clientMachine, peerMachine: serverMachine,
                localReplica: ReplicaID(rawValue: 1)),
            SessionStateMachine(
                role: .server, secret: serverSecret ?? secret, localMachine: serverMachine, peerMachine: clientMachine,
                localReplica: ReplicaID(rawValue: 2))
        )
    }

    func sent(_ actions: [SessionStateMachine.Action]) -> [PeerMessage] {
        actions.compactMap { if case let .send(m) = $0 { m } else if case let .close(_, m?) = $0 { m } else { nil } }
    }

    func closes(_ actions: [SessionStateMachine.Action]) -> Bool {
        actions.contains { if case .close = $0 { true } else { false } }
    }

    /// Closed with ERROR `notAMember`, nothing else sent.
    func refusedAsStranger(_ actions: [SessionStateMachine.Action]) -> Bool {
        guard closes(actions), sent(actions).count == 1, case .error(.notAMember, _) = sent(actions)[0] else { return false }
        return true
    }

    @Test func membersCompleteTheHandshake() throws {
        var (client, server) = pair()
        #expect(server.start().isEmpty) // the server waits for the client
        let hello = sent(client.start())
        #expect(hello.count == 1)
        let serverActions = server.receive(hello[0])
        #expect(serverActions.contains(.established(peer: ReplicaID(rawValue: 1))))
        #expect(serverActions.contains { if case .peerClock = $0 { true } else { false } }) // version 2 carries the clock
        let reply = try #require(sent(serverActions).first)
        #expect(client.receive(reply).last == .established(peer: ReplicaID(rawValue: 2)))
        #expect(client.isEstablished && server.isEstablished)
        // Then VECTOR, batches, acks, keepalive.
        #expect(server.receive(.vector(HistoryHeads())) == [.startCatchUp(HistoryHeads())])
        #expect(server.receive(.batch(DeltaBatch())) == [.apply(DeltaBatch())])
        #expect(server.receive(.ping(7)) == [.send(.pong(7))])
        #expect(server.receive(.vector(HistoryHeads())).contains { if case .close = $0 { true } else { false } })
    }

    @Test func aMachineOfAnotherHouseholdIsRefusedAndLearnsNothing() {
        var (client, server) = pair(serverSecret: SymmetricKey(size: .bits256))
        let actions = server.receive(sent(client.start())[0])
        #expect(closes(actions))
        #expect(sent(actions) == [.error(.notAMember, "not a member of this household")]) // no HELLO, no data
        #expect(!server.isEstablished)
    }

    @Test func aProofIsBoundToBothMachines() {
        // A relay that shows its own certificate to the server cannot reuse the client's proof.
        var client = SessionStateMachine(
            role: .client, secret: secret, localMachine: clientMachine, peerMachine: serverMachine,
            localReplica: ReplicaID(rawValue: 1))
        var server = SessionStateMachine(
            role: .server, secret: secret, localMachine: serverMachine,
            peerMachine: Array(repeating: 9, count: 32), localReplica: ReplicaID(rawValue: 2))
        #expect(refusedAsStranger(server.receive(sent(client.start())[0])))
        // A client's proof reflected back as the server's is refused too, by the role in the
        // proof: the reflected HELLO carries another replica id, so the self-connection
        // guard does not decide it.
        var (c2, _) = pair()
        guard case var .hello(reflected) = sent(c2.start())[0] else { Issue.record("no hello"); return }
        reflected.replica = ReplicaID(rawValue: 3)
        #expect(refusedAsStranger(c2.receive(.hello(reflected))))
        #expect(!c2.isEstablished)
    }

    /// An ERROR 2 names the versions its sender speaks, and the refused side reads them back
    /// (so that its status says which computer to update); a reason that names none gives none.
    @Test func anError2NamesTheVersionsItsSenderSpeaks() {
        var (client, server) = pair()
        guard case var .hello(hello) = sent(client.start())[0] else { Issue.record("no hello"); return }
        hello.version = 7
        guard case let .error(.unsupportedVersion, reason)? = sent(server.receive(.hello(hello))).first else {
            Issue.record("version 7 was not refused with ERROR 2")
            return
        }
        #expect(PeerMessage.Hello.spokenVersions(in: reason) == PeerMessage.Hello.supportedVersions)
        for (text, expected) in [
            ("unsupported protocol version 9 (this agent speaks 7–8)", 7...8 as ClosedRange<UInt16>?),
            ("unsupported protocol version 9 (this agent speaks 8)", 8...8), ("speaks 8-10", 8...10),
            ("speaks 9–7", nil), ("not a member of this household", nil), ("speaks", nil), ("speaks x", nil),
        ] {
            #expect(PeerMessage.Hello.spokenVersions(in: text) == expected, "\(text)")
        }
    }

    /// Which computer to update: the one whose versions are all below the other's.
    @Test func theOlderComputerIsTheOneToUpdate() {
        typealias Notice = AgentStatus.Notice
        let older = Notice.protocolMismatch(peer: "Study PC", ours: 8...9, theirs: 7...7, release: "0.10.0")
        #expect(older.key == "status.update_peer" && older.params["release"] == "0.10.0" && older.params["theirs"] == "7")
        #expect(older.params["ours"] == "8–9")
        #expect(Notice.protocolMismatch(peer: "Study PC", ours: 8...8, theirs: 7...7, release: nil).key == "status.update_peer_any")
        #expect(Notice.protocolMismatch(peer: "Study PC", ours: 8...8, theirs: 9...10, release: "0.10.0").key == "status.update_self")
        #expect(
            older.text()
                == "Study PC runs an older pulse-peer (protocol 7; this computer speaks 8–9): the two sync again once Study PC is updated to pulse-peer 0.10.0 or later."
        )
    }

    /// Versions are negotiated, not matched (§7): the highest both speak, whichever side is
    /// newer; a side whose versions are all below the other's lowest is refused with ERROR 2.
    @Test(
        arguments: [
            (8...8, 8...8, "8"), (8...9, 8...8, "8"), (8...8, 8...9, "8"), (9...11, 8...10, "10"), (8...10, 9...11, "10"),
            (7...7, 8...9, "refused by the server"), (10...10, 8...9, "refused by the client"),
        ] as [(ClosedRange<UInt16>, ClosedRange<UInt16>, String)])
    func twoAgentsSpeakTheHighestVersionBothSpeak(client versions: ClosedRange<UInt16>, server serverVersions: ClosedRange<UInt16>, expected: String) {
        var client = SessionStateMachine(
            role: .client, secret: secret, localMachine: clientMachine, peerMachine: serverMachine,
            localReplica: ReplicaID(rawValue: 1), versions: versions)
        var server = SessionStateMachine(
            role: .server, secret: secret, localMachine: serverMachine, peerMachine: clientMachine,
            localReplica: ReplicaID(rawValue: 2), versions: serverVersions)
        let answer = server.receive(sent(client.start())[0])
        if expected == "refused by the server" {
            guard case let .error(.unsupportedVersion, reason)? = sent(answer).first else {
                Issue.record("the server did not refuse: \(answer)")
                return
            }
            #expect(PeerMessage.Hello.spokenVersions(in: reason) == serverVersions)
            return
        }
        let result = client.receive(sent(answer)[0])
        if expected == "refused by the client" {
            guard case let .error(.unsupportedVersion, reason)? = sent(result).first else {
                Issue.record("the client did not refuse: \(result)")
                return
            }
            #expect(PeerMessage.Hello.spokenVersions(in: reason) == versions)
            return
        }
        #expect(client.isEstablished && server.isEstablished)
        #expect("\(client.sessionVersion)" == expected && "\(server.sessionVersion)" == expected)
    }

    @Test func protocolViolationsCloseTheSession() {
        var (_, server) = pair()
        #expect(closes(server.receive(.vector(HistoryHeads()))))
        var (client, server2) = pair()
        guard case let .hello(hello) = sent(client.start())[0] else { Issue.record("no hello"); return }
        var old = hello
        old.version = PeerMessage.Hello.supportedVersions.lowerBound - 1 // older than every version spoken here
        let refused = server2.receive(.hello(old))
        #expect(sent(refused).first.map { if case .error(.unsupportedVersion, _) = $0 { true } else { false } } == true)

        var (client3, server3) = pair()
        _ = server3.receive(sent(client3.start())[0])
        #expect(closes(server3.receive(.batch(DeltaBatch())))) // before VECTOR
        var (client4, server4) = pair()
        let hello4 = sent(client4.start())[0]
        _ = server4.receive(hello4)
        #expect(closes(server4.receive(hello4))) // twice
    }

    @Test func connectingToItselfIsDetected() {
        var client = SessionStateMachine(
            role: .client, secret: secret, localMachine: clientMachine, peerMachine: serverMachine,
            localReplica: ReplicaID(rawValue: 5))
        var server = SessionStateMachine(
            role: .server, secret: secret, localMachine: serverMachine, peerMachine: clientMachine,
            localReplica: ReplicaID(rawValue: 5))
        #expect(closes(server.receive(sent(client.start())[0])))
    }

    @Test func aPeerErrorEndsTheSession() {
        var (_, server) = pair()
        let actions = server.receive(.error(.shuttingDown, "bye"))
        #expect(closes(actions) && sent(actions).isEmpty)
        #expect(server.receive(.ping(1)).isEmpty)
    }

    @Test func helloCarriesTheWallClockAndAnOlderVersionIsRefusedWithCode2() throws {
        let client = SessionStateMachine(
            role: .client, secret: secret, localMachine: clientMachine, peerMachine: serverMachine,
            localReplica: ReplicaID(rawValue: 1), wallClock: { 1_000_000 })
        var server = SessionStateMachine(
            role: .server, secret: secret, localMachine: serverMachine, peerMachine: clientMachine,
            localReplica: ReplicaID(rawValue: 2), wallClock: { 2_000_000 })
        var c = client
        guard case var .hello(hello) = sent(c.start())[0] else { Issue.record("no hello"); return }
        #expect(hello.version == 9 && hello.clock == 1_000_000)
        let actions = server.receive(.hello(hello))
        #expect(actions.contains(.peerClock(1_000_000)))
        guard case let .hello(answer)? = sent(actions).first else { Issue.record("no answer"); return }
        #expect(answer.version == 9 && answer.clock == 2_000_000)
        // Versions 1 and 2 know no per-machine trust, 3 no backlog positions, 4 no household
        // PIN, 5 no member languages, 6 no phones, 7 no household CA, 8 no open schema and no
        // fork-safe histories: refused, naming the version spoken.
        for version: UInt16 in [1, 2, 3, 4, 5, 6, 7, 8] {
            var old = SessionStateMachine(
                role: .server, secret: secret, localMachine: serverMachine, peerMachine: clientMachine,
                localReplica: ReplicaID(rawValue: 2))
            hello = PeerMessage.Hello(version: version, replica: hello.replica, proof: hello.proof)
            let refused = old.receive(.hello(hello))
            guard case let .error(code, reason)? = sent(refused).first else { Issue.record("no error"); return }
            #expect(code == .unsupportedVersion && reason.contains("9"))
        }
    }
}
