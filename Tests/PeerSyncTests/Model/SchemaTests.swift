import Testing
@testable import PulseModel
@testable import PulseStore

@Suite struct SchemaTests {
    func change(_ entity: EntityKind, _ row: String, _ fields: [String: FieldValue], seq: UInt64 = 1) -> Change {
        Change(
            origin: ReplicaID(rawValue: 9), seq: seq, hlc: HybridTimestamp(milliseconds: 1), member: nil,
            entity: entity, rowID: row, fields: fields.map { FieldWrite(field: $0.key, value: $0.value) })
    }

    /// The schema table is indexed by `ordinal`: every case finds its own schema, and the
    /// derived values are the fields'.
    @Test func everyEntityFindsItsSchema() {
        for (index, entity) in EntityKind.allCases.enumerated() {
            #expect(entity.ordinal == index)
            #expect(entity.schema.kind == entity)
            #expect(entity.schema.fieldNames == entity.schema.fields.map(\.name))
            #expect(entity.schema.requiredFieldCount == entity.schema.fields.filter { !$0.optional }.count)
        }
    }

    @Test func acceptsAValidRow() {
        #expect(throws: Never.self) { try EntityKind.shoppingItem.schema.validate(change(.shoppingItem, "i1", shoppingItem("Milk"))) }
        #expect(throws: Never.self) {
            try EntityKind.task.schema.validate(change(.task, "t1", ["due": .text("2026-02-28"), "assignee": .null]))
        }
    }

    @Test(arguments: [
        ("name", FieldValue.text(""), "may not be empty"),
        ("name", .text(String(repeating: "x", count: 201)), "longer than 200"),
        ("name", .integer(3), "expected text"),
        ("name", .text("a\u{0}b"), "control characters"),
        ("name", .null, "may not be empty"),
        ("state", .text("bought"), "expected one of"),
        ("listed", .text("yesterday"), "expected a timestamp"),
        ("colour", .text("red"), "has no field"),
    ])
    func rejectsBadShoppingFields(field: String, value: FieldValue, message: String) {
        #expect {
            try EntityKind.shoppingItem.schema.validate(change(.shoppingItem, "i1", [field: value]))
        } throws: { error in
            String(describing: error).contains(message)
        }
    }

    /// Text limits count characters (not bytes) up to the byte cap, and control characters
    /// are refused wherever they sit; what is not a C0 control or DEL passes.
    @Test(arguments: [
        (String(repeating: "é", count: 200), nil as String?), // 400 bytes, 200 characters
        (String(repeating: "é", count: 201), "longer than 200 characters"),
        (String(repeating: "👨‍👩‍👧", count: 200), "longer than 800 bytes"), // 200 characters, 3600 bytes
        ("tab\there", "control characters"), ("del\u{7F}", "control characters"), ("unit\u{1F}", "control characters"),
        ("é\u{0}", "control characters"), ("next line \u{85} is not C0", nil), ("Milch & Brot — 2 €", nil),
    ])
    func textLimits(text: String, refusal: String?) {
        let outcome = Result { try EntityKind.shoppingItem.schema.validate(change(.shoppingItem, "i1", ["name": .text(text)])) }
        if let refusal {
            #expect(throws: ChangeValidationError.self) { try outcome.get() }
            if case let .failure(error) = outcome { #expect(String(describing: error).contains(refusal), "\(error)") }
        } else {
            #expect(throws: Never.self) { try outcome.get() }
        }
    }

    @Test(arguments: [
        ("anna", "i1", true), ("", "i1", false), (String(repeating: "m", count: 129), "i1", false),
        (String(repeating: "m", count: 128), "i1", true), ("an na", "i1", false), ("änna", "i1", false),
        ("anna", "ïd", false), ("anna", "a:b@c.d-e_F9", true), ("anna", String(repeating: "x", count: Limits.maxRowIDLength + 1), false),
    ])
    func membersAndRowIDs(member: String, row: String, valid: Bool) {
        let write = Change(
            origin: ReplicaID(rawValue: 9), seq: 1, hlc: HybridTimestamp(milliseconds: 1), member: member,
            entity: .shoppingItem, rowID: row, fields: [FieldWrite(field: "name", value: .text("Milk"))])
        if valid {
            #expect(throws: Never.self) { try EntityKind.shoppingItem.schema.validate(write) }
        } else {
            #expect(throws: ChangeValidationError.self) { try EntityKind.shoppingItem.schema.validate(write) }
        }
    }

    @Test func rejectsBadDatesRowIDsAndShapes() {
        let task = EntityKind.task.schema
        for bad in ["2026-02-30", "2026-13-01", "26-01-01", "2026-1-01", "tomorrow"] {
            #expect(throws: ChangeValidationError.self) { try task.validate(change(.task, "t", ["due": .text(bad)])) }
        }
        #expect(throws: ChangeValidationError.self) { try task.validate(change(.task, "bad id", ["done": .bool(true)])) }
        #expect(throws: ChangeValidationError.self) { try task.validate(change(.task, "t", [:])) }
        #expect(throws: ChangeValidationError.self) { try task.validate(change(.task, "t", ["done": .integer(2)])) }
        #expect(throws: ChangeValidationError.self) { try task.validate(change(.task, "t", ["done": .bool(true)], seq: 0)) }
        #expect(throws: ChangeValidationError.self) {
            try EntityKind.settings.schema.validate(change(.settings, "other", ["suggestions": .bool(true)]))
        }
        #expect(throws: ChangeValidationError.self) {
            try EntityKind.catalogueSelection.schema.validate(change(.catalogueSelection, "rule_001", ["peanuts": .integer(21)]))
        }
        let duplicate = Change(
            origin: ReplicaID(rawValue: 9), seq: 1, hlc: HybridTimestamp(milliseconds: 1), member: nil,
            entity: .task, rowID: "t",
            fields: [FieldWrite(field: "done", value: .bool(true)), FieldWrite(field: "done", value: .bool(false))])
        #expect(throws: ChangeValidationError.duplicateField(.task, "done")) { try task.validate(duplicate) }
        let apart = Change(
            origin: ReplicaID(rawValue: 9), seq: 1, hlc: HybridTimestamp(milliseconds: 1), member: nil,
            entity: .task, rowID: "t",
            fields: [
                FieldWrite(field: "due", value: .null), FieldWrite(field: "done", value: .bool(true)),
                FieldWrite(field: "due", value: .null),
            ])
        #expect(throws: ChangeValidationError.duplicateField(.task, "due")) { try task.validate(apart) }
    }

    /// Every byte, against the rule as ranges: `0-9 A-Z a-z _ - . : @` are id bytes.
    @Test func idBytes() {
        for byte in UInt8.min...UInt8.max {
            let c = byte
            let expected =
                (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A)
                || c == 0x5F || c == 0x2D || c == 0x2E || c == 0x3A || c == 0x40
            #expect(RowIDRules.isIDByte(byte) == expected, "\(byte)")
        }
    }

    /// A field's number is its place; a name of any other spelling or length has none.
    @Test func fieldNumbers() {
        for entity in EntityKind.allCases {
            for name in entity.schema.fieldNames {
                for candidate in [name, String(name.dropLast()), name + "s", name.uppercased(), "x" + name.dropFirst()] {
                    #expect(entity.schema.number(of: candidate) == entity.schema.fieldNames.firstIndex(of: candidate), "\(candidate)")
                }
                #expect(entity.schema.field(name)?.name == name)
            }
            #expect(entity.schema.number(of: "") == nil)
        }
    }

    @Test func leapYears() {
        #expect(IsoDate("2024-02-29") != nil)
        #expect(IsoDate("2100-02-29") == nil)
        #expect(IsoDate("2000-02-29") != nil)
        #expect(IsoDate("2026-11-21")?.description == "2026-11-21")
    }

    /// The SQL tables and the Swift schema describe the same columns (plus the row's
    /// versions record, and the key column the store keeps beside some: ``KeyColumn``).
    @Test func typedTablesMatchTheSchema() throws {
        let dir = try TemporaryDirectory()
        let store = try makeStore(dir, "schema")
        for kind in EntityKind.allCases {
            let columns = try store.connection.query("SELECT name FROM pragma_table_info(?1)", [.text(kind.rawValue)]) { statement in
                var names: [String] = []
                while try statement.step() { names.append(statement.text(0)) }
                return names
            }
            // Columns a later migration added come last (ALTER TABLE appends): compare as sets.
            let key = KeyColumn.of(kind).map { [$0.column] } ?? []
            #expect(columns.count == kind.schema.fieldNames.count + 2 + key.count, "table \(kind.rawValue)")
            #expect(Set(columns) == Set(["id"] + kind.schema.fieldNames + ["versions"] + key), "table \(kind.rawValue)")
        }
    }
}
