/// Small text helpers that Foundation would otherwise provide: the library imports only
/// `FoundationEssentials` (no ICU, no CoreFoundation in the agent's memory; see
/// docs/PERFORMANCE.md, "Footprint").
extension String {
    /// The text for HTML or XML: `&`, `<`, `>`, `"` and `'` as entities (a name or a translation
    /// is text, never markup). The one escaping of the page's served HTML and the phones'
    /// profiles.
    package var markupEscaped: String {
        var out = ""
        out.reserveCapacity(utf8.count)
        for c in self {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(c)
            }
        }
        return out
    }

    /// The text without leading and trailing white space (spaces, tabs, newlines).
    package var trimmed: String {
        // Printable ASCII at both ends (most names): nothing to trim, and no walk over
        // characters, which costs a Unicode property lookup each.
        if let head = utf8.first, let tail = utf8.last, (0x21...0x7E).contains(head), (0x21...0x7E).contains(tail) {
            return self
        }
        guard let first = firstIndex(where: { !$0.isWhitespace }),
            let last = lastIndex(where: { !$0.isWhitespace })
        else { return "" }
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
            self = String(
                decoding: UnsafeBufferPointer(start: bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), count: count),
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
        let high = UInt64(bigEndian: bytes.loadUnaligned(as: UInt64.self))
        let low = UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
        return String(unsafeUninitializedCapacity: 36) { text in
            writeUUIDText(high, low, to: UnsafeMutableRawPointer(text.baseAddress!))
            return 36
        }
    }

    /// The same text of a UUID's two big-endian words, written to the 36 bytes at `out`:
    /// eight digits at a time (``hex8(_:)``), no branch per digit (a loop over the digits
    /// cost 700 instructions an id, and every id a catch-up writes comes through here).
    package static func writeUUIDText(_ high: UInt64, _ low: UInt64, to out: UnsafeMutableRawPointer) {
        let a = hex8(UInt32(truncatingIfNeeded: high >> 32)), b = hex8(UInt32(truncatingIfNeeded: high))
        let c = hex8(UInt32(truncatingIfNeeded: low >> 32)), d = hex8(UInt32(truncatingIfNeeded: low))
        let dash = UInt8(ascii: "-")
        out.storeBytes(of: a.littleEndian, toByteOffset: 0, as: UInt64.self)
        out.storeBytes(of: dash, toByteOffset: 8, as: UInt8.self)
        out.storeBytes(of: UInt32(truncatingIfNeeded: b).littleEndian, toByteOffset: 9, as: UInt32.self)
        out.storeBytes(of: dash, toByteOffset: 13, as: UInt8.self)
        out.storeBytes(of: UInt32(truncatingIfNeeded: b >> 32).littleEndian, toByteOffset: 14, as: UInt32.self)
        out.storeBytes(of: dash, toByteOffset: 18, as: UInt8.self)
        out.storeBytes(of: UInt32(truncatingIfNeeded: c).littleEndian, toByteOffset: 19, as: UInt32.self)
        out.storeBytes(of: dash, toByteOffset: 23, as: UInt8.self)
        out.storeBytes(of: UInt32(truncatingIfNeeded: c >> 32).littleEndian, toByteOffset: 24, as: UInt32.self)
        out.storeBytes(of: d.littleEndian, toByteOffset: 28, as: UInt64.self)
    }

    /// The eight lowercase hex digits of `value`, the first in the lowest byte: each nibble
    /// spread into a byte of its own, then '0' added, and 'a' - '9' - 1 more where it is 10
    /// or more (a byte's nibble plus 6 carries into its bit 4 exactly then, and into no
    /// other byte).
    @inline(__always) package static func hex8(_ value: UInt32) -> UInt64 {
        var x = UInt64(value)
        x = (x | x << 16) & 0x0000_FFFF_0000_FFFF
        x = (x | x << 8) & 0x00FF_00FF_00FF_00FF
        x = (x | x << 4) & 0x0F0F_0F0F_0F0F_0F0F // the first digit in the highest byte
        let letters = ((x &+ 0x0606_0606_0606_0606) >> 4) & 0x0101_0101_0101_0101
        return (x &+ 0x3030_3030_3030_3030 &+ letters &* 0x27).byteSwapped
    }

    /// The 16 bytes of a lower-case canonical UUID's text as two big-endian words, without
    /// an allocation; nil for any other text (upper case, braces, another length).
    package static func uuidWords(_ text: String) -> (UInt64, UInt64)? {
        guard text.utf8.count == 36 else { return nil }
        // Over the string's contiguous bytes, without a copy of the string (which cost a
        // retain and a release) or a branch per character (hex digits of a random id are
        // unpredictable): the index binds one per change (a catch-up profile: 6 %).
        return text.utf8.withContiguousStorageIfAvailable(uuidWords) ?? Array(text.utf8).withUnsafeBufferPointer(uuidWords)
    }

    /// The same over bytes: the 32 digits eight at a time in one word each (SWAR), with no
    /// branch per character. The digit-by-digit loop cost a write a tenth of its
    /// instructions: three ids parsed per change (the index's row id, the row id's check, the
    /// member), about 1200 instructions each.
    package static func uuidWords(_ utf8: UnsafeBufferPointer<UInt8>) -> (UInt64, UInt64)? {
        guard utf8.count == 36, let base = utf8.baseAddress, utf8[8] == UInt8(ascii: "-"), utf8[13] == UInt8(ascii: "-"),
            utf8[18] == UInt8(ascii: "-"), utf8[23] == UInt8(ascii: "-")
        else { return nil }
        let raw = UnsafeRawPointer(base)
        @inline(__always) func eight(_ offset: Int) -> UInt64 {
            UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
        }
        @inline(__always) func four(_ first: Int, _ second: Int) -> UInt64 {
            UInt64(UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: first, as: UInt32.self)))
                | UInt64(UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: second, as: UInt32.self))) << 32
        }
        let (a, b, c, d) = (digits(eight(0)), digits(four(9, 14)), digits(four(19, 24)), digits(eight(28)))
        guard a.valid && b.valid && c.valid && d.valid else { return nil }
        return (a.value << 32 | b.value, c.value << 32 | d.value)
    }

    /// Eight ASCII hex digits (lower case), the first in the lowest byte of `word`: their
    /// value, and whether every byte is a digit. A byte below 0x80 plus at most 0x80 carries
    /// into no other byte, so each byte's range test is one addition and its top bit.
    @inline(__always) private static func digits(_ word: UInt64) -> (value: UInt64, valid: Bool) {
        let ones: UInt64 = 0x0101_0101_0101_0101, high = ones &* 0x80
        let ascii = word & high == 0
        func within(_ low: UInt8, _ top: UInt8) -> UInt64 { // top bit set where low <= byte <= top
            ~(word &+ ones &* UInt64(0x7F - top)) & (word &+ ones &* UInt64(0x80 - low)) & high
        }
        let valid = ascii && (within(0x30, 0x39) | within(0x61, 0x66)) == high
        // '0'…'9' are 0x30…0x39, 'a'…'f' are 0x61…0x66: the low nibble, plus 9 for a letter.
        var nibbles = (word & (ones &* 0x0F)) &+ ((word >> 6) & ones) &* 9
        nibbles = nibbles.byteSwapped // the first digit in the highest byte
        nibbles = (nibbles | nibbles >> 4) & 0x00FF_00FF_00FF_00FF
        nibbles = (nibbles | nibbles >> 8) & 0x0000_FFFF_0000_FFFF
        nibbles = (nibbles | nibbles >> 16) & 0x0000_0000_FFFF_FFFF
        return (nibbles, valid)
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

extension String {
    /// The name as the household compares names: in any case ("Milk", "MILK" and "milk" are
    /// one name). A shopping item's is kept beside its name by the store, indexed
    /// (`shopping_item.name_key`), so that the rule "never twice on the list" finds the items
    /// of a name without reading the list; the rule folds the names it is given the same way.
    public var nameKey: String { lowercased() }
}
