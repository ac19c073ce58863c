import Testing
@testable import PulseModel

@Suite struct VarintTests {
    static func decode(_ bytes: [UInt8]) throws(Varint.DecodingError) -> UInt64 {
        var iterator = bytes.makeIterator()
        return try Varint.decode { iterator.next() }
    }

    @Test(arguments: [UInt64(0), 1, 127, 128, 300, 1 << 35, UInt64.max - 1, UInt64.max])
    func roundTrips(_ value: UInt64) throws {
        var bytes: [UInt8] = []
        Varint.append(value, to: &bytes)
        #expect(bytes.count == max(1, (64 - value.leadingZeroBitCount + 6) / 7))
        #expect(try Self.decode(bytes) == value)
    }

    @Test func refusesTruncatedAndOverlongIntegers() {
        #expect(throws: Varint.DecodingError.truncated) { try Self.decode([]) }
        #expect(throws: Varint.DecodingError.truncated) { try Self.decode([0x80, 0x80]) }
        // UInt64.max is nine 0xFF then 0x01; a tenth byte of 2 would need 65 bits.
        #expect(throws: Varint.DecodingError.overflow) { try Self.decode(Array(repeating: 0xFF, count: 9) + [0x02]) }
        #expect(throws: Varint.DecodingError.overflow) { try Self.decode(Array(repeating: 0xFF, count: 10) + [0x01]) }
        #expect(throws: Varint.DecodingError.overflow) { try Self.decode(Array(repeating: 0x80, count: 12) + [0x00]) }
    }
}
