/// Small text helpers that Foundation would otherwise provide: the library imports only
/// `FoundationEssentials` (no ICU, no CoreFoundation in the agent's memory; see
/// docs/PERFORMANCE.md, "Footprint").
extension String {
    /// The text without leading and trailing white space (spaces, tabs, newlines).
    package var trimmed: String {
        guard let first = firstIndex(where: { !$0.isWhitespace }),
              let last = lastIndex(where: { !$0.isWhitespace }) else { return "" }
        return String(self[first...last])
    }
}

package enum Hex {
    private static let digits: [UInt8] = Array("0123456789abcdef".utf8)

    /// Lower-case hexadecimal, two digits per byte.
    package static func string(_ bytes: some Sequence<UInt8>) -> String {
        var out: [UInt8] = []
        for byte in bytes { append(byte, to: &out) }
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends the two lower-case hex digits of `byte` (UTF-8) to `out`.
    package static func append(_ byte: UInt8, to out: inout [UInt8]) {
        out.append(digits[Int(byte >> 4)])
        out.append(digits[Int(byte & 0x0F)])
    }
}
