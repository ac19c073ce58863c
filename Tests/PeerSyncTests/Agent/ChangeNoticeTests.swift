#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import PeerSync

/// The writer's side of the change notice (`changed.fifo`), on plain pipes.
@Suite struct ChangeNoticeTests {
    /// The agent gone between the writer's open and its write: EPIPE, "no notice"; the
    /// thread's signal mask is as it was and no SIGPIPE is left pending. (SwiftNIO ignores
    /// SIGPIPE in any process that opened a NIO channel, as this test process has, so the
    /// signal would not end it here; the CLI's write commands open none, and there the
    /// blocking is what keeps the writer alive.)
    @Test func aPipeWhoseReaderIsGoneTakesNoNoticeAndRaisesNothing() {
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        close(ends[0])
        defer { close(ends[1]) }
        var before = sigset_t(), after = sigset_t(), pending = sigset_t()
        pthread_sigmask(SIG_SETMASK, nil, &before)
        #expect(ChangeNotices.writeNotice(ends[1]) == false)
        pthread_sigmask(SIG_SETMASK, nil, &after)
        #expect(sigismember(&after, SIGPIPE) == sigismember(&before, SIGPIPE))
        sigpending(&pending)
        #expect(sigismember(&pending, SIGPIPE) == 0)
    }

    /// With a reader: one byte a notice; a full pipe (an agent busy) still counts as told,
    /// and the writer never blocks.
    @Test func aFullPipeStillCountsAsToldAndNeverBlocks() {
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        defer { close(ends[0]); close(ends[1]) }
        #expect(fcntl(ends[1], F_SETFL, fcntl(ends[1], F_GETFL) | O_NONBLOCK) == 0)
        #expect(ChangeNotices.writeNotice(ends[1]))
        var byte: UInt8 = 0
        #expect(read(ends[0], &byte, 1) == 1 && byte == 1)
        // A pipe holds 64 KiB on Linux: well past it, every notice is still "told".
        #expect((0..<70_000).allSatisfy { _ in ChangeNotices.writeNotice(ends[1]) })
        var buffer = [UInt8](repeating: 0, count: 1 << 17)
        #expect(read(ends[0], &buffer, buffer.count) == 65_536)
    }
}
