import Logging
import NIOCore
#if canImport(Glibc)
import Glibc
#endif

/// Watches the database file without a timer: the kernel (inotify) wakes the agent when the
/// file or its directory changes — deleted, moved, replaced, truncated, written — and only
/// then is the file checked (one `stat`, see ``PulseStore/DatabaseFile``). An idle agent
/// sleeps; a one-second poll remains only where inotify is unavailable.
///
/// Events watched: on the file, attribute changes (its link count drops when it is deleted
/// while open), writes and truncation, and its own move or deletion; on its directory,
/// names created, moved in or out, or deleted (another file renamed onto the path), and the
/// directory's own move or deletion.
enum DatabaseWatch {
    /// Runs `check` once the watch is in place, then after every change the kernel reports;
    /// returns when the task is cancelled, and throws what `check` throws.
    static func run(path: String, logger: Logger, check: @escaping @Sendable () throws -> Void) async throws {
        guard let descriptor = inotifyDescriptor(path) else {
            logger.notice("no inotify: checking the database file every second")
            while true {
                try check()
                try await LoopTimer.sleep(for: .seconds(1))
            }
        }
        let channel = try await DescriptorChannel.reading(descriptor)
        try await channel.executeThenClose { events, _ in
            // After the watch is in place: a change made before it is seen here.
            try check()
            // Each read holds one or more events (the kernel merges repeats): one check each.
            for try await _ in events { try check() }
        }
    }

    /// An inotify descriptor watching `path` and its directory, or nil when the kernel
    /// refuses (no inotify, or the per-user limit reached).
    private static func inotifyDescriptor(_ path: String) -> CInt? {
        let descriptor = inotify_init1(CInt(IN_NONBLOCK | IN_CLOEXEC))
        guard descriptor >= 0 else { return nil }
        let directory = path.lastIndex(of: "/").map { String(path[..<$0]) }.flatMap { $0.isEmpty ? "/" : $0 } ?? "."
        let fileEvents = UInt32(IN_ATTRIB | IN_MODIFY | IN_MOVE_SELF | IN_DELETE_SELF)
        let directoryEvents = UInt32(IN_CREATE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_MOVE_SELF | IN_DELETE_SELF)
        guard inotify_add_watch(descriptor, path, fileEvents) >= 0,
            inotify_add_watch(descriptor, directory, directoryEvents) >= 0
        else {
            close(descriptor)
            return nil
        }
        return descriptor
    }
}
