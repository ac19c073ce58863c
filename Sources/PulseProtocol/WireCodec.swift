import NIOCore
import PulseModel

/// Why bytes could not be decoded into a message.
public struct WireError: Error, Equatable, CustomStringConvertible {
    public let description: String
    /// The ERROR code a receiver answers with: 1 (malformed), or 5 (rejected batch) for
    /// a well-formed batch whose content this receiver refuses (an unknown entity).
    public let code: ProtocolErrorCode
    package init(_ description: String, code: ProtocolErrorCode = .malformed) {
        self.description = description
        self.code = code
    }
}

/// Encodes and decodes message payloads (the bytes after the frame's length).
/// Integers: unsigned LEB128 varints, zigzag for signed values, fixed big-endian where
/// the layout says so. Strings: varint byte count, then UTF-8.
public enum WireCodec {
    public static func encode(_ message: PeerMessage, into buffer: inout ByteBuffer) {
        buffer.writeInteger(message.typeCode)
        switch message {
        case let .hello(hello):
            buffer.writeInteger(hello.version)
            buffer.writeInteger(hello.replica.rawValue)
            buffer.writeBytes(hello.proof)
            if hello.version >= 2 { buffer.writeInteger(UInt64(bitPattern: hello.clock ?? 0)) }
            if hello.version >= 9, let release = hello.release { buffer.writeWireString(release) }
        case let .vector(heads):
            buffer.writeHeads(heads)
        case let .caughtUp(vector), let .ack(vector):
            buffer.writeVector(vector)
        case let .batch(batch):
            buffer.writeVarint(UInt64(batch.coverage.count))
            for claim in batch.coverage {
                buffer.writeInteger(claim.origin.rawValue)
                buffer.writeVarint(claim.after)
                buffer.writeVarint(claim.upTo)
                buffer.writeInteger(claim.afterCheck)
            }
            buffer.writeVarint(UInt64(batch.changeCount))
            for index in batch.changes.indices { buffer.writeChange(batch.changes[index]) }
            for index in batch.kept.indices { buffer.writeChange(batch.kept[index]) }
            buffer.writeVarint(UInt64(batch.stubs.count))
            for stub in batch.stubs {
                buffer.writeInteger(stub.origin.rawValue)
                buffer.writeVarint(stub.seq)
                buffer.writeInteger(stub.hlc)
            }
        case let .history(stamps):
            buffer.writeInteger(stamps.origin.rawValue)
            buffer.writeVarint(stamps.from)
            buffer.writeVarint(stamps.upTo)
            buffer.writeVarint(UInt64(stamps.hlcs.count))
            for hlc in stamps.hlcs { buffer.writeInteger(hlc) }
        case let .ping(token), let .pong(token):
            buffer.writeInteger(token)
        case let .error(code, reason):
            buffer.writeInteger(code.rawValue)
            buffer.writeWireString(String(decoding: reason.utf8.prefix(1024), as: UTF8.self))
        case let .pairStart(start):
            buffer.writeInteger(start.version)
            buffer.writeBytes(start.message)
            buffer.writeWireString(start.name)
        case let .pairReply(message, confirmation):
            buffer.writeBytes(message)
            buffer.writeBytes(confirmation)
        case let .pairConfirm(confirmation):
            buffer.writeBytes(confirmation)
        case let .pairWelcome(welcome):
            buffer.writeWireString(welcome.householdID)
            buffer.writeWireString(welcome.householdName)
            buffer.writeBytes(welcome.secret)
            buffer.writeBytes(welcome.discoveryKey)
            if let member = welcome.memberID {
                buffer.writeInteger(UInt8(1))
                buffer.writeWireString(member)
            } else {
                buffer.writeInteger(UInt8(0))
            }
            buffer.writeWireString(welcome.inviterName)
        }
    }

    /// Decodes one whole payload; bytes left over are an error.
    public static func decode(_ buffer: inout ByteBuffer) throws(WireError) -> PeerMessage {
        let type: UInt8 = try buffer.readFixed()
        let message: PeerMessage
        switch type {
        case 1:
            let version: UInt16 = try buffer.readFixed()
            let replica: UInt64 = try buffer.readFixed()
            guard let proof = buffer.readBytes(length: WireLimits.proofBytes) else { throw WireError("truncated hello") }
            var clock: Int64?
            var release: String?
            // Versions 2–9 share one layout (docs/PROTOCOL.md §7); 9 adds trailing data: the
            // release, then whatever a later release adds (ignored).
            if (2...PeerMessage.Hello.currentVersion).contains(version) {
                clock = Int64(bitPattern: try buffer.readFixed() as UInt64)
                if version >= 9, buffer.readableBytes > 0 {
                    release = (try? buffer.readWireString()).flatMap(PeerMessage.Hello.validRelease)
                    buffer.moveReaderIndex(forwardBy: buffer.readableBytes)
                }
            } else if version > PeerMessage.Hello.currentVersion {
                // A later version's layout is unknown: keep what is common, so the state
                // machine can answer ERROR 2 (unsupported version) instead of "malformed".
                buffer.moveReaderIndex(forwardBy: buffer.readableBytes)
            }
            message = .hello(.init(version: version, replica: ReplicaID(rawValue: replica), proof: proof, clock: clock, release: release))
            if replica == 0 { throw WireError("a HELLO's replica id is 0") }
        case 2: message = .vector(try buffer.readHeads())
        case 3:
            let coverageCount = try buffer.readCount(max: WireLimits.maxCoveragePerBatch, what: "coverage claims")
            var coverage: [Coverage] = []
            coverage.reserveCapacity(coverageCount)
            for _ in 0..<coverageCount {
                let origin: UInt64 = try buffer.readFixed()
                let after = try buffer.readVarint(), upTo = try buffer.readVarint()
                let check: UInt32 = try buffer.readFixed()
                guard origin != 0, upTo > after else { throw WireError("invalid coverage claim") }
                coverage.append(Coverage(origin: ReplicaID(rawValue: origin), after: after, upTo: upTo, afterCheck: check))
            }
            let changeCount = try buffer.readCount(max: WireLimits.maxChangesPerBatch, what: "changes")
            var changes: [Change] = []
            var kept: [KeptChange] = []
            changes.reserveCapacity(changeCount)
            try buffer.readChanges(changeCount, into: &changes, kept: &kept)
            let stubCount = try buffer.readCount(max: WireLimits.maxStubsPerBatch, what: "stubs")
            var stubs: [ChangeStub] = []
            stubs.reserveCapacity(stubCount)
            for _ in 0..<stubCount {
                let origin: UInt64 = try buffer.readFixed()
                let seq = try buffer.readVarint()
                let hlc: UInt64 = try buffer.readFixed()
                guard origin != 0, seq > 0, hlc > 0, hlc <= UInt64(Int64.max) else { throw WireError("invalid stub") }
                stubs.append(ChangeStub(origin: ReplicaID(rawValue: origin), seq: seq, hlc: hlc))
            }
            message = .batch(DeltaBatch(changes: changes, coverage: coverage, kept: kept, stubs: stubs))
        case 4: message = .caughtUp(try buffer.readVector())
        case 5: message = .ack(try buffer.readVector())
        case 6: message = .ping(try buffer.readFixed())
        case 7: message = .pong(try buffer.readFixed())
        case 8:
            let raw: UInt16 = try buffer.readFixed()
            message = .error(ProtocolErrorCode(rawValue: raw) ?? .unknown, try buffer.readWireString())
        case 9:
            let origin: UInt64 = try buffer.readFixed()
            let from = try buffer.readVarint(), upTo = try buffer.readVarint()
            let count = try buffer.readCount(max: WireLimits.maxStampsPerHistory, what: "history stamps")
            guard origin != 0, from > 0, count > 0, from <= upTo, UInt64(count) <= upTo - from + 1 else {
                throw WireError("invalid history stamps")
            }
            var hlcs: [UInt64] = []
            hlcs.reserveCapacity(count)
            for _ in 0..<count {
                let hlc: UInt64 = try buffer.readFixed()
                guard hlc <= UInt64(Int64.max) else { throw WireError("invalid history stamp") }
                hlcs.append(hlc)
            }
            message = .history(HistoryStamps(origin: ReplicaID(rawValue: origin), from: from, upTo: upTo, hlcs: hlcs))
        case 10:
            let version: UInt16 = try buffer.readFixed()
            let spake = try buffer.readExactly(WireLimits.spakeMessageBytes, what: "pairing message")
            let name = try buffer.readWireString()
            guard name.utf8.count <= WireLimits.maxMachineNameBytes else { throw WireError("a machine name is too long") }
            message = .pairStart(.init(version: version, message: spake, name: name))
        case 11:
            let spake = try buffer.readExactly(WireLimits.spakeMessageBytes, what: "pairing message")
            message = .pairReply(message: spake, confirmation: try buffer.readExactly(WireLimits.confirmationBytes, what: "confirmation"))
        case 12:
            message = .pairConfirm(try buffer.readExactly(WireLimits.confirmationBytes, what: "confirmation"))
        case 13:
            let household = try buffer.readWireString(), name = try buffer.readWireString()
            let secret = try buffer.readExactly(32, what: "household secret")
            let key = try buffer.readExactly(32, what: "discovery key")
            let flag: UInt8 = try buffer.readFixed()
            guard flag <= 1 else { throw WireError("invalid member flag \(flag)") }
            let member = flag == 1 ? try buffer.readWireString() : nil
            message = .pairWelcome(
                .init(
                    householdID: household, householdName: name, secret: secret, discoveryKey: key,
                    memberID: member, inviterName: try buffer.readWireString()))
        default:
            throw WireError("unknown message type \(type)")
        }
        guard buffer.readableBytes == 0 else { throw WireError("\(buffer.readableBytes) unexpected bytes after a message") }
        return message
    }
}

extension ByteBuffer {
    package mutating func writeVarint(_ value: UInt64) {
        Varint.encode(value) { writeInteger($0) }
    }

    package mutating func readVarint() throws(WireError) -> UInt64 {
        do {
            return try Varint.decode { readInteger(as: UInt8.self) }
        } catch {
            throw WireError(error.description)
        }
    }

    package mutating func readFixed<T: FixedWidthInteger>() throws(WireError) -> T {
        guard let value: T = readInteger() else { throw WireError("truncated message") }
        return value
    }

    package mutating func readExactly(_ count: Int, what: String) throws(WireError) -> [UInt8] {
        guard let bytes = readBytes(length: count) else { throw WireError("truncated \(what)") }
        return bytes
    }

    package mutating func readCount(max: Int, what: String) throws(WireError) -> Int {
        let count = try readVarint()
        guard count <= UInt64(max) else { throw WireError("too many \(what): \(count) (at most \(max))") }
        return Int(count)
    }

    package mutating func writeWireString(_ string: String) {
        writeVarint(UInt64(string.utf8.count))
        writeString(string)
    }

    package mutating func readWireString() throws(WireError) -> String {
        let length = try readCount(max: WireLimits.maxStringBytes, what: "bytes in a string")
        guard readableBytes >= length else { throw WireError("truncated string") }
        // Read in place: no array per string.
        let string = withUnsafeReadableBytes { String(validUTF8: UnsafeRawBufferPointer(rebasing: $0.prefix(length))) }
        guard let string else { throw WireError("a string is not valid UTF-8") }
        moveReaderIndex(forwardBy: length)
        return string
    }

    package mutating func writeVector(_ vector: VersionVector) {
        writeVarint(UInt64(vector.entries.count))
        for (replica, seq) in vector.entries.sorted(by: { $0.key < $1.key }) {
            writeInteger(replica.rawValue)
            writeVarint(seq)
        }
    }

    /// A VECTOR's entries from protocol 9: origin, number, the check of the stamp at it (0:
    /// unknown), and the seal (0: none; else the seal plus one).
    package mutating func writeHeads(_ heads: HistoryHeads) {
        writeVarint(UInt64(heads.entries.count))
        for (replica, head) in heads.entries.sorted(by: { $0.key < $1.key }) {
            writeInteger(replica.rawValue)
            writeVarint(head.seq)
            writeInteger(head.check)
            writeVarint(head.seal.map { $0 + 1 } ?? 0)
        }
    }

    package mutating func readHeads() throws(WireError) -> HistoryHeads {
        let count = try readCount(max: WireLimits.maxVectorEntries, what: "version vector entries")
        var entries: [ReplicaID: HistoryHead] = [:]
        for _ in 0..<count {
            let replica: UInt64 = try readFixed()
            let seq = try readVarint()
            let check: UInt32 = try readFixed()
            let seal = try readVarint()
            guard replica != 0 else { throw WireError("replica id 0 in a version vector") }
            guard seal == 0 || seal - 1 >= seq else {
                throw WireError("invalid history head of \(ReplicaID(rawValue: replica))")
            }
            guard entries.updateValue(HistoryHead(seq: seq, check: check, seal: seal == 0 ? nil : seal - 1), forKey: ReplicaID(rawValue: replica)) == nil else {
                throw WireError("a replica appears twice in a version vector")
            }
        }
        return HistoryHeads(entries)
    }

    package mutating func readVector() throws(WireError) -> VersionVector {
        let count = try readCount(max: WireLimits.maxVectorEntries, what: "version vector entries")
        var entries: [ReplicaID: UInt64] = [:]
        for _ in 0..<count {
            let replica: UInt64 = try readFixed()
            let seq = try readVarint()
            guard replica != 0 else { throw WireError("replica id 0 in a version vector") }
            guard entries.updateValue(seq, forKey: ReplicaID(rawValue: replica)) == nil else {
                throw WireError("a replica appears twice in a version vector")
            }
        }
        return VersionVector(entries)
    }

    /// One change, through a raw cursor over room reserved for it (RawWire.swift).
    package mutating func writeChange(_ change: Change) {
        writeWithUnsafeMutableBytes(minimumWritableBytes: RawWireWriter.bound(change)) { memory in
            var writer = RawWireWriter(memory)
            writer.change(change)
            return writer.offset
        }
    }

    /// `count` changes, read in place in one pass (RawWire.swift).
    package mutating func writeChange(_ change: KeptChange) {
        var bound = 8 + 10 + 10 + 1 + 10 + change.row.utf8Count + 1 + 10 + (change.writer?.utf8Count ?? 0) + 10
        for field in change.fields {
            bound += 10 + field.field.utf8.count + 1 + 10 + 1 + 10 + 8
            if case let .text(text) = field.value { bound += text.utf8.count }
        }
        writeWithUnsafeMutableBytes(minimumWritableBytes: bound) { memory in
            var writer = RawWireWriter(memory)
            writer.change(change)
            return writer.offset
        }
    }

    /// `count` changes, read in place in one pass (RawWire.swift): those of entities this
    /// release knows into `changes`, the others into `kept`.
    package mutating func readChanges(_ count: Int, into changes: inout [Change], kept: inout [KeptChange]) throws(WireError) {
        let read: Result<Int, WireError> = withUnsafeReadableBytes { bytes in
            var reader = RawWireReader(bytes)
            do throws(WireError) {
                for _ in 0..<count {
                    switch try reader.change() {
                    case let .known(change): changes.append(change)
                    case let .kept(change): kept.append(change)
                    }
                }
                return .success(reader.offset)
            } catch {
                return .failure(error)
            }
        }
        moveReaderIndex(forwardBy: try read.get())
    }
}
