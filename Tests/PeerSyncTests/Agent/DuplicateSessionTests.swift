import Synchronization
import Testing
@testable import PulseModel
@testable import PulseProtocol
@testable import PulseTransport
@testable import PeerSync

/// How the engine ends sessions: each with the ERROR that PROTOCOL.md §5 names.
@Suite struct DuplicateSessionTests {
    final class Farewells: Sendable {
        let said = Mutex<[Int: PeerMessage?]>([:])
        func close(_ id: Int) -> @Sendable (PeerMessage?) -> Void {
            { farewell in self.said.withLock { $0[id] = farewell } }
        }
    }

    func register(_ engine: SyncEngine, _ id: Int, role: MembershipProof.Role, _ farewells: Farewells) async -> SyncEngine.Registration {
        let (_, signal) = AsyncStream<Void>.makeStream()
        return await engine.register(
            id, machine: "bb", replica: ReplicaID(rawValue: 2), role: role, origin: .inbound,
            remote: "127.0.0.1:1", bytes: ByteCounts(), close: farewells.close(id), signal: signal)
    }

    @Test func aSessionReplacedByTheSameMachinesNewOneIsClosedWithError6() async {
        let engine = SyncEngine(localMachine: "aa")
        let farewells = Farewells()
        _ = await register(engine, 1, role: .server, farewells)
        guard case .accepted(replacedOld: true) = await register(engine, 2, role: .server, farewells) else {
            Issue.record("the new session did not replace the old one")
            return
        }
        guard case let .error(code, _)?? = farewells.said.withLock({ $0[1] }) else {
            Issue.record("the old session was closed without an ERROR")
            return
        }
        #expect(code == .duplicateSession)
        #expect(farewells.said.withLock { $0[2] } == nil, "the new session was closed")
    }

    @Test func closingEverySessionSaysShuttingDown() async {
        let engine = SyncEngine(localMachine: "aa")
        let farewells = Farewells()
        _ = await register(engine, 1, role: .server, farewells)
        await engine.closeAll()
        guard case let .error(code, _)?? = farewells.said.withLock({ $0[1] }) else {
            Issue.record("closed without an ERROR")
            return
        }
        #expect(code == .shuttingDown)
    }
}
