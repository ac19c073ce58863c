import Foundation
import Synchronization

// The propagation figure's `--trace`: the hops of each write as both agents report them.

/// Hops of one write (`--trace`): (hop, time) as the agents report them.
final class TraceLog: Sendable {
    let events = Mutex<[(String, UInt64)]>([])
    func record(_ hop: String) { let t = now(); events.withLock { $0.append((hop, t)) } }
    func take() -> [(String, UInt64)] {
        events.withLock { events in
            defer { events.removeAll() }
            return events
        }
    }
}

/// Each hop's median, p90 and p99 (µs since the previous hop), and where the slowest 2 % of
/// writes (the p99's neighbourhood) spent their time, on average.
func printHops(_ hops: [String: [Double]], order hopOrder: [String], perWrite: [[String: Double]], latencies: [Double]) {
    FileHandle.standardError.write(Data("· propagation hops (median µs since the previous hop, over \(latencies.count) writes):\n".utf8))
    // The slowest 2 % of writes (the p99's neighbourhood): where their time went, on average.
    let slowest = latencies.indices.sorted { latencies[$0] > latencies[$1] }.prefix(max(1, latencies.count / 50))
    for hop in hopOrder {
        let slow = slowest.map { perWrite[$0][hop] ?? 0 }.reduce(0, +) / Double(slowest.count)
        FileHandle.standardError.write(
            Data(
                String(
                    format: "    %-34@ %7.1f µs  (p90 %.1f, p99 %.1f, the slowest 2 %%'s mean %.1f, seen in %d writes)\n",
                    hop as NSString, percentile(hops[hop]!, 0.5), percentile(hops[hop]!, 0.9), percentile(hops[hop]!, 0.99),
                    slow, hops[hop]!.count
                ).utf8))
    }
}
