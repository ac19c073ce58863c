import FoundationEssentials
import Testing
import PulseModel

/// The entities live in one table (`EntityKind` and its schemas, PulseModel): the wire's and
/// the change index's codes come from it, and PROTOCOL.md §4's table must say what it says.
struct EntityRegistryTests {
    static let protocolText: String = {
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        return (try? String(contentsOf: repository.appendingPathComponent("docs/PROTOCOL.md"), encoding: .utf8)) ?? ""
    }()

    /// The rows of §4's entity table: code → (entity, row id, fields), as written.
    static func documentedRows() -> [Int: (entity: String, row: String, fields: String)] {
        var rows: [Int: (String, String, String)] = [:]
        for line in protocolText.split(separator: "\n") where line.hasPrefix("| ") {
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count == 6, let code = Int(cells[1]), cells[4].hasPrefix("`") else { continue }
            rows[code] = (cells[2], cells[3], cells[4])
        }
        return rows
    }

    /// A field's pieces of a row's cell, split at the `;` that are outside parentheses.
    static func pieces(_ cell: String) -> [String] {
        var pieces: [String] = []
        var current = ""
        var depth = 0
        for character in cell {
            if character == "(" { depth += 1 }
            if character == ")" { depth -= 1 }
            if character == ";" && depth == 0 {
                pieces.append(current.trimmingCharacters(in: .whitespaces))
                current = ""
            } else {
                current.append(character)
            }
        }
        pieces.append(current.trimmingCharacters(in: .whitespaces))
        return pieces.filter { !$0.isEmpty }
    }

    /// How §4 names a field's type.
    static func documented(_ type: FieldType) -> String {
        switch type {
        case let .text(max, _): "text(\(max))"
        case .bool: "bool"
        case let .integer(range) where range == Int64.min...Int64.max: "int −2⁶³…2⁶³−1"
        case let .integer(range): "int \(range.lowerBound)…\(range.upperBound)"
        case let .choice(words): "one of \(words.joined(separator: ", "))"
        case .date: "date"
        case let .reference(entity): "ref \(entity.rawValue)"
        case .timestamp: "timestamp"
        case .language: "language tag"
        }
    }

    @Test func everyEntityHasItsOwnCodeAndACodeFindsItsEntity() {
        let codes = EntityKind.allCases.map(\.code)
        #expect(Set(codes).count == codes.count)
        #expect(codes.allSatisfy { $0 >= 1 })
        for entity in EntityKind.allCases { #expect(EntityKind(code: entity.code) == entity) }
        #expect(EntityKind(code: 0) == nil)
        #expect(EntityKind(code: (codes.max() ?? 0) + 1) == nil)
    }

    @Test func theProtocolsEntityTableSaysWhatTheRegistrySays() throws {
        let rows = Self.documentedRows()
        #expect(rows.count == EntityKind.allCases.count, "§4 lists \(rows.keys.sorted()), the registry \(EntityKind.allCases.map(\.code))")
        for entity in EntityKind.allCases {
            let schema = entity.schema
            guard let row = rows[Int(entity.code)] else {
                Issue.record("§4 has no row for code \(entity.code) (\(entity.rawValue))")
                continue
            }
            #expect(row.entity == entity.rawValue, "code \(entity.code)")
            if let singleton = schema.singletonRowID { #expect(row.row == "always `\(singleton)`", "\(entity.rawValue)'s row id") }
            let pieces = Self.pieces(row.fields)
            #expect(pieces.count == schema.fields.count, "\(entity.rawValue): §4 lists \(pieces.count) fields, the registry \(schema.fields.count)")
            for (piece, field) in zip(pieces, schema.fields) {
                let what = "\(entity.rawValue).\(field.name) in §4: \(piece)"
                #expect(piece.hasPrefix("`\(field.name)` \(Self.documented(field.type))"), "\(what)")
                #expect(piece.contains("set once") == field.immutable, "\(what)")
                #expect(piece.contains("kept once set") == field.keptOnceSet, "\(what)")
                #expect(piece.contains("or null") == field.nullable, "\(what)")
                #expect(piece.contains("may be absent") == field.optional, "\(what)")
                if case let .text(_, allowEmpty) = field.type { #expect(piece.contains("may be empty") == allowEmpty, "\(what)") }
                let tombstone = schema.tombstone?.field == field.name
                #expect(piece.contains("(tombstone") == tombstone, "\(what)")
                if tombstone, let value = schema.tombstone?.value {
                    let written = value.integerValue.map(String.init) ?? value.textValue ?? "null"
                    #expect(piece.contains("(tombstone \(written))"), "\(what)")
                }
            }
        }
    }
}
