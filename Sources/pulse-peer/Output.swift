import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import PeerSync

/// Printing helpers shared by the commands.
enum Output {
    static func json<T: Encodable>(_ value: T) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        print(String(decoding: try encoder.encode(value), as: UTF8.self))
    }

    /// Colour only on a terminal.
    static let colour = isatty(STDOUT_FILENO) == 1 && ProcessInfo.processInfo.environment["NO_COLOR"] == nil

    /// Writes `text` to standard error / output at once (one write(2), unbuffered).
    static func toStderr(_ text: String) { _ = Array(text.utf8).withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) } }
    static func toStdout(_ bytes: [UInt8]) { _ = bytes.withUnsafeBytes { write(STDOUT_FILENO, $0.baseAddress, $0.count) } }

    /// "14:02" in local time.
    static func clock(milliseconds: Int64) -> String {
        var seconds = time_t(milliseconds / 1000)
        var parts = tm()
        localtime_r(&seconds, &parts)
        return (parts.tm_hour < 10 ? "0" : "") + String(parts.tm_hour) + ":" + (parts.tm_min < 10 ? "0" : "") + String(parts.tm_min)
    }

    /// "2026-11-22 14:02" in local time.
    static func dateTime(milliseconds: Int64) -> String {
        var seconds = time_t(milliseconds / 1000)
        var parts = tm()
        localtime_r(&seconds, &parts)
        func two(_ n: Int32) -> String { (n < 10 ? "0" : "") + String(n) }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday)) \(two(parts.tm_hour)):\(two(parts.tm_min))"
    }

    static func orange(_ text: String) -> String { colour ? "\u{1B}[38;5;208m\(text)\u{1B}[0m" : text }
    static func dim(_ text: String) -> String { colour ? "\u{1B}[2m\(text)\u{1B}[0m" : text }
    static func pill(_ text: String) -> String { colour ? "\u{1B}[48;5;252;30m \(text) \u{1B}[0m" : "[\(text)]" }
}

extension HomeOptions {
    /// Runs a read, turning errors into person-readable ones.
    func read<T>(_ body: (Household) throws -> T) throws -> T {
        let household = try openHousehold()
        do { return try body(household) } catch { throw CLIError(error) }
    }
}

extension String {
    /// Padded with spaces on the right to `width` characters.
    func padding(_ width: Int) -> String { self + String(repeating: " ", count: max(0, width - count)) }
}
