import FoundationEssentials

/// `Authorization: Basic …` read (RFC 7617): the user name and the password, or nil for
/// anything else (another scheme, bytes that are not base64 of UTF-8, no colon, too long).
public struct DAVCredentials: Equatable, Sendable {
    public let user: String
    public let password: String

    /// At most this many bytes of header are read: a user name of 60 characters and a
    /// password of 24 fit many times over.
    public static let maxHeader = 1024

    public init?(header: String) {
        guard header.utf8.count <= Self.maxHeader else { return nil }
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "basic",
            let data = Data(base64Encoded: String(parts[1]).trimming(" \t")),
            let text = String(validating: Array(data), as: UTF8.self),
            let colon = text.firstIndex(of: ":")
        else { return nil }
        let user = String(text[..<colon]), password = String(text[text.index(after: colon)...])
        guard !user.isEmpty, !password.isEmpty,
            !(user + password).unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F })
        else { return nil }
        self.user = user
        self.password = password
    }

    public init(user: String, password: String) {
        self.user = user
        self.password = password
    }
}

/// Wrong passwords counted per client (its IPv4 address, or its IPv6 /64: one home's devices
/// share a prefix, a stranger's addresses too): from the third wrong one in a row, the next
/// must wait 5 s, doubling up to 15 minutes, as the kids' PIN does; a right one clears it.
/// Pure, with the time given: the service holds one behind a lock.
public struct DAVSignInLimiter: Sendable {
    struct Entry: Sendable {
        var failures: Int
        var retryAt: Int64
        var lastSeen: Int64
    }

    public static let firstDelay: Int64 = 5_000
    public static let maxDelay: Int64 = 15 * 60_000
    private(set) var entries: [String: Entry] = [:]
    /// Clients remembered at most: the one seen longest ago is forgotten first.
    let capacity: Int

    public init(capacity: Int = 4096) { self.capacity = capacity }

    /// nil: it may try now; else the milliseconds it must wait.
    public func wait(for address: String, now: Int64) -> Int64? {
        guard let entry = entries[Self.key(address)], entry.retryAt > now else { return nil }
        return entry.retryAt - now
    }

    public mutating func failed(_ address: String, now: Int64) {
        let key = Self.key(address)
        var entry = entries[key] ?? Entry(failures: 0, retryAt: 0, lastSeen: now)
        entry.failures += 1
        entry.lastSeen = now
        if entry.failures >= 3 {
            let doublings = min(entry.failures - 3, 20)
            entry.retryAt = now + min(Self.firstDelay << Int64(doublings), Self.maxDelay)
        }
        entries[key] = entry
        if entries.count > capacity, let oldest = entries.min(by: { $0.value.lastSeen < $1.value.lastSeen })?.key {
            entries[oldest] = nil
        }
    }

    public mutating func succeeded(_ address: String) { entries[Self.key(address)] = nil }

    /// An IPv4 address as it is; an IPv6 one by its first four groups (its /64), expanded.
    static func key(_ address: String) -> String {
        guard address.contains(":") else { return address }
        let bare = address.split(separator: "%", maxSplits: 1).first ?? ""
        let gap = bare.firstRange(of: "::")
        let head = (gap.map { bare[..<$0.lowerBound] } ?? bare).split(separator: ":").map(String.init)
        let tail = gap.map { bare[$0.upperBound...].split(separator: ":").map(String.init) } ?? []
        let groups = head + Array(repeating: "0", count: max(0, 8 - head.count - tail.count)) + tail
        return groups.prefix(4).map { String(Int($0, radix: 16) ?? 0, radix: 16) }.joined(separator: ":") + "::/64"
    }
}
