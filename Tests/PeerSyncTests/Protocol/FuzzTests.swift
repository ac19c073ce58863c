import Foundation
import NIOCore
import NIOEmbedded
import Testing
@testable import PulseModel
@testable import PulseProtocol

/// A seeded mutation fuzzer for the frame decoder, the message parser and the change
/// validation: valid frames of every message type are mutated (bit flips, boundary bytes,
/// truncation, extension, duplicated and spliced slices) and fed to the decoder. Every input
/// must either decode or throw ``WireError`` — never crash, hang or allocate by a length it
/// was told — and whatever decodes must re-encode to bytes that decode to the same message.
///
/// CI runs a bounded number of inputs (`PULSE_FUZZ_ITERATIONS`, default 100 000, at most
/// 20 s); by hand: `PULSE_FUZZ_ITERATIONS=5000000 PULSE_FUZZ_SEED=… swift test --filter FuzzTests`.
/// Results are recorded in docs/SECURITY.md.
@Suite struct FuzzTests {
    static var seeds: [[UInt8]] {
        WireCodecTests.messages.map { message in
            var payload = ByteBuffer()
            WireCodec.encode(message, into: &payload)
            return Array(payload.readableBytesView)
        }
    }

    static func mutate(_ input: [UInt8], with other: [UInt8], _ random: inout SeededGenerator) -> [UInt8] {
        var bytes = input
        for _ in 0...Int.random(in: 0...3, using: &random) {
            switch Int.random(in: 0..<8, using: &random) {
            case 0 where !bytes.isEmpty: // flip a bit
                let i = Int.random(in: bytes.indices, using: &random)
                bytes[i] ^= 1 << UInt8.random(in: 0...7, using: &random)
            case 1 where !bytes.isEmpty: // a boundary byte
                bytes[Int.random(in: bytes.indices, using: &random)] = [0x00, 0x01, 0x7F, 0x80, 0xFF, 0x0A].randomElement(using: &random)!
            case 2 where !bytes.isEmpty: // truncate
                bytes.removeLast(Int.random(in: 1...bytes.count, using: &random))
            case 3: // extend with random bytes
                bytes += (0..<Int.random(in: 1...16, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
            case 4 where bytes.count > 2: // duplicate a slice in place
                let a = Int.random(in: 0..<bytes.count, using: &random), b = Int.random(in: a..<bytes.count, using: &random)
                bytes.insert(contentsOf: bytes[a...b], at: Int.random(in: 0...bytes.count, using: &random))
            case 5 where !other.isEmpty: // splice in another message's tail
                let cut = Int.random(in: 0...bytes.count, using: &random), from = Int.random(in: 0..<other.count, using: &random)
                bytes = Array(bytes[..<cut]) + other[from...]
            case 6 where bytes.count > 1: // a large varint where a count goes
                let i = Int.random(in: 1..<bytes.count, using: &random)
                bytes.replaceSubrange(i..<i + 1, with: [0xFF, 0xFF, 0xFF, 0xFF, 0x0F])
            default: // a random message type
                if !bytes.isEmpty { bytes[0] = UInt8.random(in: 0...15, using: &random) }
            }
        }
        return bytes
    }

    @Test func mutatedFramesNeverCrashTheDecoder() throws {
        let environment = ProcessInfo.processInfo.environment
        let iterations = environment["PULSE_FUZZ_ITERATIONS"].flatMap(Int.init) ?? 100_000
        let seed = environment["PULSE_FUZZ_SEED"].flatMap(UInt64.init) ?? 0x5EED_F00D
        let budget = Date().addingTimeInterval(environment["PULSE_FUZZ_ITERATIONS"] == nil ? 20 : .infinity)
        var random = SeededGenerator(seed: seed)
        let seeds = Self.seeds
        var decoded = 0, refused = 0, tried = 0
        var codes: [ProtocolErrorCode: Int] = [:]
        while tried < iterations && Date() < budget {
            tried += 1
            let input = Self.mutate(seeds.randomElement(using: &random)!, with: seeds.randomElement(using: &random)!, &random)
            var payload = ByteBuffer(bytes: input)
            do {
                let message = try WireCodec.decode(&payload)
                decoded += 1
                // Re-encoding what decoded gives bytes that decode to the same message.
                var again = ByteBuffer()
                WireCodec.encode(message, into: &again)
                #expect(try WireCodec.decode(&again) == message, "input \(input)")
                // The change parser's rules run on whatever a batch carried.
                if case let .batch(batch) = message {
                    for change in batch.changes { _ = try? change.entity.schema.validate(change) }
                }
            } catch {
                refused += 1
                codes[error.code, default: 0] += 1
            }
        }
        // The framing layer too: the same inputs behind a length, through the decoder, in pieces.
        for _ in 0..<min(tried, 2_000) {
            let input = Self.mutate(seeds.randomElement(using: &random)!, with: [], &random)
            var framed = ByteBuffer()
            framed.writeInteger(UInt32(truncatingIfNeeded: Int.random(in: 0...1, using: &random) == 0 ? input.count : Int.random(in: 0...600, using: &random)))
            framed.writeBytes(input)
            let channel = EmbeddedChannel(handler: ByteToMessageHandler(PeerFrameDecoder(limit: FrameLimit())))
            while framed.readableBytes > 0 {
                let piece = framed.readSlice(length: min(framed.readableBytes, Int.random(in: 1...64, using: &random)))!
                do { try channel.writeInbound(piece) } catch { break }
            }
            _ = try? channel.finish()
        }
        print(
            "fuzz: \(tried) inputs (seed \(seed)): \(decoded) decoded, \(refused) refused "
                + "(\(codes.map { "code \($0.key.rawValue): \($0.value)" }.sorted().joined(separator: ", "))), no crash")
        #expect(tried >= min(iterations, 1_000))
        #expect(decoded > 0 && refused > 0, "the mutations reach both outcomes")
    }
}
