import NIOCore
import NIOPosix
#if canImport(Glibc)
import Glibc
#endif

/// A descriptor the kernel makes readable when something happens (an inotify watch, the
/// change notice pipe), read on the event loops: an idle agent sleeps in epoll instead of a
/// timer. Each read holds whatever arrived together.
enum DescriptorChannel {
    /// Takes ownership of `descriptor` (closed here if the bootstrap fails, else with the
    /// channel).
    static func reading(_ descriptor: CInt) async throws -> NIOAsyncChannel<ByteBuffer, Never> {
        do {
            return try await NIOPipeBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .takingOwnershipOfDescriptor(input: descriptor) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try NIOAsyncChannel<ByteBuffer, Never>(wrappingChannelSynchronously: channel)
                    }
                }
        } catch {
            close(descriptor) // still ours when the bootstrap failed
            throw error
        }
    }
}
