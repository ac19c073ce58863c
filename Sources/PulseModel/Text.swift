/// Small text helpers that Foundation would otherwise provide: the library imports only
/// `FoundationEssentials` (no ICU, no CoreFoundation in the agent's memory; see
/// docs/PERFORMANCE.md, "Footprint").
extension String {
    /// The text without leading and trailing white space (spaces, tabs, newlines).
    package var trimmed: String {
        // Printable ASCII at both ends (most names): nothing to trim, and no walk over
        // characters, which costs a Unicode property lookup each.
        if let head = utf8.first, let tail = utf8.last, (0x21...0x7E).contains(head), (0x21...0x7E).contains(tail) {
            return self
        }
        guard let first = firstIndex(where: { !$0.isWhitespace }),
              let last = lastIndex(where: { !$0.isWhitespace }) else { return "" }
        return String(self[first...last])
    }

    /// The text of `bytes` if they are valid UTF-8, else nil (nothing repaired): the wire's
    /// and the record's strings. ASCII (ids, most names) is checked a word at a time and
    /// made by the specialized decoder; other text goes through `String(validating:as:)`,
    /// whose unspecialized path looked up generic metadata for every string (8 % of a
    /// catch-up's receiving agent in a profile).
    package init?(validUTF8 bytes: UnsafeRawBufferPointer) {
        let count = bytes.count
        var ascii = true, offset = 0
        while offset + 8 <= count {
            if bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self) & 0x8080_8080_8080_8080 != 0 { ascii = false; break }
            offset += 8
        }
        while ascii && offset < count {
            if bytes[offset] & 0x80 != 0 { ascii = false }
            offset += 1
        }
        if ascii {
            self = String(decoding: UnsafeBufferPointer(start: bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), count: count),
                          as: UTF8.self)
        } else {
            guard let text = String(validating: bytes, as: UTF8.self) else { return nil }
            self = text
        }
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

    /// The canonical lower-case text of 16 UUID bytes (8-4-4-4-12 digits), written straight
    /// into the string's own storage. Not generic: a generic walk across modules went
    /// through the sequence's witness table for every byte (half of a delta cursor's
    /// reading). Every id made and every row id or member read from disk comes through here.
    package static func uuidText(_ bytes: UnsafeRawBufferPointer) -> String {
        precondition(bytes.count == 16, "a UUID is 16 bytes")
        return String(unsafeUninitializedCapacity: 36) { text in
            var count = 0
            for index in 0..<16 {
                if index == 4 || index == 6 || index == 8 || index == 10 {
                    text[count] = UInt8(ascii: "-")
                    count += 1
                }
                let byte = bytes[index]
                text[count] = digit(byte >> 4)
                text[count + 1] = digit(byte & 0x0F)
                count += 2
            }
            return count
        }
    }

    /// The 16 bytes of a lower-case canonical UUID's text as two big-endian words, without
    /// an allocation; nil for any other text (upper case, braces, another length).
    package static func uuidWords(_ text: String) -> (UInt64, UInt64)? {
        guard text.utf8.count == 36 else { return nil }
        // Over the string's contiguous bytes, without a copy of the string (which cost a
        // retain and a release) or a branch per character (hex digits of a random id are
        // unpredictable): the index binds one per change (a catch-up profile: 6 %).
        return text.utf8.withContiguousStorageIfAvailable(uuidWords) ?? uuidWords(Array(text.utf8).withUnsafeBufferPointer { $0 })
    }

    private static func uuidWords(_ utf8: UnsafeBufferPointer<UInt8>) -> (UInt64, UInt64)? {
        guard utf8.count == 36, utf8[8] == UInt8(ascii: "-"), utf8[13] == UInt8(ascii: "-"),
              utf8[18] == UInt8(ascii: "-"), utf8[23] == UInt8(ascii: "-") else { return nil }
        var invalid: UInt8 = 0
        @inline(__always) func append(_ range: Range<Int>, to word: inout UInt64) {
            for index in range {
                let c = utf8[index]
                let digit = c &- UInt8(ascii: "0"), letter = c &- UInt8(ascii: "a")
                let isDigit = digit < 10
                invalid |= (isDigit || letter < 6) ? 0 : 1
                word = word << 4 | UInt64(isDigit ? digit : letter &+ 10)
            }
        }
        var high: UInt64 = 0, low: UInt64 = 0
        append(0..<8, to: &high)
        append(9..<13, to: &high)
        append(14..<18, to: &high)
        append(19..<23, to: &low)
        append(24..<36, to: &low)
        return invalid == 0 ? (high, low) : nil
    }

    @inline(__always) private static func digit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") - 10 + nibble
    }

    /// The bytes of an even-length hex string (either case); nil for anything else.
    package static func bytes(_ hex: String) -> [UInt8]? {
        let utf8 = Array(hex.utf8)
        guard utf8.count % 2 == 0 else { return nil }
        func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case 0x30...0x39: c - 0x30
            case 0x41...0x46: c - 0x41 + 10
            case 0x61...0x66: c - 0x61 + 10
            default: nil
            }
        }
        var out: [UInt8] = []
        out.reserveCapacity(utf8.count / 2)
        var index = 0
        while index < utf8.count {
            guard let high = nibble(utf8[index]), let low = nibble(utf8[index + 1]) else { return nil }
            out.append(high << 4 | low)
            index += 2
        }
        return out
    }

    /// Appends the two lower-case hex digits of `byte` (UTF-8) to `out`.
    package static func append(_ byte: UInt8, to out: inout [UInt8]) {
        out.append(digits[Int(byte >> 4)])
        out.append(digits[Int(byte & 0x0F)])
    }
}
