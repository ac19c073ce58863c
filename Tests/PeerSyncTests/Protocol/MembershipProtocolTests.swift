import Crypto
import NIOCore
import NIOEmbedded
import Testing
@testable import PulseModel
@testable import PulseProtocol
@testable import PulseTransport

/// Per-machine trust in the handshake, pairing's rules and crypto, and the limits a
/// stranger meets before it has proved anything (docs/SECURITY.md). No sockets.
@Suite struct MembershipProtocolTests {
    let secret = SymmetricKey(size: .bits256)
    let clientMachine = Array(repeating: UInt8(1), count: 32)
    let serverMachine = Array(repeating: UInt8(2), count: 32)

    func server(standing: SessionStateMachine.PeerStanding) -> SessionStateMachine {
        SessionStateMachine(
            role: .server, secret: secret, localMachine: serverMachine, peerMachine: clientMachine,
            localReplica: ReplicaID(rawValue: 2), peerStanding: standing)
    }

    func clientHello(forServer server: [UInt8]? = nil, from client: [UInt8]? = nil) -> PeerMessage {
        .hello(
            .init(
                replica: ReplicaID(rawValue: 1),
                proof: MembershipProof.compute(
                    secret: secret, role: .client, clientMachine: client ?? clientMachine,
                    serverMachine: server ?? serverMachine), clock: 0))
    }

    func closeCode(_ actions: [SessionStateMachine.Action]) -> (ProtocolErrorCode, String)? {
        for action in actions { if case let .close(_, .error(code, reason)?) = action { return (code, reason) } }
        return nil
    }

    @Test(arguments: [
        (SessionStateMachine.PeerStanding.member, nil as String?),
        (.removed, "removed from the household"),
        (.unknown, "not on the household's list of machines"),
    ])
    func theHandshakeAdmitsOnlyMachinesOnTheList(standing: SessionStateMachine.PeerStanding, refusal: String?) {
        var machine = server(standing: standing)
        let actions = machine.receive(clientHello())
        if let refusal {
            let closed = closeCode(actions)
            #expect(closed?.0 == .notAMember)
            #expect(closed?.1.contains(refusal) == true)
            #expect(!actions.contains { if case .established = $0 { true } else { false } })
            #expect(machine.receive(.vector(HistoryHeads())).isEmpty, "nothing after the refusal")
        } else {
            #expect(actions.contains { if case .established = $0 { true } else { false } })
        }
    }

    @Test func aHelloReplayedFromAnotherMachineOrHouseholdIsRefused() {
        // A proof captured from a session between other machines (a relay, a replay).
        var machine = server(standing: .member)
        let replayed = clientHello(from: Array(repeating: 9, count: 32))
        #expect(closeCode(machine.receive(replayed))?.0 == .notAMember)
        // A proof made for another server.
        var other = server(standing: .member)
        #expect(closeCode(other.receive(clientHello(forServer: Array(repeating: 3, count: 32))))?.0 == .notAMember)
    }

    @Test func aHelloWithReplicaZeroIsMalformed() {
        var payload = ByteBuffer()
        WireCodec.encode(.hello(.init(replica: ReplicaID(rawValue: 0), proof: Array(repeating: 0, count: 32), clock: 0)), into: &payload)
        #expect { try WireCodec.decode(&payload) } throws: { ($0 as? WireError)?.code == .malformed }
    }

    /// An entity of a later release (code 200 here) decodes as a kept change (the open schema:
    /// OpenSchemaTests), and code 0, which no release gives, refuses the batch with code 5.
    @Test func anUnknownEntityIsKeptAndCode0RejectsTheBatchWithCode5() throws {
        var payload = ByteBuffer()
        WireCodec.encode(
            .batch(
                DeltaBatch(
                    changes: [
                        Change(
                            origin: ReplicaID(rawValue: 1), seq: 1, hlc: HybridTimestamp(rawValue: 1),
                            member: nil, entity: .task, rowID: "t",
                            fields: [FieldWrite(field: "title", value: .text("x"))])
                    ],
                    coverage: [])), into: &payload)
        // The entity code is the byte after origin(8) seq(1) hlc(1) in the one change.
        let entityIndex = payload.readerIndex + 1 + 1 + 1 + 8 + 1 + 1
        #expect(payload.getInteger(at: entityIndex, as: UInt8.self) == EntityKind.task.code)
        var later = payload
        later.setInteger(UInt8(200), at: entityIndex)
        guard case let .batch(batch) = try WireCodec.decode(&later) else { Issue.record("not a batch"); return }
        #expect(batch.changes.isEmpty && batch.kept.count == 1)
        #expect(batch.kept.first?.code == 200 && batch.kept.first?.rowID == "t" && batch.kept.first?.fields == [FieldWrite(field: "title", value: .text("x"))])
        payload.setInteger(UInt8(0), at: entityIndex)
        #expect { try WireCodec.decode(&payload) } throws: { ($0 as? WireError)?.code == .rejectedBatch }
    }

    @Test func pairingMessagesOutsidePairingAreRefused() {
        var client = SessionStateMachine(
            role: .client, secret: secret, localMachine: clientMachine, peerMachine: serverMachine,
            localReplica: ReplicaID(rawValue: 1))
        _ = client.start()
        // A client never answers a pairing request.
        #expect(closeCode(client.receive(.pairStart(.init(message: Array(repeating: 0, count: 32), name: "x"))))?.0 == .unexpectedMessage)
        var machine = server(standing: .unknown)
        let started = machine.receive(.pairStart(.init(message: Array(repeating: 0, count: 32), name: "x")))
        #expect(started.contains { if case .pairingStarted = $0 { true } else { false } })
        // Only the confirmation may follow, once; a HELLO now is a protocol error.
        #expect(closeCode(machine.receive(clientHello()))?.0 == .unexpectedMessage)
    }

    // MARK: Frames before authentication

    func decoded(_ bytes: [UInt8], limit: FrameLimit) -> Result<[PeerMessage], Error> {
        let channel = EmbeddedChannel(handler: ByteToMessageHandler(PeerFrameDecoder(limit: limit)))
        defer { _ = try? channel.finish() }
        do {
            try channel.writeInbound(ByteBuffer(bytes: bytes))
            var out: [PeerMessage] = []
            while let message: PeerMessage = try channel.readInbound() { out.append(message) }
            return .success(out)
        } catch {
            return .failure(error)
        }
    }

    @Test func beforeTheHandshakeOnlyAHelloSizedFrameIsAccepted() {
        let limit = FrameLimit()
        // A legal 4 MiB frame announced by a stranger is refused on its length alone.
        let big = decoded([0x00, 0x40, 0x00, 0x00, 3], limit: limit)
        guard case let .failure(error) = big else { Issue.record("accepted"); return }
        #expect("\(error)".contains("before the handshake"))
        // A HELLO fits.
        var frame = ByteBuffer()
        try? PeerFrameEncoder().encode(data: clientHello(), out: &frame)
        #expect((try? decoded(Array(frame.readableBytesView), limit: limit).get())?.count == 1)
        #expect(frame.readableBytes <= WireLimits.maxUnauthenticatedFrameBytes)
        // Once the peer is authenticated, full-size frames are read again.
        limit.authenticated()
        #expect(limit.current == WireLimits.maxFrameBytes)
    }

    @Test func admissionBoundsUnauthenticatedConnectionsPerAddressAndInTotal() {
        let control = AdmissionControl(perAddress: 2, total: 3)
        let a1 = control.admit("10.0.0.1"), a2 = control.admit("10.0.0.1")
        #expect(a1 != nil && a2 != nil)
        #expect(control.admit("10.0.0.1") == nil, "a third from one address")
        let b1 = control.admit("10.0.0.2")
        #expect(b1 != nil)
        #expect(control.admit("10.0.0.3") == nil, "a fourth in all")
        a1?.release()
        a1?.release() // idempotent
        #expect(control.counts.waiting == 2)
        #expect(control.admit("10.0.0.3") != nil)
        #expect(control.counts.refused == 2)
    }

    // MARK: Pairing

    @Test(
        arguments: [
            ("123-456-7890", "1234567890"), ("1234567890", "1234567890"), (" 123 456 7890 ", "1234567890"),
            ("123-456-789", nil), ("123-456-78901", nil), ("12a-456-7890", nil), ("", nil), ("١٢٣٤٥٦٧٨٩٠", nil),
        ] as [(String, String?)])
    func pairingCodesAreTenDigits(typed: String, digits: String?) {
        #expect(PairingCode.normalize(typed) == digits)
    }

    @Test func generatedCodesAreTenDigitsAndDisplayedInGroups() {
        var seen = Set<String>()
        for _ in 0..<200 {
            let code = PairingCode.generate()
            #expect(PairingCode.normalize(code) == code)
            #expect(PairingCode.normalize(PairingCode.display(code)) == code)
            seen.insert(code)
        }
        #expect(seen.count == 200)
    }

    @Test(
        arguments: [
            // (attempts made before, now relative to expiry, used) → refusal
            (0, -1, false, nil as PairingInvitation.Refusal?),
            (2, -1, false, nil),
            (3, -1, false, .exhausted),
            (0, 0, false, .expired),
            (0, -1, true, .used),
        ] as [(Int, Int64, Bool, PairingInvitation.Refusal?)])
    func anInvitationWorksOnceUntilItExpiresOrRunsOutOfAttempts(
        attempts: Int, now: Int64, used: Bool,
        refusal: PairingInvitation.Refusal?
    ) {
        var invitation = PairingInvitation(code: "1234567890", memberID: nil, expires: 1_000)
        for _ in 0..<attempts { _ = invitation.beginAttempt(now: 0) }
        if used { invitation.succeed() }
        #expect(invitation.beginAttempt(now: 1_000 + now) == refusal)
    }

    /// SPAKE2 is unsupported API of a pinned dependency: these catch a change in it.
    @Test func spake2AgreesOnTheCodeAndNothingElse() throws {
        func run(_ a: String, _ b: String, names: ([UInt8], [UInt8]) = ([1], [2]), bobSees: [UInt8]? = nil) throws -> Bool {
            let alice = try #require(Spake2(role: .alice, myName: names.0, theirName: names.1))
            let bob = try #require(Spake2(role: .bob, myName: bobSees ?? names.1, theirName: names.0))
            let ma = try #require(alice.message(password: PairingCode.password(a)))
            let mb = try #require(bob.message(password: PairingCode.password(b)))
            let ka = try #require(alice.key(peerMessage: mb)), kb = try #require(bob.key(peerMessage: ma))
            #expect(ka.count == 64)
            let confirmServer = PairingConfirmation.expected(
                key: kb, role: .server, clientMachine: names.0, serverMachine: names.1,
                clientMessage: ma, serverMessage: mb)
            let expectedByAlice = PairingConfirmation.expected(
                key: ka, role: .server, clientMachine: names.0, serverMachine: names.1,
                clientMessage: ma, serverMessage: mb)
            return ka == kb && PairingConfirmation.matches(confirmServer, expectedByAlice)
        }
        #expect(try run("1234567890", "1234567890"))
        #expect(try !run("1234567890", "1234567891"))
        // A relay shows each side its own key: the names differ, so the keys do too.
        #expect(try !run("1234567890", "1234567890", bobSees: [3]))
        // Each instance runs once.
        let once = try #require(Spake2(role: .alice, myName: [1], theirName: [2]))
        #expect(once.message(password: [1]) != nil)
        #expect(once.message(password: [1]) == nil)
        #expect(once.key(peerMessage: [0, 1]) == nil)
    }

    @Test func confirmationsDifferByRole() {
        let key = Array(repeating: UInt8(5), count: 64)
        let server = PairingConfirmation.expected(
            key: key, role: .server, clientMachine: clientMachine, serverMachine: serverMachine,
            clientMessage: [1], serverMessage: [2])
        let client = PairingConfirmation.expected(
            key: key, role: .client, clientMachine: clientMachine, serverMachine: serverMachine,
            clientMessage: [1], serverMessage: [2])
        #expect(server != client)
        #expect(!PairingConfirmation.matches(server, client))
        #expect(!PairingConfirmation.matches(server, Array(server.prefix(31))))
    }
}
