// The agents the bench starts as processes, and what it reads of them in /proc.
import Foundation
import PeerSync

/// Drops the agent binary's pages that no process maps from the page cache, so that an agent
/// started next reads it as after a reboot: how much of a binary a process maps depends on how
/// the file was last written or read (large folios), by more than 1 MB (docs/PERFORMANCE.md,
/// "Idle RSS depends on the page cache"). Before each agent whose memory is a figure.
func evictBinary() {
    let fd = open(binary, O_RDONLY)
    guard fd >= 0 else { return }
    _ = posix_fadvise(fd, 0, 0, Int32(POSIX_FADV_DONTNEED))
    close(fd)
}

/// A `pulse-peer run` process.
final class AgentRun {
    let process = Process()
    let port: Int
    init(_ home: HouseholdHome, peers: [Int] = [], mdns: Bool = false) throws {
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments =
            ["run", "--home", home.path, "--port", "0", "--log-level", "error"]
            + (mdns ? [] : ["--listen", "127.0.0.1", "--no-mdns"]) + peers.flatMap { ["--peer", "127.0.0.1:\($0)"] }
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = out.fileHandleForReading.availableData
            guard !chunk.isEmpty else { throw HouseholdError.io("agent did not start") }
            line.append(chunk)
        }
        let json = try JSONSerialization.jsonObject(with: line.prefix(while: { $0 != UInt8(ascii: "\n") })) as! [String: Any]
        port = json["port"] as! Int
    }
    func stop() { process.terminate(); process.waitUntilExit() }
    /// VmRSS and VmHWM (peak), in MB.
    var memory: (rss: Double, peak: Double) {
        let status = (try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8)) ?? ""
        func field(_ name: String) -> Double {
            let line = status.split(separator: "\n").first { $0.hasPrefix(name) } ?? ""
            return (Double(line.split(separator: " ").dropFirst().first ?? "0") ?? 0) / 1024
        }
        return (field("VmRSS:"), field("VmHWM:"))
    }
    /// RSS, PSS and the private (clean + dirty) memory, in MB, from smaps_rollup.
    var footprint: (rss: Double, pss: Double, privateClean: Double, privateDirty: Double) {
        let rollup = (try? String(contentsOfFile: "/proc/\(process.processIdentifier)/smaps_rollup", encoding: .utf8)) ?? ""
        func field(_ name: String) -> Double {
            let line = rollup.split(separator: "\n").first { $0.hasPrefix(name) } ?? ""
            return (Double(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "0") ?? 0) / 1024
        }
        return (field("Rss:"), field("Pss:"), field("Private_Clean:"), field("Private_Dirty:"))
    }
    /// Context switches of each of its threads so far, by thread id (each wake-up of a
    /// sleeping thread is one).
    var contextSwitches: [String: Int] { threadSwitches(process.processIdentifier) }
}

/// Context switches of each thread of process `pid` so far, by thread id.
func threadSwitches(_ pid: Int32) -> [String: Int] {
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
    var counts: [String: Int] = [:]
    for task in tasks {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/status", encoding: .utf8)) ?? ""
        counts[task] = status.split(separator: "\n").filter { $0.contains("ctxt_switches:") }
            .reduce(0) { $0 + (Int($1.split(separator: "\t").last ?? "0") ?? 0) }
    }
    return counts
}

/// The wake-ups' baseline: this program started again as a Swift program that runs one task
/// on the runtime's pool of threads, then only awaits (`--await-only`, main.swift): what any
/// Swift program on Linux does at rest. libdispatch watches its pool once a second from its
/// first worker on, for as long as the process lives (`_dispatch_workq_monitor_pools`,
/// src/event/workqueue.c of swift-corelibs-libdispatch).
final class AwaitingProgram {
    let process = Process()
    init() throws {
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        process.arguments = ["--await-only"]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        _ = out.fileHandleForReading.availableData // its line: the task has run
    }
    var contextSwitches: [String: Int] { threadSwitches(process.processIdentifier) }
    func stop() { process.terminate(); process.waitUntilExit() }
}

/// Context switches between two readings of ``AgentRun/contextSwitches``: of the threads
/// alive at the second (one that started meanwhile counts whole; one that ended, not at all).
func switches(from before: [String: Int], to after: [String: Int]) -> Int {
    after.reduce(0) { $0 + $1.value - (before[$1.key] ?? 0) }
}
