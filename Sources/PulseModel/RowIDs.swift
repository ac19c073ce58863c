#if canImport(Glibc)
import Glibc
#endif

/// Row ids (new ones and the rule every id follows) and calendar dates: the values of the
/// schema's `reference` and `date` fields.
public enum RowIDRules {
    /// A fresh id for a new row: a version 7 UUID (RFC 9562 §5.7) in lowercase — the Unix
    /// time in milliseconds, then the fraction of the millisecond in 12 bits (§6.2, method
    /// 3), then 62 random bits from the system's CSPRNG. Ids made later sort later, so a
    /// machine's new rows, and a peer's catch-up of them, land at the right edge of the
    /// table's B-tree instead of on random pages (fewer pages written per commit, fuller
    /// pages). The time it reveals is the row's creation, which its stamps carry anyway;
    /// the household's own id, which is not a row, uses ``random()``.
    public static func newRowID() -> String {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        var generator = SystemRandomNumberGenerator()
        return timeOrdered(
            unixNanoseconds: UInt64(max(0, time.tv_sec)) &* 1_000_000_000 &+ UInt64(max(0, time.tv_nsec)),
            random: generator.next())
    }

    /// The version 7 UUID of ``newRowID()`` for a given time and random bits (pure, for tests).
    public static func timeOrdered(unixNanoseconds: UInt64, random: UInt64) -> String {
        let milliseconds = unixNanoseconds / 1_000_000
        let fraction = (unixNanoseconds % 1_000_000) * 4096 / 1_000_000 // 0..<4096
        var bytes = [UInt8](repeating: 0, count: 16)
        for index in 0..<6 { bytes[index] = UInt8(truncatingIfNeeded: milliseconds >> (8 * (5 - index))) }
        bytes[6] = 0x70 | UInt8(fraction >> 8)
        bytes[7] = UInt8(truncatingIfNeeded: fraction)
        for index in 8..<16 { bytes[index] = UInt8(truncatingIfNeeded: random >> (8 * (15 - index))) }
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        return bytes.withUnsafeBytes { Hex.uuidText($0) }
    }

    /// A fresh random id: a version 4 UUID in lowercase, from the system's CSPRNG
    /// (`getrandom`), without Foundation's `UUID()`, which opens /dev/urandom each time.
    public static func random() -> String {
        var generator = SystemRandomNumberGenerator()
        var bytes = withUnsafeBytes(of: (generator.next() as UInt64, generator.next() as UInt64)) { Array($0) }
        bytes[6] = (bytes[6] & 0x0F) | 0x40
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        return bytes.withUnsafeBytes { Hex.uuidText($0) }
    }

    /// The same of an id as a change holds it: a UUID's is valid by its form.
    package static func isValid(_ id: TextID) -> Bool {
        switch id {
        case .uuid: true
        case let .text(text): isValid(text)
        }
    }

    public static func isValid(_ id: String) -> Bool {
        let utf8 = id.utf8
        // A lowercase UUID (every id this program makes): its digits and hyphens are id
        // bytes, and ``Hex/uuidWords(_:)`` reads them eight at a time.
        if utf8.count == 36, Hex.uuidWords(id) != nil { return true }
        guard (1...Limits.maxRowIDLength).contains(utf8.count) else { return false }
        // Over the contiguous bytes of a native string (the generic view walked 7 % of a write).
        return utf8.withContiguousStorageIfAvailable { $0.allSatisfy(isIDByte) } ?? utf8.allSatisfy(isIDByte)
    }

    /// `0-9 A-Z a-z _ - . : @` as bits of the byte's value (no byte ≥ 128 is one): one
    /// shift and test per byte, no branch per range.
    private static let idBytesLow: UInt64 = 0x07FF_6000_0000_0000 // - . 0-9 :
    private static let idBytesHigh: UInt64 = 0x07FF_FFFE_87FF_FFFF // @ A-Z _ a-z

    @inline(__always) static func isIDByte(_ c: UInt8) -> Bool {
        let bits = c < 64 ? idBytesLow : (c < 128 ? idBytesHigh : 0)
        return (bits >> (c & 63)) & 1 == 1
    }
}

/// A calendar date `YYYY-MM-DD` (proleptic Gregorian), validated without Foundation.
public struct IsoDate: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let year: Int, month: Int, day: Int

    public init?(_ text: String) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
            parts.allSatisfy({ $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }),
            let y = Int(parts[0]), let m = Int(parts[1]), let d = Int(parts[2])
        else { return nil }
        self.init(year: y, month: m, day: d)
    }

    public init?(year: Int, month: Int, day: Int) {
        guard (1...9999).contains(year), (1...12).contains(month),
            (1...IsoDate.daysIn(year: year, month: month)).contains(day)
        else { return nil }
        self.year = year
        self.month = month
        self.day = day
    }

    public static func daysIn(year: Int, month: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    public var description: String {
        func pad(_ v: Int, _ n: Int) -> String { String(repeating: "0", count: max(0, n - String(v).count)) + String(v) }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))"
    }

    public static func < (lhs: Self, rhs: Self) -> Bool {
        (lhs.year, lhs.month, lhs.day) < (rhs.year, rhs.month, rhs.day)
    }
}
