import Foundation
import Testing
@testable import PulseModel

/// `Days` does calendar arithmetic without Foundation's calendar (the library links only
/// FoundationEssentials); these tests hold it to Foundation's Gregorian calendar.
@Suite struct DaysTests {
    static var utc: Calendar {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar
    }

    @Test func dayNumbersMatchFoundationOverTwoCenturies() throws {
        let calendar = Self.utc
        var date = calendar.date(from: DateComponents(year: 1900, month: 1, day: 1, hour: 12))!
        let end = calendar.date(from: DateComponents(year: 2100, month: 12, day: 31, hour: 12))!
        while date <= end {
            let parts = calendar.dateComponents([.year, .month, .day, .weekday], from: date)
            let iso = try #require(IsoDate(year: parts.year!, month: parts.month!, day: parts.day!))
            let number = Days.number(iso)
            #expect(number == Days.number(of: date), "\(iso)")
            #expect(Days.civil(number) == iso)
            // Foundation: 1 = Sunday … 7 = Saturday; Days: 1 = Monday … 7 = Sunday.
            #expect(Days.weekday(iso) == (parts.weekday! + 5) % 7 + 1, "\(iso)")
            #expect(Days.epochMilliseconds(iso) == Int64(calendar.startOfDay(for: date).timeIntervalSince1970 * 1000))
            date = calendar.date(byAdding: .day, value: 1, to: date)!
        }
    }

    @Test func addingCrossesMonthsYearsAndLeapDays() {
        func day(_ text: String) -> IsoDate { IsoDate(text)! }
        #expect(Days.adding(1, to: day("2028-02-28")) == day("2028-02-29"))
        #expect(Days.adding(1, to: day("2027-02-28")) == day("2027-03-01"))
        #expect(Days.adding(1, to: day("2026-12-31")) == day("2027-01-01"))
        #expect(Days.adding(-1, to: day("2000-03-01")) == day("2000-02-29"))
        #expect(Days.adding(-1, to: day("1900-03-01")) == day("1900-02-28"))
        #expect(Days.adding(365, to: day("2026-01-01")) == day("2027-01-01"))
    }

    @Test func todayIsTheLocalDateFoundationSees() {
        // Both read the same TZ / /etc/localtime. Checked at several instants, one per
        // hour over two days, so a local midnight falls between two of them.
        let start = Date(timeIntervalSince1970: 1_790_000_000)
        for hour in 0..<48 {
            let instant = start.addingTimeInterval(Double(hour) * 3600)
            let parts = Calendar.current.dateComponents([.year, .month, .day], from: instant)
            #expect(Days.today(instant) == IsoDate(year: parts.year!, month: parts.month!, day: parts.day!))
        }
    }

    @Test func nextMidnightIsWithinADay() {
        let now = Date()
        let seconds = Days.secondsUntilNextMidnight(now)
        #expect(seconds >= 1 && seconds <= 25 * 3600)
        let after = now.addingTimeInterval(seconds)
        #expect(Days.today(after) == Days.adding(1, to: Days.today(now)))
    }

    @Test func textHelpers() {
        #expect(" \t Milk \n".trimmed == "Milk")
        #expect("   ".trimmed == "")
        #expect("a b".trimmed == "a b")
        // The fast path (printable ASCII at both ends) and the ends it must not take for it.
        for (raw, expected) in [
            ("Milk", "Milk"), ("Milk\u{00A0}", "Milk"), ("\u{2003}Milk", "Milk"), ("a\u{0301}", "a\u{0301}"),
            ("Brot\u{3000}", "Brot"), ("~x~", "~x~"), ("x\u{7F}", "x\u{7F}"), ("\u{85}x", "x"), ("é", "é"),
        ] {
            #expect(raw.trimmed == expected, "\(raw.debugDescription)")
        }
        #expect(Hex.string([0x00, 0x0f, 0xa5, 0xff]) == "000fa5ff")
    }

    /// Valid UTF-8 becomes its text, anything else nil (never repaired): ASCII by words and a
    /// tail, other text by the standard library; an invalid byte found in either part.
    @Test(
        arguments: [
            ([], ""), (Array("abcdefg".utf8), "abcdefg"), (Array("abcdefgh".utf8), "abcdefgh"),
            (Array("abcdefgh-ijklmnop-q".utf8), "abcdefgh-ijklmnop-q"), (Array("Käse und Brot 🍞".utf8), "Käse und Brot 🍞"),
            ([0x61, 0x00, 0x62], "a\u{0}b"),
            (Array("abcdefgh".utf8) + [0xFF], nil), // in the tail
            ([0x61, 0x62, 0xFF, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68], nil), // in a word
            ([0xC3], nil), // cut short
            ([0xC0, 0x80], nil), // overlong
            ([0xED, 0xA0, 0x80], nil), // a surrogate
            (Array("abcdefghijklmnop".utf8) + [0xE2, 0x82], nil),
        ] as [([UInt8], String?)])
    func validUTF8(bytes: [UInt8], text: String?) {
        #expect(bytes.withUnsafeBytes { String(validUTF8: $0) } == text, "\(bytes)")
    }

    /// A lowercase canonical UUID and nothing else, as two big-endian words (the change index
    /// and the record store a member or row id so); every character of every group checked.
    @Test(arguments: [
        ("0123abcd-ef45-6789-a0b1-c2d3e4f5a6b7", (0x0123_abcd_ef45_6789, 0xa0b1_c2d3_e4f5_a6b7) as (UInt64, UInt64)?),
        ("ffffffff-ffff-ffff-ffff-ffffffffffff", (UInt64.max, UInt64.max)),
        ("00000000-0000-0000-0000-000000000000", (0, 0)),
        ("0123ABCD-ef45-6789-a0b1-c2d3e4f5a6b7", nil), // upper case
        ("0123abcd-ef45-6789-a0b1-c2d3e4f5a6bg", nil), // past f, last character
        ("g123abcd-ef45-6789-a0b1-c2d3e4f5a6b7", nil), // first character
        ("0123abcd-ef45-67/9-a0b1-c2d3e4f5a6b7", nil), // just below 0
        ("0123abcd-ef45-6789-a0b1-c2d3e4f5a6:7", nil), // just above 9
        ("0123abcd-ef45-6789-a0b1-c2d3e4f5a6`7", nil), // just below a
        ("0123abcdef45-6789-a0b1-c2d3e4f5a6b7-", nil), // dash out of place
        ("0123abcd-ef45-6789-a0b1-c2d3e4f5a6b", nil), // short
        ("{0123abcd-ef45-6789-a0b1-c2d3e4f5a6b}", nil),
        ("0123abcd-ef45-6789-a0b1-c2d3e4f5a6b\u{E9}", nil), // 36 characters, 37 bytes
    ])
    func uuidWords(text: String, words: (UInt64, UInt64)?) {
        let parsed = Hex.uuidWords(text)
        #expect(parsed?.0 == words?.0 && parsed?.1 == words?.1, "\(text)")
        if let parsed { #expect(withUnsafeBytes(of: (parsed.0.bigEndian, parsed.1.bigEndian)) { Hex.uuidText($0) } == text) }
    }

    /// Every byte value at every place of an id, against the digit-by-digit rule: a digit
    /// place takes exactly 0-9 and a-f with their value there, a dash place only the dash.
    @Test func uuidWordsTakeEveryByteAsTheRuleDoes() {
        let valid = Array("0123abcd-ef45-6789-a0b1-c2d3e4f5a6b7".utf8)
        func reference(_ bytes: [UInt8]) -> (UInt64, UInt64)? {
            var words: [UInt64] = [0, 0], digits = 0
            for (place, byte) in bytes.enumerated() {
                if [8, 13, 18, 23].contains(place) {
                    guard byte == UInt8(ascii: "-") else { return nil }
                    continue
                }
                let value: UInt8
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): value = byte - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): value = byte - UInt8(ascii: "a") + 10
                default: return nil
                }
                words[digits / 16] = words[digits / 16] << 4 | UInt64(value)
                digits += 1
            }
            return (words[0], words[1])
        }
        var checked = 0
        for place in valid.indices {
            for byte in 0...255 {
                var bytes = valid
                bytes[place] = UInt8(byte)
                let parsed = bytes.withUnsafeBufferPointer { Hex.uuidWords($0) }, expected = reference(bytes)
                guard parsed?.0 != expected?.0 || parsed?.1 != expected?.1 else { checked += 1; continue }
                Issue.record("byte \(byte) at \(place): \(String(describing: parsed)) instead of \(String(describing: expected))")
            }
        }
        #expect(checked == 36 * 256)
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2000 { // random ids round-trip
            let words = (generator.next() as UInt64, generator.next() as UInt64)
            let text = withUnsafeBytes(of: (words.0.bigEndian, words.1.bigEndian)) { Hex.uuidText($0) }
            let parsed = Hex.uuidWords(text)
            #expect(parsed?.0 == words.0 && parsed?.1 == words.1, "\(text)")
        }
    }
}
