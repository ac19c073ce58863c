import NIOCore
import NIOEmbedded
import Testing
@testable import PeerSync
@testable import PulseProtocol

/// The session's outbox: every write reaches the writer, and after the session's own ERROR
/// nothing more is sent (docs/PROTOCOL.md §5.8, docs/SECURITY.md).
@Suite struct OutboxTests {
    @Test func writesFromSeveralTasksAllReachTheWriterAndEachTasksInItsOrder() async throws {
        let (writer, sink) = NIOAsyncChannelOutboundWriter<PeerMessage>.makeTestingWriter()
        let outbox = Outbox(writer)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0..<4 {
                group.addTask { for n in 0..<50 { try await outbox.write(.ping(UInt64(task * 1000 + n))) } }
            }
            try await group.waitForAll()
        }
        var seen: [UInt64] = []
        var messages = sink.makeAsyncIterator()
        while seen.count < 200, let message = await messages.next() {
            guard case let .ping(token) = message else { Issue.record("unexpected \(message)"); return }
            seen.append(token)
        }
        #expect(seen.count == 200)
        for task in 0..<4 {
            let own = seen.filter { $0 / 1000 == UInt64(task) }
            #expect(own == (0..<50).map { UInt64(task * 1000 + $0) })
        }
    }

    @Test func afterItsErrorNothingMoreIsWrittenAndAWriteSaysTheSessionIsClosing() async throws {
        let (writer, sink) = NIOAsyncChannelOutboundWriter<PeerMessage>.makeTestingWriter()
        let outbox = Outbox(writer)
        try await outbox.write(.ping(1))
        try await outbox.write(.error(.timeout, "peer silent"))
        await #expect(throws: PeerSession.End.self) { try await outbox.write(.ping(2)) }
        await #expect(throws: PeerSession.End.self) { try await outbox.write(.error(.timeout, "again")) }
        writer.finish()
        var written: [PeerMessage] = []
        for await message in sink { written.append(message) }
        #expect(written.count == 2)
        guard case .ping(1) = written.first, case .error(.timeout, "peer silent") = written.last else {
            Issue.record("written: \(written)")
            return
        }
    }

    @Test func finishingWritesItsErrorOnceStraightToTheChannelAndClosesTheOutbox() async throws {
        let (writer, sink) = NIOAsyncChannelOutboundWriter<PeerMessage>.makeTestingWriter()
        let outbox = Outbox(writer)
        let channel = EmbeddedChannel()
        outbox.finish(with: .error(.timeout, "no handshake"), on: channel)
        outbox.finish(with: .error(.timeout, "twice"), on: channel)
        guard case .error(.timeout, "no handshake") = try channel.readOutbound(as: PeerMessage.self) else {
            Issue.record("the ERROR was not written to the channel")
            return
        }
        #expect(try channel.readOutbound(as: PeerMessage.self) == nil)
        await #expect(throws: PeerSession.End.self) { try await outbox.write(.ping(3)) }
        writer.finish()
        var written = 0
        for await _ in sink { written += 1 }
        #expect(written == 0)
        _ = try channel.finish()
    }
}
