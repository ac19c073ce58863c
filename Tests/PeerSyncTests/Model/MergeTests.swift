import Testing
@testable import PulseModel

/// The merge rule without SQLite: a row's versions and a change in, the new versions and
/// the conflicts out (the way swift-nio tests its state machines: inputs → outputs).
@Suite struct MergeTests {
    static let a = ReplicaID(rawValue: 0xA), b = ReplicaID(rawValue: 0xB)

    static func stamp(_ ms: Int64, _ origin: ReplicaID) -> Stamp { Stamp(hlc: HybridTimestamp(milliseconds: ms), origin: origin) }

    /// A change of task `r1` by `origin` at `ms`; each field is `(name, value, base)`.
    static func change(_ origin: ReplicaID, _ ms: Int64, seq: UInt64 = 1, _ fields: [(String, FieldValue, Stamp?)]) -> Change {
        Change(
            origin: origin, seq: seq, hlc: HybridTimestamp(milliseconds: ms), member: nil, entity: .task, rowID: "r1",
            fields: fields.map { FieldWrite(field: $0.0, value: $0.1, base: $0.2) })
    }

    /// Applies the changes in order to an empty row; returns the values and every conflict.
    static func run(_ changes: [Change]) throws -> (values: [String: FieldValue], conflicts: [MergeConflict], changed: [Bool]) {
        var row = VersionedRow(EntityKind.task.schema)
        var conflicts: [MergeConflict] = []
        var changed: [Bool] = []
        for change in changes {
            let merged = try RowMerge.merge(change, into: &row)
            conflicts += merged.conflicts
            changed.append(merged.changed)
        }
        return (row.values, conflicts, changed)
    }

    struct Case: CustomTestStringConvertible, Sendable {
        let name: String
        let changes: [Change]
        let values: [String: FieldValue]
        /// `kind field kept-value lost-value` of each conflict, in order.
        let conflicts: [String]
        var testDescription: String { name }
    }

    static let created = stamp(100, a)
    static let cases: [Case] = [
        Case(
            name: "a new row takes every field",
            changes: [change(a, 100, [("title", .text("Dishes"), nil), ("done", .bool(false), nil)])],
            values: ["title": .text("Dishes"), "done": .bool(false)], conflicts: []),
        Case(
            name: "a later edit that saw the value replaces it silently",
            changes: [
                change(a, 100, [("title", .text("Dishes"), nil)]),
                change(b, 200, [("title", .text("Wash dishes"), created)]),
            ],
            values: ["title": .text("Wash dishes")], conflicts: []),
        Case(
            name: "concurrent edits of the same field: the later wins, the earlier is logged as overwritten",
            changes: [
                change(a, 100, [("title", .text("Dishes"), nil)]),
                change(a, 200, seq: 2, [("title", .text("Oat"), created)]),
                change(b, 300, [("title", .text("Whole"), created)]),
            ],
            values: ["title": .text("Whole")], conflicts: ["overwritten title Whole Oat"]),
        Case(
            name: "the same two edits arriving in the other order: same winner, the loser logged as rejected",
            changes: [
                change(a, 100, [("title", .text("Dishes"), nil)]),
                change(b, 300, [("title", .text("Whole"), created)]),
                change(a, 200, seq: 2, [("title", .text("Oat"), created)]),
            ],
            values: ["title": .text("Whole")], conflicts: ["rejected title Whole Oat"]),
        Case(
            name: "concurrent edits of different fields both survive",
            changes: [
                change(a, 100, [("title", .text("Dishes"), nil), ("done", .bool(false), nil)]),
                change(a, 200, seq: 2, [("title", .text("Plates"), created)]),
                change(b, 150, [("done", .bool(true), created)]),
            ],
            values: ["title": .text("Plates"), "done": .bool(true)], conflicts: []),
        Case(
            name: "a tie in the clock is broken by the larger replica id",
            changes: [
                change(b, 500, [("title", .text("From B"), nil)]),
                change(a, 500, [("title", .text("From A"), nil)]),
            ],
            values: ["title": .text("From B")], conflicts: ["rejected title From B From A"]),
        Case(
            name: "the tie broken the same way in the other order",
            changes: [
                change(a, 500, [("title", .text("From A"), nil)]),
                change(b, 500, [("title", .text("From B"), nil)]),
            ],
            values: ["title": .text("From B")], conflicts: ["overwritten title From B From A"]),
        Case(
            name: "equal concurrent values are no conflict",
            changes: [
                change(a, 100, [("title", .text("Same"), nil)]),
                change(b, 200, [("title", .text("Same"), nil)]),
            ],
            values: ["title": .text("Same")], conflicts: []),
        Case(
            name: "edit after a concurrent delete: the row stays deleted, the edit is kept and logged",
            changes: [
                change(a, 100, [("title", .text("Dishes"), nil), ("deleted", .bool(false), nil)]),
                change(a, 200, seq: 2, [("deleted", .bool(true), created)]),
                change(b, 300, [("title", .text("Plates"), created)]),
            ],
            values: ["title": .text("Plates"), "deleted": .bool(true)], conflicts: ["edit_of_deleted title 1 Plates"]),
        Case(
            name: "delete arriving after the concurrent edit: the same outcome and the same log",
            changes: [
                change(a, 100, [("title", .text("Dishes"), nil), ("deleted", .bool(false), nil)]),
                change(b, 300, [("title", .text("Plates"), created)]),
                change(a, 200, seq: 2, [("deleted", .bool(true), created)]),
            ],
            values: ["title": .text("Plates"), "deleted": .bool(true)], conflicts: ["edit_of_deleted title 1 Plates"]),
        Case(
            name: "an edit stamped before the deletion is simply older: no conflict",
            changes: [
                change(a, 100, [("title", .text("Dishes"), nil), ("deleted", .bool(false), nil)]),
                change(b, 150, [("title", .text("Plates"), created)]),
                change(a, 200, seq: 2, [("deleted", .bool(true), created)]),
            ],
            values: ["title": .text("Plates"), "deleted": .bool(true)], conflicts: []),
        Case(
            name: "a set-once field arriving again with the same value changes nothing",
            changes: [
                change(a, 100, [("created", .integer(7), nil)]),
                change(b, 200, [("created", .integer(7), nil)]),
            ],
            values: ["created": .integer(7)], conflicts: []),
    ]

    @Test(arguments: cases)
    func mergeRule(_ c: Case) throws {
        let result = try Self.run(c.changes)
        #expect(result.values == c.values)
        let described = result.conflicts.map { conflict in
            func text(_ v: FieldValue) -> String { v.textValue ?? v.integerValue.map(String.init) ?? "null" }
            return "\(conflict.kind.rawValue) \(conflict.field) \(text(conflict.kept.value)) \(text(conflict.lost.value))"
        }
        #expect(described == c.conflicts)
    }

    /// Every order of arrival gives the same row (the merge is commutative).
    @Test(arguments: cases)
    func everyOrderConverges(_ c: Case) throws {
        let expected = try Self.run(c.changes).values
        func permutations(_ items: [Change]) -> [[Change]] {
            guard items.count > 1 else { return [items] }
            return items.indices.flatMap { i in
                var rest = items
                let first = rest.remove(at: i)
                return permutations(rest).map { [first] + $0 }
            }
        }
        for order in permutations(c.changes) {
            #expect(try Self.run(order).values == expected)
        }
    }

    @Test func applyingAChangeTwiceChangesNothing() throws {
        let edit = Self.change(Self.a, 100, [("title", .text("Dishes"), nil)])
        let result = try Self.run([edit, edit])
        #expect(result.changed == [true, false])
        #expect(result.conflicts.isEmpty)
    }

    @Test func aSetOnceFieldCannotChange() throws {
        var row = VersionedRow(EntityKind.task.schema)
        _ = try RowMerge.merge(Self.change(Self.a, 100, [("created", .integer(7), nil)]), into: &row)
        let before = row
        #expect(throws: MergeError.immutableField("created")) {
            try RowMerge.merge(Self.change(Self.b, 200, [("created", .integer(8), nil)]), into: &row)
        }
        #expect(row == before)
    }

    /// A change the schema would refuse (an unknown field, too many fields) is refused
    /// by the merge too, before anything changes: in a new row and in an existing one.
    @Test func aChangeNamingNoFieldOfTheRowChangesNothing() throws {
        for existing in [false, true] {
            var row = VersionedRow(EntityKind.task.schema)
            if existing { _ = try RowMerge.merge(Self.change(Self.a, 100, [("title", .text("Dishes"), nil)]), into: &row) }
            let before = row
            #expect(throws: MergeError.unknownField("colour")) {
                try RowMerge.merge(Self.change(Self.b, 200, [("done", .bool(true), nil), ("colour", .text("red"), nil)]), into: &row)
            }
            let many = (0..<17).map { ("f\($0)", FieldValue.null, Stamp?.none) }
            #expect(throws: MergeError.tooManyFields(17)) { try RowMerge.merge(Self.change(Self.b, 200, many), into: &row) }
            #expect(row == before)
        }
    }

    /// The row by field number: its count follows what is set and cleared, it equals a row
    /// with the same versions whatever the order they were set in, and it refuses names
    /// its entity does not have.
    @Test func aVersionedRowKeepsOneVersionPerFieldNumber() throws {
        let schema = EntityKind.task.schema
        let v1 = FieldVersion(value: .text("Dishes"), stamp: Self.created, seq: 1, base: nil, member: nil)
        let v2 = FieldVersion(value: .bool(true), stamp: Self.stamp(200, Self.b), seq: 4, base: Self.created, member: "anna")
        var row = VersionedRow(schema)
        #expect(row.isEmpty && row[0] == nil && row[field: "title"] == nil && Array(row.fields).isEmpty)
        row[schema.number(of: "done")!] = v2
        row[schema.number(of: "title")!] = v1
        row[schema.number(of: "title")!] = v1
        #expect(row.count == 2)
        #expect(row[field: "title"] == v1 && row[field: "done"] == v2 && row[field: "nope"] == nil)
        #expect(row.fields.map(\.number) == [schema.number(of: "title")!, schema.number(of: "done")!].sorted())
        #expect(row.byName == ["title": v1, "done": v2])
        #expect(row == VersionedRow(schema, byName: ["title": v1, "done": v2]))
        #expect(row != VersionedRow(schema, byName: ["title": v1]))
        #expect(row != VersionedRow(EntityKind.shoppingItem.schema))
        #expect(VersionedRow(schema, byName: ["title": v1, "colour": v2]) == nil)
        row[schema.number(of: "done")!] = nil
        row[schema.number(of: "done")!] = nil
        #expect(row.count == 1 && row == VersionedRow(schema, byName: ["title": v1]))
        row[schema.number(of: "title")!] = nil
        #expect(row.isEmpty && row == VersionedRow(schema))
        // Numbers in name order: the order a change lists its fields in.
        #expect(schema.numbersByName.map { schema.fields[$0].name } == schema.fieldNames.sorted())
    }

    @Test func anOlderWriteNeverReplacesANewerOne() throws {
        let result = try Self.run([
            Self.change(Self.b, 300, [("done", .bool(true), nil)]),
            Self.change(Self.a, 100, [("done", .bool(false), nil)]),
        ])
        #expect(result.values["done"] == .bool(true))
        #expect(result.changed == [true, false])
    }
}

/// A field kept once set (`phone.removed`): a removal written anywhere stays, whatever a
/// machine of the household writes after it and in whatever order the changes arrive.
@Suite struct KeptOnceSetTests {
    static let a = ReplicaID(rawValue: 0xA), b = ReplicaID(rawValue: 0xB)

    static func change(_ origin: ReplicaID, _ ms: Int64, seq: UInt64, _ fields: [String: FieldValue]) -> Change {
        Change(
            origin: origin, seq: seq, hlc: HybridTimestamp(milliseconds: ms), member: nil, entity: .phone, rowID: "p1",
            fields: fields.sorted { $0.key < $1.key }.map { FieldWrite(field: $0.key, value: $0.value, base: nil) })
    }

    static let changes = [
        change(
            a, 100, seq: 1,
            [
                "name": .text("Anna's phone"), "member": .null, "credential": .text(String(repeating: "c", count: 64)),
                "added_by": .text(String(repeating: "a", count: 64)), "added": .integer(1), "removed": .null,
            ]),
        change(a, 200, seq: 2, ["removed": .integer(200)]), // removed on A
        change(b, 250, seq: 1, ["removed": .integer(250)]), // removed on B too, a moment later
        change(b, 300, seq: 2, ["removed": .null]), // a machine writing it back to null, later still
    ]

    static func permutations<T>(_ items: [T]) -> [[T]] {
        guard items.count > 1 else { return [items] }
        return items.indices.flatMap { index in
            var rest = items
            let first = rest.remove(at: index)
            return permutations(rest).map { [first] + $0 }
        }
    }

    @Test func aRemovalStaysInEveryOrderOfArrival() throws {
        for order in Self.permutations(Self.changes) {
            var row = VersionedRow(EntityKind.phone.schema)
            for change in order { _ = try RowMerge.merge(change, into: &row) }
            #expect(row.values["removed"] == .integer(250), "\(order.map { "\($0.origin.rawValue)#\($0.seq)" })")
            #expect(row.values["name"] == .text("Anna's phone"))
            // Arriving again changes nothing.
            for change in order { #expect(try RowMerge.merge(change, into: &row).changed == false) }
        }
    }
}
