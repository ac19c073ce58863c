/// Unsigned LEB128 integers, the one codec for the wire protocol and the store's row
/// records: 7 bits per byte, low groups first, the high bit set on every byte but the
/// last. A value of 64 bits takes at most 10 bytes; a tenth byte may carry only the top
/// bit, so anything longer or larger is refused rather than silently truncated.
public enum Varint {
    public enum DecodingError: Error, Equatable, CustomStringConvertible {
        /// The bytes ended inside an integer.
        case truncated
        /// The integer does not fit in 64 bits.
        case overflow

        public var description: String {
            switch self {
            case .truncated: "truncated integer"
            case .overflow: "integer overflows 64 bits"
            }
        }
    }

    /// Emits the bytes of `value`, in order.
    @inlinable
    public static func encode(_ value: UInt64, _ emit: (UInt8) -> Void) {
        var value = value
        while value >= 0x80 {
            emit(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        emit(UInt8(value))
    }

    @inlinable
    public static func append(_ value: UInt64, to out: inout [UInt8]) {
        encode(value) { out.append($0) }
    }

    /// Reads one integer from `next`, which returns the following byte, or nil at the end.
    @inlinable
    public static func decode(_ next: () -> UInt8?) throws(DecodingError) -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard let byte = next() else { throw .truncated }
            if shift == 63 && byte > 1 { throw .overflow }
            result |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return result }
            shift += 7
        }
    }
}
