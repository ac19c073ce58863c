import Foundation
import Testing
@testable import PulseCalendar

/// A seeded mutation fuzzer for the iCalendar reader (issue 59: a fuzz run of at least 10 000
/// inputs in the suite). Objects as clients write them are mutated (bytes flipped, control
/// and quote characters, folds and line ends put anywhere, slices duplicated and spliced,
/// nesting added, truncation) and read. Every input must either read or throw ``ICalError``,
/// never crash; whatever reads must be written back to text that reads as the same object.
///
/// CI runs `PULSE_ICAL_FUZZ_ITERATIONS` inputs (default 20 000, at most 20 s; fewer than
/// 10 000 fails); by hand: `PULSE_ICAL_FUZZ_ITERATIONS=1000000 PULSE_FUZZ_SEED=… swift test
/// --filter ICalendarFuzzTests`. Results are recorded in docs/SECURITY.md.
@Suite struct ICalendarFuzzTests {
    static let seeds: [[UInt8]] = [
        Array(ICalendarTests.reminders.utf8),
        Array(ICalendarTests.plain.utf8),
        Array(
            ICalendar.serialize(
                ICalComponent(
                    "VCALENDAR", properties: [ICalProperty("VERSION", "2.0"), ICalProperty("PRODID", "-//House Pulse//EN")],
                    components: [
                        ICalComponent(
                            "VTODO",
                            properties: [
                                ICalProperty("UID", "0193a1b2-7c3d-7e4f-8a9b-0c1d2e3f4a5b"),
                                ICalProperty("SUMMARY", text: "Hoover the stairs, and the landing"),
                                ICalProperty("DUE", "20261207", parameters: [ICalParameter("VALUE", ["DATE"])]),
                                ICalProperty("STATUS", "COMPLETED"), ICalProperty("COMPLETED", "20261205T101010Z"),
                                ICalProperty("RRULE", "FREQ=WEEKLY;BYDAY=SA"),
                                ICalProperty("CATEGORIES", "Home,Weekly"),
                            ])
                    ])
            ).utf8),
    ]

    static let pieces: [[UInt8]] = [
        [13, 10], [10], [13], [13, 10, 32], [13, 10, 9], [0], [0x7F], [0xFF], [0xC5], [0xE2, 0x82],
        Array("\"".utf8), Array(";".utf8), Array(":".utf8), Array(",".utf8), Array("=".utf8), Array("\\".utf8),
        Array("BEGIN:VTODO\r\n".utf8), Array("END:VTODO\r\n".utf8), Array("BEGIN:VCALENDAR\r\n".utf8),
        Array("END:VCALENDAR\r\n".utf8), Array("X-A;P=\"q:;,\":v\r\n".utf8), Array("DUE;VALUE=DATE:2026".utf8),
    ]

    static func mutate(_ input: [UInt8], with other: [UInt8], _ random: inout SeededGenerator) -> [UInt8] {
        var bytes = input
        for _ in 0...Int.random(in: 0...3, using: &random) {
            let at = Int.random(in: 0...bytes.count, using: &random)
            switch Int.random(in: 0..<8, using: &random) {
            case 0 where !bytes.isEmpty: // flip a bit
                let i = Int.random(in: bytes.indices, using: &random)
                bytes[i] ^= 1 << UInt8.random(in: 0...7, using: &random)
            case 1: // a piece of the grammar, or a byte that breaks it
                bytes.insert(contentsOf: pieces.randomElement(using: &random)!, at: at)
            case 2 where !bytes.isEmpty: // truncate
                bytes.removeLast(Int.random(in: 1...bytes.count, using: &random))
            case 3 where !bytes.isEmpty: // delete a slice
                let end = Int.random(in: at...min(bytes.count, at + 40), using: &random)
                bytes.removeSubrange(at..<end)
            case 4 where bytes.count > 2: // duplicate a slice in place
                let a = Int.random(in: 0..<bytes.count, using: &random), b = Int.random(in: a..<bytes.count, using: &random)
                bytes.insert(contentsOf: bytes[a...b], at: at)
            case 5 where !other.isEmpty: // splice in another object's tail
                let from = Int.random(in: 0..<other.count, using: &random)
                bytes = Array(bytes[..<at]) + other[from...]
            case 6: // nesting, deeper than allowed sometimes
                let depth = Int.random(in: 1...6, using: &random)
                bytes.insert(
                    contentsOf: Array((String(repeating: "BEGIN:X\r\n", count: depth) + String(repeating: "END:X\r\n", count: depth)).utf8),
                    at: at)
            default: // random bytes
                bytes.insert(contentsOf: (0..<Int.random(in: 1...8, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }, at: at)
            }
        }
        return bytes
    }

    @Test func mutatedObjectsAreReadOrRefusedNeverCrashAndWhatReadsWritesBackTheSame() throws {
        let environment = ProcessInfo.processInfo.environment
        let iterations = environment["PULSE_ICAL_FUZZ_ITERATIONS"].flatMap(Int.init) ?? 20_000
        let seed = environment["PULSE_FUZZ_SEED"].flatMap(UInt64.init) ?? 0x1CA1_F00D
        let budget = Date().addingTimeInterval(environment["PULSE_ICAL_FUZZ_ITERATIONS"] == nil ? 20 : .infinity)
        var random = SeededGenerator(seed: seed)
        var read = 0, tried = 0
        var codes: [ICalError.Code: Int] = [:]
        while tried < iterations && Date() < budget {
            tried += 1
            let input = Self.mutate(Self.seeds.randomElement(using: &random)!, with: Self.seeds.randomElement(using: &random)!, &random)
            do {
                let calendar = try ICalendar.parse(input)
                read += 1
                let text = ICalendar.serialize(calendar)
                #expect(try ICalendar.parse(Array(text.utf8)) == calendar, "input \(input)")
                #expect(ICalendar.serialize(try ICalendar.parse(Array(text.utf8))) == text)
            } catch {
                codes[error.code, default: 0] += 1
            }
        }
        #expect(tried >= 10_000, "only \(tried) inputs within the time given")
        // The mutations reach both sides: some objects still read, and refusals of many kinds.
        #expect(read > tried / 20, "read \(read) of \(tried)")
        #expect(codes.count >= 5, "refusals: \(codes)")
        print("iCalendar fuzz: \(tried) inputs (seed \(seed)): \(read) read, refused \(codes.map { "\($0.key.rawValue) \($0.value)" }.sorted())")
    }
}
