import Foundation
import Testing
@testable import PulseModel
@testable import PulseStore

@Suite struct ReplicaStoreTests {
    let dir: TemporaryDirectory
    let clock = ManualClock()

    init() throws { dir = try TemporaryDirectory() }

    func pair() throws -> (ReplicaStore, ReplicaStore) {
        (try makeStore(dir, "a", clock: clock, id: 0xA), try makeStore(dir, "b", clock: clock, id: 0xB))
    }

    // MARK: Migrations and durability

    @Test func migratesAnEmptyDatabaseAndReopens() throws {
        let path = dir.path("m.sqlite")
        let id: ReplicaID
        do {
            let store = try ReplicaStore(path: path)
            id = store.replicaID
            #expect(try store.connection.scalarInt("PRAGMA user_version") == Int64(Migrations.latest))
            #expect(try store.meta("replica_id") == .integer(id.storage))
        }
        let reopened = try ReplicaStore(path: path)
        #expect(reopened.replicaID == id)
        #expect(try reopened.integrityCheck() == "ok")
        #expect(try reopened.connection.query("PRAGMA journal_mode") { try $0.step() ? $0.text(0) : "" } == "wal")
    }

    /// No write builds a temporary B-tree per row: a CHECK against a list of three or more
    /// values did (`OpenEphemeral` on every INSERT: a third of a typed insert; migration 10).
    /// Every table's full-row insert and the store's own write statements are compiled and
    /// their programs read; the rewritten checks still refuse what they refused.
    @Test func noWriteBuildsATemporaryTable() throws {
        let store = try makeStore(dir, "explain", clock: clock, id: 0xE)
        let connection = store.connection
        func opcodes(_ sql: String) throws -> [String] {
            try connection.query("EXPLAIN " + sql) { statement in
                var names: [String] = []
                while try statement.step() { names.append(statement.text(1)) }
                return names
            }
        }
        let tables: [String] = try connection.query("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite%' ORDER BY name") {
            statement in
            var names: [String] = []
            while try statement.step() { names.append(statement.text(0)) }
            return names
        }
        #expect(tables.contains("shopping_item") && tables.contains("conflict") && tables.count > 15)
        var writes: [String] = []
        for table in tables {
            let columns: [(name: String, key: Bool)] = try connection.query("SELECT name, pk FROM pragma_table_info(?1)", [.text(table)]) { statement in
                var names: [(String, Bool)] = []
                while try statement.step() { names.append((statement.text(0), statement.int(1) > 0)) }
                return names
            }
            let placeholders = columns.indices.map { "?\($0 + 1)" }.joined(separator: ", ")
            writes.append("INSERT INTO \(table) (\(columns.map(\.name).joined(separator: ", "))) VALUES (\(placeholders))")
            // A row updated by its key, as the store updates rows.
            let set = columns.filter { !$0.key }.map { "\($0.name) = ?" }, key = columns.filter(\.key).map { "\($0.name) = ?" }
            if !set.isEmpty && !key.isEmpty {
                writes.append("UPDATE \(table) SET \(set.joined(separator: ", ")) WHERE \(key.joined(separator: " AND "))")
            }
        }
        writes += ReplicaStore.rowSQL.values.map(\.upsert)
        // The held inserts, of every size (HeldInserts.swift).
        for rows in [HeldInserts.chunk, HeldInserts.smallChunk, 1] {
            writes += EntityKind.allCases.map { Connection.typedInsertSQL($0, rows: rows) } + [Connection.indexInsertSQL(rows: rows)]
        }
        writes += ReplicaStore.HotStatement.allCases.map(\.sql)
        for sql in writes {
            let program = try opcodes(sql)
            #expect(program.contains("Halt") && !program.contains("OpenEphemeral"), "\(sql)")
        }
        // The same rules as before: a state, a kind or an appearance outside its list is refused.
        let refused = [
            "INSERT INTO shopping_item (id, name, state, listed, versions) VALUES ('s', 'Milk', 'gone', 1, x'0102')",
            "INSERT INTO catalogue_selection (id, kind, title, peanuts, category, selected, versions) VALUES ('c', 'chore', 'Dishes', 2, 'chores', 1, x'0102')",
            "INSERT INTO catalogue_selection (id, kind, title, peanuts, category, selected, versions) VALUES ('c', 'bribe', 'Dishes', 2, 'fun', 1, x'0102')",
            "INSERT INTO settings (id, appearance, celebrations, suggestions, versions) VALUES ('settings', 'sepia', 1, 1, x'0102')",
            "INSERT INTO conflict (logged_hlc, kind, entity, row_id, field, kept_hlc, kept_origin, lost_hlc, lost_origin) VALUES (1, 'lost', 'task', 't', 'title', 1, 1, 1, 1)",
        ]
        for sql in refused {
            #expect(throws: SQLiteError.self, "\(sql)") { try connection.execute(sql) }
        }
        try connection.execute(
            """
            INSERT INTO shopping_item (id, name, state, listed, versions) VALUES ('s', 'Milk', 'restock', 1, x'0102');
            INSERT INTO catalogue_selection (id, kind, title, peanuts, category, selected, versions) VALUES ('c', 'reward', 'Movie', 5, 'fun', 1, x'0102');
            INSERT INTO conflict (logged_hlc, kind, entity, row_id, field, kept_hlc, kept_origin, lost_hlc, lost_origin) VALUES (1, 'edit_of_deleted', 'task', 't', 'title', 1, 1, 1, 1);
            """)
        #expect(try connection.scalarInt("SELECT count(*) FROM shopping_item WHERE state = 'restock'") == 1)
    }

    @Test func refusesADatabaseFromANewerVersion() throws {
        let path = dir.path("newer.sqlite")
        do { _ = try ReplicaStore(path: path) }
        do {
            let raw = try Connection(path: path)
            try raw.execute("PRAGMA user_version = 99")
        }
        #expect { try ReplicaStore(path: path) } throws: { String(describing: $0).contains("newer than this pulse-peer") }
    }

    /// The apply writes rows in the order of their key prefixes: by table, then as the table
    /// orders the ids (byte order) when they differ in their first seven bytes.
    @Test func rowKeyPrefixesOrderAsTheTables() {
        typealias Key = ReplicaStore.RowKey
        let ids = (0..<200).map { _ in RowIDRules.random() } + ["a", "ab", "abcdefg", "abcdefh", "b", ""]
        let sameTable = ids.map { Key(entity: .shoppingItem, id: TextID($0)) }
        #expect(sameTable.prefix(200).allSatisfy { if case .uuid = $0.id { true } else { false } })
        for a in sameTable {
            for b in sameTable where !a.id.text.utf8.prefix(7).elementsEqual(b.id.text.utf8.prefix(7)) {
                #expect((a.sortPrefix < b.sortPrefix) == a.id.text.utf8.lexicographicallyPrecedes(b.id.text.utf8), "\(a.id.text) \(b.id.text)")
            }
        }
        // Another table: every shopping item before every task, whatever their ids.
        let tasks = ids.map { Key(entity: .task, id: TextID($0)) }
        #expect(sameTable.map(\.sortPrefix).max()! < tasks.map(\.sortPrefix).min()!)
    }

    /// Text is bound by its bytes and length and read back by its length: empty text stays
    /// text (not NULL), short and long strings and multibyte characters come back whole.
    @Test func textRoundTripsThroughStatements() throws {
        let raw = try Connection(path: dir.path("text.sqlite"))
        try raw.execute("CREATE TABLE t (n INTEGER PRIMARY KEY, v TEXT)")
        let samples = [
            "", "a", "active", String(repeating: "x", count: 15), String(repeating: "y", count: 16),
            "Crème brûlée 🍮", RowIDRules.random(), String(repeating: "é", count: 200),
        ]
        let insert = try Statement(connection: raw, sql: "INSERT INTO t (n, v) VALUES (?1, ?2)")
        for (n, text) in samples.enumerated() { try insert.run([.integer(Int64(n)), .text(text)]) }
        let read = try Statement(connection: raw, sql: "SELECT v, typeof(v), length(CAST(v AS BLOB)) FROM t ORDER BY n")
        var back: [String] = []
        while try read.step() {
            #expect(read.text(1) == "text")
            #expect(Int(read.int(2)) == read.text(0).utf8.count)
            back.append(read.text(0))
            #expect(read.value(0) == .text(back.last!))
        }
        #expect(back == samples)
    }

    @Test func aVersion1DatabaseIsMigratedWithItsHistory() throws {
        let path = dir.path("v1.sqlite")
        let origin = ReplicaID(rawValue: 0xC), other = ReplicaID(rawValue: 0xD)
        do {
            // Schema 1 kept one row per field in `field_version`.
            let raw = try Connection(path: path)
            try raw.execute(Migrations.migration1)
            try raw.execute("PRAGMA user_version = 1")
            try raw.execute(
                """
                INSERT INTO meta (key, value) VALUES ('replica_id', \(origin.storage));
                INSERT INTO version_vector (origin, seq) VALUES (\(origin.storage), 2), (\(other.storage), 2);
                INSERT INTO field_version (entity, row_id, field, value, hlc, origin, seq, base_hlc, base_origin, member) VALUES
                  ('shopping_item', 'i1', 'name', 'Milk', 100, \(origin.storage), 1, NULL, NULL, 'anna'),
                  ('shopping_item', 'i1', 'listed', 1, 100, \(origin.storage), 1, NULL, NULL, 'anna'),
                  ('shopping_item', 'i1', 'state', 'restock', 200, \(origin.storage), 2, 100, \(origin.storage), NULL),
                  ('household', 'profile', 'name', 'Home', 150, \(other.storage), 1, NULL, NULL, NULL),
                  ('backlog_item', 'b1', 'title', 'Paint', 160, \(other.storage), 2, NULL, NULL, NULL);
                INSERT INTO shopping_item (id, name, state, listed) VALUES ('i1', 'Milk', 'restock', 1);
                INSERT INTO household (id, name) VALUES ('profile', 'Home');
                """)
        }
        let store = try ReplicaStore(path: path)
        #expect(store.replicaID == origin)
        #expect(try store.connection.scalarInt("SELECT count(*) FROM sqlite_schema WHERE name = 'field_version'") == 0)
        #expect(try store.row(.shoppingItem, "i1") == ["name": .text("Milk"), "listed": .integer(1), "state": .text("restock")])
        #expect(try store.integrityCheck() == "ok")
        // Migration 3: complete rows carry their record in the typed table; a row still
        // missing fields waits in `partial_row`; `row_version` is gone.
        #expect(try store.connection.scalarInt("SELECT count(*) FROM sqlite_schema WHERE name = 'row_version'") == 0)
        #expect(try store.connection.scalarInt("SELECT count(*) FROM shopping_item WHERE versions <> x'0000'") == 1)
        #expect(try store.connection.scalarInt("SELECT count(*) FROM partial_row") == 1)
        #expect(try store.connection.scalarInt("SELECT count(*) FROM backlog_item") == 0)
        #expect(try store.row(.backlogItem, "b1") == ["title": .text("Paint")])
        // The history travels as it did: two changes of `origin` (one per number) and one of `other`.
        let changes = try store.allDeltas(for: VersionVector()).flatMap(\.changes)
        #expect(
            changes.map { "\($0.origin.storage)#\($0.seq):\($0.fields.map(\.field))" }.sorted()
                == [
                    "\(origin.storage)#1:[\"listed\", \"name\"]", "\(origin.storage)#2:[\"state\"]", "\(other.storage)#1:[\"name\"]",
                    "\(other.storage)#2:[\"title\"]",
                ].sorted())
        let restock = changes.first { $0.seq == 2 && $0.origin == origin }
        #expect(restock?.fields.first?.base == Stamp(hlc: HybridTimestamp(rawValue: 100), origin: origin))
        #expect(changes.first { $0.seq == 1 && $0.origin == origin }?.member == "anna")
    }

    /// A current database's `change_index` back to before migration 11: entities by name,
    /// row ids as text (migrations 12 to 16 undone first: `published_seq`, the kids' PIN,
    /// members' languages, phones, the household CA).
    static var undoMigration11: String {
        let names = EntityKind.allCases.map { "WHEN \(ChangeIndex.code($0)) THEN '\($0.rawValue)'" }.joined(separator: " ")
        let hex = "lower(hex(row_id))"
        return """
            DROP TABLE history_seal;
            DROP TABLE change_stub;
            DROP TABLE kept_change;
            DROP TABLE phone_service;
            DROP TABLE ca_grant;
            DROP TABLE ca_root;
            DROP TABLE phone;
            ALTER TABLE member DROP COLUMN language;
            DROP TABLE kids_pin;
            DELETE FROM meta WHERE key IN ('published_seq', 'synced_once');
            CREATE TABLE change_index_10 (
                origin INTEGER NOT NULL CHECK (origin <> 0), seq INTEGER NOT NULL CHECK (seq > 0),
                entity TEXT NOT NULL, row_id TEXT NOT NULL, PRIMARY KEY (origin, seq)
            ) WITHOUT ROWID;
            INSERT INTO change_index_10 (origin, seq, entity, row_id)
                SELECT origin, seq, CASE entity \(names) END,
                       CASE WHEN typeof(row_id) = 'blob' THEN substr(\(hex), 1, 8) || '-' || substr(\(hex), 9, 4) || '-' ||
                            substr(\(hex), 13, 4) || '-' || substr(\(hex), 17, 4) || '-' || substr(\(hex), 21) ELSE row_id END
                FROM change_index;
            DROP TABLE change_index;
            ALTER TABLE change_index_10 RENAME TO change_index;

            """
    }

    /// `change_index` names a row by a small entity code and, for the ids this program makes,
    /// 16 bytes (any other id as its text); migration 11 rewrites an older index, and the
    /// deltas read from it are the same before and after.
    @Test func theChangeIndexIsShortAndMigrated() throws {
        let codes = EntityKind.allCases.map(ChangeIndex.code)
        #expect(Set(codes).count == codes.count && codes.allSatisfy { $0 > 0 })
        #expect(EntityKind.allCases.allSatisfy { ChangeIndex.entity(code: ChangeIndex.code($0)) == $0 })
        #expect(ChangeIndex.entity(code: 0) == nil && ChangeIndex.entity(code: 99) == nil)
        let path = dir.path("index.sqlite")
        let ids = (0..<5).map { _ in RowIDRules.newRowID() } + [RowIDRules.random(), "i1", "A1B2C3D4-0000-4000-8000-00000000000F"]
        func shape(_ store: ReplicaStore) throws -> [String] {
            try store.connection.query("SELECT typeof(entity), typeof(row_id), length(row_id) FROM change_index ORDER BY seq") { statement in
                var rows: [String] = []
                while try statement.step() { rows.append("\(statement.text(0)) \(statement.text(1)) \(statement.int(2))") }
                return rows
            }
        }
        let before: [DeltaBatch]
        do {
            let store = try ReplicaStore(path: path, physicalClock: clock.function)
            try store.write(member: nil) { tx in
                for id in ids { _ = try tx.create(.shoppingItem, id, shoppingItem("Item \(id)")) }
                _ = try tx.put(.household, "profile", ["name": .text("Home")])
            }
            try store.write(member: nil) { tx in _ = try tx.put(.shoppingItem, ids[0], ["state": .text("restock")]) }
            // The ids this program makes as 16 bytes; "i1", an upper-case UUID and "profile" as text.
            #expect(
                try shape(store) == Array(repeating: "integer blob 16", count: 6) + ["integer text 2", "integer text 36", "integer text 7", "integer blob 16"])
            before = try store.allDeltas(for: VersionVector())
            try store.connection.execute(Self.undoMigration11 + "PRAGMA user_version = 10")
            #expect(try shape(store).allSatisfy { $0.hasPrefix("text text") })
        }
        let store = try ReplicaStore(path: path, physicalClock: clock.function)
        #expect(try store.connection.scalarInt("PRAGMA user_version") == Int64(Migrations.latest))
        #expect(try shape(store).filter { $0 == "integer blob 16" }.count == 7)
        #expect(try store.allDeltas(for: VersionVector()) == before)
        #expect(try store.integrityCheck() == "ok")
        // An entry the index cannot read is damage, named as such, not a crash or a skip.
        try store.connection.execute("UPDATE change_index SET entity = 99 WHERE seq = 1")
        #expect(throws: StoreError.self) { _ = try store.allDeltas(for: VersionVector()) }
    }

    /// A current database back to before migration 9: the clock into `meta`, as it was kept.
    static let undoMigration9 = """
        INSERT INTO meta (key, value) SELECT 'hlc', hlc FROM version_vector WHERE hlc IS NOT NULL
          ON CONFLICT (key) DO UPDATE SET value = max(value, excluded.value);
        ALTER TABLE version_vector DROP COLUMN hlc;
        """

    /// The clock is kept in this replica's row of `version_vector`, beside its counter (one
    /// page written per commit for both); in `meta` before the replica's first change (a
    /// machine that has only received) and in a database from before migration 9. The
    /// larger of the two counts, so the clock never goes back.
    @Test func theClockIsKeptBesideTheCounterAndNeverGoesBack() throws {
        let (a, b) = try pair()
        func ownRow(_ store: ReplicaStore, _ column: String) throws -> Int64? {
            try store.connection.scalarInt("SELECT \(column) FROM version_vector WHERE origin = \(store.replicaID.storage)")
        }
        _ = try a.write(member: nil) { tx in _ = try tx.create(.shoppingItem, "i1", shoppingItem("Milk")) }
        try a.sync(to: b)
        let received = try b.lastTimestamp()
        #expect(try received >= a.lastTimestamp())
        #expect(try b.meta("hlc") == .integer(received.rawValue))
        #expect(try ownRow(b, "seq") == nil)
        // b's first change: its row holds the counter and the clock; meta's stays behind.
        let (_, first) = try b.write(member: nil) { tx in _ = try tx.put(.shoppingItem, "i1", ["name": .text("Oat milk")]) }
        #expect(first[0].hlc > received)
        #expect(try ownRow(b, "seq") == 1)
        #expect(try ownRow(b, "hlc") == first[0].hlc.rawValue)
        #expect(try b.meta("hlc") == .integer(received.rawValue))
        #expect(try b.lastTimestamp() == first[0].hlc)
        // An apply that moves the clock moves it in the row.
        clock.advance(5_000)
        _ = try a.write(member: nil) { tx in _ = try tx.create(.shoppingItem, "i2", shoppingItem("Eggs")) }
        try a.sync(to: b)
        #expect(try b.lastTimestamp() >= a.lastTimestamp())
        #expect(try ownRow(b, "hlc") == b.lastTimestamp().rawValue)
        #expect(try b.meta("hlc") == .integer(received.rawValue))
        // meta ahead of the row (its clock from before migration 9): the next stamp is later still.
        let ahead = try b.lastTimestamp().rawValue + (1 << 30)
        try b.setMeta("hlc", .integer(ahead))
        #expect(try b.lastTimestamp().rawValue == ahead)
        let (_, next) = try b.write(member: nil) { tx in _ = try tx.put(.shoppingItem, "i2", ["name": .text("Brown eggs")]) }
        #expect(next[0].hlc.rawValue > ahead)
        // And after a restart.
        let path = b.path
        let reopened = try ReplicaStore(path: path)
        #expect(try reopened.lastTimestamp() == next[0].hlc)
    }

    /// Migration 7 on a version-6 database: its backlog items (no position) stay complete and
    /// readable, a partial one completes without the new field, and one written with it
    /// syncs to the migrated store.
    @Test func aVersion6DatabaseGainsBacklogPositionsAndKeepsItsRows() throws {
        let path = dir.path("v6.sqlite")
        let item: [String: FieldValue] = ["title": .text("Paint"), "category": .text("c1"), "created": .integer(5), "deleted": .bool(false)]
        do {
            let store = try ReplicaStore(path: path, physicalClock: clock.function)
            try store.write(member: nil) { tx in
                _ = try tx.create(.backlogItem, "b1", RowFields(item))
                _ = try tx.create(.backlogItem, "b2", ["title": .text("Fence"), "category": .text("c1"), "created": .integer(6)])
            }
            try store.connection.execute(Self.undoMigration11 + Self.undoMigration9 + "ALTER TABLE backlog_item DROP COLUMN position; PRAGMA user_version = 6")
        }
        let store = try ReplicaStore(path: path, physicalClock: clock.function)
        #expect(try store.connection.scalarInt("PRAGMA user_version") == Int64(Migrations.latest))
        #expect(try store.rows(.backlogItem).map { "\($0.id) \($0["position"])" } == ["b1 null"])
        try store.write(member: nil) { tx in _ = try tx.put(.backlogItem, "b2", ["deleted": .bool(false)]) }
        #expect(try store.rows(.backlogItem).map(\.id) == ["b1", "b2"]) // completed without a position
        let (peer, _) = try pair()
        try peer.write(member: nil) { tx in _ = try tx.create(.backlogItem, "b3", RowFields(item.merging(["position": .integer(7)]) { $1 })) }
        try peer.sync(to: store)
        #expect(try store.row(.backlogItem, "b3")["position"] == .integer(7))
        #expect(try store.integrityCheck() == "ok")
    }

    /// Fresh ids are distinct, valid, lowercase UUIDs of their version: random ones (the
    /// household's id) version 4, new rows' version 7.
    @Test(arguments: [("4", RowIDRules.random), ("7", RowIDRules.newRowID)] as [(Character, @Sendable () -> String)])
    func freshIDsAreDistinctUUIDsOfTheirVersion(version: Character, make: @Sendable () -> String) throws {
        let ids = (0..<1000).map { _ in make() }
        #expect(Set(ids).count == ids.count)
        for id in ids.prefix(50) {
            #expect(RowIDRules.isValid(id))
            #expect(UUID(uuidString: id)?.uuidString.lowercased() == id)
            #expect(Array(id)[14] == version)
            #expect("89ab".contains(Array(id)[19]))
        }
    }

    /// New rows get version 7 UUIDs (RFC 9562): the Unix milliseconds, the millisecond's
    /// fraction in 12 bits, the variant, then random bits.
    @Test(
        arguments: [
            // (nanoseconds since 1970, random bits, the id)
            (UInt64(0), UInt64(0), "00000000-0000-7000-8000-000000000000"),
            (1_000_000, UInt64.max, "00000000-0001-7000-bfff-ffffffffffff"),
            (1_999_999, 0x0123_4567_89AB_CDEF, "00000000-0001-7fff-8123-456789abcdef"),
            (1_763_800_000_123_456_789, 0xC000_0000_0000_0001, "019aaaac-267b-774f-8000-000000000001"),
        ] as [(UInt64, UInt64, String)])
    func timeOrderedRowIDs(nanoseconds: UInt64, random: UInt64, id: String) {
        #expect(RowIDRules.timeOrdered(unixNanoseconds: nanoseconds, random: random) == id)
    }

    /// Later ids sort later (a quarter of a microsecond apart is enough, whatever the
    /// random bits).
    @Test func newRowIDsSortByTime() {
        var generator = SystemRandomNumberGenerator()
        var time: UInt64 = 1_763_800_000_000_000_000
        var previous = RowIDRules.timeOrdered(unixNanoseconds: time, random: generator.next())
        for step in [245, 1_000, 999_999, 1_000_000, 86_400_000_000_000] as [UInt64] {
            for _ in 0..<50 {
                time += step
                let id = RowIDRules.timeOrdered(unixNanoseconds: time, random: generator.next())
                #expect(previous.utf8.lexicographicallyPrecedes(id.utf8), "\(previous) \(id)")
                previous = id
            }
        }
    }

    @Test func rowVersionsRoundTripAndRefuseDamage() throws {
        let stamp = Stamp(hlc: HybridTimestamp(rawValue: 1 << 40), origin: ReplicaID(rawValue: 0xFFFF_FFFF_FFFF_FFFE))
        let later = Stamp(hlc: HybridTimestamp(rawValue: 1 << 41), origin: ReplicaID(rawValue: 7))
        let member = RowIDRules.random()
        let schema = EntityKind.task.schema
        let fields = try #require(
            VersionedRow(
                schema,
                byName: [
                    "title": FieldVersion(value: .text("Crème brûlée 🍮"), stamp: stamp, seq: 300, base: nil, member: member),
                    "done": FieldVersion(value: .integer(1), stamp: later, seq: 1 << 40, base: stamp, member: nil),
                    "due": FieldVersion(value: .null, stamp: stamp, seq: 300, base: nil, member: member),
                    "period": FieldVersion(value: .integer(-5), stamp: stamp, seq: 1, base: nil, member: "anna"), // not its column's type
                    "assignee": FieldVersion(value: .text("tom"), stamp: later, seq: 2, base: nil, member: "Not-A-UUID"),
                    // The same change as `title` by its stamp and number, with another member: kept as given.
                    "template": FieldVersion(value: .text("t9"), stamp: stamp, seq: 300, base: nil, member: "bob"),
                ]))
        func column(_ number: Int) -> FieldValue { fields[number]?.value ?? .null }
        let partial = RowVersions.encode(fields, inTypedRow: false)
        let typed = RowVersions.encode(fields, inTypedRow: true)
        #expect(typed.count < partial.count - 20, "the typed row's values are left to its columns")
        #expect(try partial.withUnsafeBytes { try RowVersions.decode($0, schema: schema, column: nil) } == fields)
        #expect(try typed.withUnsafeBytes { try RowVersions.decode($0, schema: schema, column: column) } == fields)
        // A record that leaves values to columns cannot be read without them.
        #expect(throws: RowVersions.DecodingError.self) { try typed.withUnsafeBytes { try RowVersions.decode($0, schema: schema, column: nil) } }
        for bytes in [partial, typed] {
            for cut in 0..<bytes.count {
                #expect(throws: RowVersions.DecodingError.self) {
                    try bytes.prefix(cut).withUnsafeBytes { try RowVersions.decode($0, schema: schema, column: column) }
                }
            }
            #expect(throws: RowVersions.DecodingError.self) { try (bytes + [0]).withUnsafeBytes { try RowVersions.decode($0, schema: schema, column: column) } }
        }
        // Format 1 (databases before migration 8) still reads.
        let format1 = Format1.encode(fields)
        #expect(try format1.withUnsafeBytes { try RowVersions.decode($0, schema: schema, column: nil) } == fields)
        // A member id is held as its 16 bytes only when it is a lowercase UUID (the record
        // holds them), and reads back as the same text; any other text stays text.
        let words = try #require(Hex.uuidWords(member))
        #expect(TextID(member) == .uuid(words.0, words.1) && TextID(member).text == member)
        let memberBytes = try #require(Hex.bytes(member.replacingOccurrences(of: "-", with: "")))
        #expect(partial.indices.contains { Array(partial[$0...].prefix(16)) == memberBytes })
        #expect(!partial.indices.contains { Array(partial[$0...].prefix(36)) == Array(member.utf8) })
        for notUUID in [
            member.uppercased(), member + "0", String(member.dropLast()), String(member.dropLast()) + "g", member.replacingOccurrences(of: "-", with: "_"), "",
        ] {
            #expect(TextID(notUUID) == .text(notUUID) && TextID(notUUID).text == notUUID, "\(notUUID)")
        }
        // A damaged record in the database is a clear error, not a crash or a silent gap.
        let (a, _) = try pair()
        try a.write(member: nil) { try $0.put(.shoppingItem, "i1", shoppingItem("Milk")) }
        try a.connection.execute("UPDATE shopping_item SET versions = x'02ff' WHERE id = 'i1'")
        #expect { try a.row(.shoppingItem, "i1") } throws: { String(describing: $0).contains("unreadable") }
        #expect(throws: StoreError.self) { try a.allDeltas(for: VersionVector()) }
    }

    @Test func refusesAFileThatIsNotADatabase() throws {
        let path = dir.path("junk.sqlite")
        try Data(repeating: 0x41, count: 4096).write(to: URL(fileURLWithPath: path))
        #expect { try ReplicaStore(path: path) } throws: { String(describing: $0).contains("not a pulse-peer database") }
    }

    @Test func localWritesAreNumberedStampedAndSurviveReopening() throws {
        let path = dir.path("w.sqlite")
        var stamps: [HybridTimestamp] = []
        do {
            let store = try ReplicaStore(path: path, physicalClock: clock.function)
            let (_, changes) = try store.write(member: "anna") { tx in
                try tx.put(.shoppingItem, "i1", shoppingItem("Milk"))
                try tx.put(.shoppingItem, "i2", shoppingItem("Eggs"))
            }
            #expect(changes.map(\.seq) == [1, 2])
            #expect(changes.allSatisfy { $0.member == "anna" })
            stamps = changes.map(\.hlc)
            #expect(stamps[1] > stamps[0])
            #expect(try store.versionVector() == VersionVector([store.replicaID: 2]))
        }
        clock.advance(-60_000) // the wall clock goes back a minute across the restart
        let store = try ReplicaStore(path: path, physicalClock: clock.function)
        #expect(try store.value(.shoppingItem, "i2", "name") == .text("Eggs"))
        let (_, later) = try store.write(member: nil) { tx in try tx.put(.shoppingItem, "i1", ["state": .text("restock")]) }
        #expect(later[0].seq == 3)
        #expect(later[0].hlc > stamps[1])
        // The typed projection follows.
        let state = try store.connection.query("SELECT state FROM shopping_item WHERE id = 'i1'") { try $0.step() ? $0.text(0) : "" }
        #expect(state == "restock")
    }

    @Test func aFailedLocalTransactionLeavesNothing() throws {
        let (a, _) = try pair()
        #expect(throws: StoreError.self) {
            try a.write(member: nil) { tx in
                try tx.put(.shoppingItem, "i1", shoppingItem("Milk"))
                try tx.put(.shoppingItem, "i2", shoppingItem("")) // invalid: the whole transaction rolls back
            }
        }
        #expect(try a.versionVector().isEmpty)
        #expect(try a.canonicalState().isEmpty)
    }

    // MARK: Merge rules

    @Test func aRowWaitsInPartialRowUntilItsLastFieldArrives() throws {
        let (a, b) = try pair()
        try a.write(member: nil) { try $0.put(.shoppingItem, "i1", shoppingItem("Milk")) }
        try a.write(member: nil) { try $0.put(.shoppingItem, "i1", ["name": .text("Oat milk")]) }
        let changes = try a.allDeltas(for: VersionVector()).flatMap(\.changes)
        // The rename arrives first (as it can, relayed by another machine): a partial row.
        try b.apply(DeltaBatch(changes: [changes[1]]))
        #expect(try b.connection.scalarInt("SELECT count(*) FROM shopping_item") == 0)
        #expect(try b.connection.scalarInt("SELECT count(*) FROM partial_row") == 1)
        #expect(try b.row(.shoppingItem, "i1") == ["name": .text("Oat milk")])
        // The creation completes it: one typed row, nothing left waiting, same state as A.
        try b.apply(DeltaBatch(changes: [changes[0]], coverage: [Coverage(origin: a.replicaID, after: 0, upTo: 2)]))
        #expect(try b.connection.scalarInt("SELECT count(*) FROM partial_row") == 0)
        #expect(try b.connection.query("SELECT name FROM shopping_item WHERE id = 'i1'") { try $0.step() ? $0.text(0) : nil } == "Oat milk")
        #expect(try b.canonicalState() == (try a.canonicalState()))
        // And B can serve both changes to a third replica from its own tables.
        #expect(try b.allDeltas(for: VersionVector()).flatMap(\.changes).count == 2)
    }

    @Test func createMakesARowWithoutReadingAndNeverOverwrites() throws {
        let (a, b) = try pair()
        try a.write(member: "anna") { try $0.create(.shoppingItem, "i1", shoppingItem("Milk")) }
        #expect(try a.row(.shoppingItem, "i1") == shoppingItem("Milk"))
        // Replicates like any other change: one change with every field.
        for batch in try a.allDeltas(for: b.versionVector()) { try b.apply(batch) }
        #expect(try b.canonicalState() == (try a.canonicalState()))
        // An id that exists after all: refused on the primary key, the transaction rolls
        // back, and nothing of the row, the index or the version vector moves.
        let vector = try a.versionVector()
        #expect(throws: StoreError.self) {
            try a.write(member: "tom") { tx in
                try tx.put(.shoppingItem, "i2", shoppingItem("Bread"))
                try tx.create(.shoppingItem, "i1", shoppingItem("Eggs"))
            }
        }
        #expect(try a.row(.shoppingItem, "i1") == shoppingItem("Milk"))
        #expect(try a.row(.shoppingItem, "i2").isEmpty)
        #expect(try a.versionVector() == vector)
        #expect(try a.allDeltas(for: VersionVector()).flatMap(\.changes).count == 1)
    }

    /// New rows and index entries are held and made by multi-row inserts (HeldInserts.swift);
    /// every statement after them must still see them: a read of a held row, a rename of
    /// one, a write that supersedes a held row's every field (its index entry leaves).
    @Test func heldInsertsAreSeenByEveryLaterStatement() throws {
        let (a, b) = try pair()
        let count = HeldInserts.chunk * 2 + HeldInserts.smallChunk + 3 // every statement size
        try a.write(member: "anna") { tx in
            for i in 0..<count { try tx.create(.shoppingItem, "n\(i)", shoppingItem("Item \(i)")) }
            // A row and an index entry each, made a full chunk of each at a time: the last
            // ones are still held.
            #expect(a.connection.held.count == (count * 2) % HeldInserts.flushAt && a.connection.held.count > 0)
            #expect(try a.row(.shoppingItem, "n\(count - 1)") == shoppingItem("Item \(count - 1)")) // held until this read
            #expect(a.connection.held.count == 0)
            #expect(try a.row(.shoppingItem, "n5") == shoppingItem("Item 5")) // made with the first chunk
            for i in count..<count + 3 { try tx.create(.shoppingItem, "n\(i)", shoppingItem("Item \(i)")) }
            try tx.put(.shoppingItem, "n\(count + 1)", ["name": .text("Renamed")])
            try tx.create(.shoppingItem, "m", shoppingItem("Held"))
            try tx.put(.shoppingItem, "m", shoppingItem("Replaced", listed: 2))
        }
        #expect(a.connection.held.count == 0)
        #expect(try a.connection.scalarInt("SELECT count(*) FROM shopping_item") == Int64(count + 4))
        #expect(try a.row(.shoppingItem, "n\(count + 1)")["name"] == .text("Renamed"))
        #expect(try a.row(.shoppingItem, "m") == shoppingItem("Replaced", listed: 2))
        // Every create, the rename and the replacement; not the create of "m", superseded whole.
        #expect(try a.connection.scalarInt("SELECT count(*) FROM change_index") == Int64(count + 3 + 1 + 1))
        #expect(try a.versionVector()[a.replicaID] == UInt64(count + 3 + 3))
        // The other side applies them through the same held inserts, and serves them again.
        for batch in try a.allDeltas(for: b.versionVector()) { try b.apply(batch) }
        #expect(try b.canonicalState() == (try a.canonicalState()))
        #expect(try b.connection.scalarInt("SELECT count(*) FROM change_index") == Int64(count + 5))
        #expect(try b.allDeltas(for: VersionVector()).flatMap(\.changes).count == count + 5)
        #expect(try a.integrityCheck() == "ok" && (try b.integrityCheck()) == "ok")
    }

    /// A row whose id sorts after every id of its table is taken as new without a read; one
    /// that sorts before, or equal to, the last is read first, and merges with what is there.
    @Test func onlyRowsAfterTheLastIDAreTakenAsNewUnread() throws {
        let (a, b) = try pair()
        try b.write(member: nil) { tx in
            try tx.put(.shoppingItem, "k5", shoppingItem("B's five", listed: 5))
            try tx.put(.shoppingItem, "k3", shoppingItem("B's three", listed: 3))
        }
        clock.advance(10)
        try a.write(member: nil) { tx in
            for id in ["k1", "k5", "k50", "k9", "k3"] { try tx.put(.shoppingItem, id, shoppingItem("A's \(id)", listed: 9)) }
        }
        let outcome = try b.apply(try #require(try a.allDeltas(for: b.versionVector()).first))
        #expect(outcome.applied.count == 5)
        // k5 (the last id) and k3 were B's, read, and A's later write won every field, each loss
        // logged; k1 was read and absent; k50 and k9 sort after k5: new, unread.
        #expect(try b.row(.shoppingItem, "k5") == shoppingItem("A's k5", listed: 9))
        #expect(try b.conflicts().count == 2 * 2) // name and listed of k5 and of k3
        try b.sync(to: a)
        #expect(try a.canonicalState() == (try b.canonicalState()))
        #expect(try b.connection.scalarInt("SELECT count(*) FROM shopping_item") == 5)
        // The same batch again: every row is there now, nothing is new.
        #expect(try b.apply(try #require(try a.allDeltas(for: VersionVector()).first)).applied.isEmpty)
    }

    /// A held row refused inside a chunk is named (the chunk is rerun row by row), and the
    /// transaction leaves nothing, as when each insert ran at once.
    @Test func aHeldRowRefusedInsideAChunkIsNamedAndNothingIsWritten() throws {
        let (a, b) = try pair()
        try a.write(member: nil) { try $0.create(.shoppingItem, "taken", shoppingItem("First")) }
        let vector = try a.versionVector(), state = try a.canonicalState()
        for position in [3, 70, HeldInserts.chunk + HeldInserts.smallChunk + 1] { // in a chunk, a small chunk, alone
            do {
                try a.write(member: nil) { tx in
                    for i in 0..<(HeldInserts.chunk + HeldInserts.smallChunk + 2) {
                        try tx.create(.shoppingItem, i == position ? "taken" : "n\(i)", shoppingItem("Item \(i)"))
                    }
                }
                Issue.record("a row id already taken was accepted at \(position)")
            } catch let StoreError.constraint(entity, rowID, _) {
                #expect(entity == .shoppingItem && rowID == "taken")
            }
            #expect(a.connection.held.count == 0)
            #expect(try a.versionVector() == vector)
            #expect(try a.canonicalState() == state)
            #expect(try a.connection.scalarInt("SELECT count(*) FROM change_index") == 1)
        }
        // A batch that names one change on two rows (forged) is refused whole, naming the second.
        try a.write(member: nil) { tx in for i in 0..<3 { try tx.create(.shoppingItem, "f\(i)", shoppingItem("F\(i)")) } }
        let changes = try a.allDeltas(for: VersionVector()).flatMap(\.changes)
        let forged = Change(
            origin: changes[2].origin, seq: changes[1].seq, hlc: changes[2].hlc, member: nil,
            entity: .shoppingItem, rowID: changes[2].rowID, fields: changes[2].fields)
        do {
            try b.apply(DeltaBatch(changes: [changes[0], changes[1], forged]))
            Issue.record("one change on two rows was accepted")
        } catch let StoreError.constraint(_, rowID, _) {
            #expect(rowID == changes[2].rowID)
        }
        #expect(try b.canonicalState().isEmpty && (try b.versionVector()).isEmpty)
    }

    /// Held rows bind their text and blobs in place (one room per statement): every value
    /// of a chunk, a small chunk and single rows comes back as written, whatever its length
    /// and bytes, and a peer syncing them gets the same rows (the index's row ids too, as
    /// 16 bytes for a UUID and as text for any other id).
    @Test func heldRowsBoundInPlaceComeBackAsWritten() throws {
        let (a, b) = try pair()
        let count = HeldInserts.chunk + HeldInserts.smallChunk + 3
        let names = (0..<count).map { i in
            [String(repeating: "x", count: 1 + i % 200), "Crème brûlée \(i)", "🥛 \(i)", "Ä"][i % 4]
        }
        let ids = (0..<count).map { $0.isMultiple(of: 3) ? "plain-\($0)" : RowIDRules.newRowID() }
        try a.write(member: "anna") { tx in
            for (id, name) in zip(ids, names) { try tx.create(.shoppingItem, id, shoppingItem(name)) }
        }
        let rows = try a.canonicalState()[.shoppingItem] ?? [:]
        #expect(rows.count == count)
        for (id, name) in zip(ids, names) { #expect(rows[id]?["name"] == .text(name), "\(id)") }
        for batch in try a.allDeltas(for: VersionVector()) { try b.apply(batch) }
        #expect(try b.canonicalState() == a.canonicalState())
        #expect(Set(try a.allDeltas(for: VersionVector()).flatMap(\.changes).map(\.rowID)) == Set(ids))
    }

    @Test func concurrentEditsOfDifferentFieldsBothSurvive() throws {
        let (a, b) = try pair()
        try a.write(member: "anna") {
            try $0.put(
                .task, "t1",
                [
                    "title": .text("Paint fence"), "done": .bool(false), "assignee": .null, "due": .null,
                    "created": .integer(1), "template": .null, "period": .null, "deleted": .bool(false),
                ])
        }
        try a.sync(to: b)
        clock.advance(10)
        try a.write(member: "anna") { try $0.put(.task, "t1", ["title": .text("Paint the fence")]) }
        try b.write(member: "tom") { try $0.put(.task, "t1", ["due": .text("2026-11-22")]) }
        try a.sync(to: b)
        try b.sync(to: a)
        for store in [a, b] {
            #expect(try store.value(.task, "t1", "title") == .text("Paint the fence"))
            #expect(try store.value(.task, "t1", "due") == .text("2026-11-22"))
            #expect(try store.conflicts().isEmpty)
        }
    }

    @Test func sameFieldResolvesToOneWinnerEverywhereAndIsLoggedOnBothSides() throws {
        let (a, b) = try pair()
        try a.write(member: "anna") { try $0.put(.shoppingItem, "i1", shoppingItem("Milk")) }
        try a.sync(to: b)
        clock.advance(5)
        try a.write(member: "anna") { try $0.put(.shoppingItem, "i1", ["name": .text("Oat milk")]) }
        try b.write(member: "tom") { try $0.put(.shoppingItem, "i1", ["name": .text("Whole milk")]) }
        // Same physical millisecond on both machines: the tie is broken by replica id (B > A).
        try a.sync(to: b)
        try b.sync(to: a)
        #expect(try a.value(.shoppingItem, "i1", "name") == .text("Whole milk"))
        #expect(try b.value(.shoppingItem, "i1", "name") == .text("Whole milk"))

        let onA = try a.conflicts()
        #expect(onA.count == 1)
        #expect(onA[0].kind == .overwritten)
        #expect(onA[0].lost.value == .text("Oat milk") && onA[0].lost.member == "anna")
        #expect(onA[0].kept.value == .text("Whole milk") && onA[0].kept.member == "tom")
        let onB = try b.conflicts()
        #expect(onB.count == 1)
        #expect(onB[0].kind == .rejected)
        #expect(onB[0].lost.value == .text("Oat milk"))
        #expect(onB[0].kept.value == .text("Whole milk"))
    }

    @Test func laterEditOfASeenValueIsNoConflict() throws {
        let (a, b) = try pair()
        try a.write(member: "anna") { try $0.put(.shoppingItem, "i1", shoppingItem("Milk")) }
        try a.sync(to: b)
        clock.advance(5)
        try b.write(member: "tom") { try $0.put(.shoppingItem, "i1", ["name": .text("Milk 2L")]) }
        try b.sync(to: a)
        #expect(try a.value(.shoppingItem, "i1", "name") == .text("Milk 2L"))
        #expect(try a.conflicts().isEmpty)
        #expect(try b.conflicts().isEmpty)
    }

    @Test func editVersusDeleteKeepsTheRowDeletedAndLogsTheEditOnBothSides() throws {
        let (a, b) = try pair()
        let fields: [String: FieldValue] = ["title": .text("Plan trip"), "category": .text("c1"), "created": .integer(1), "deleted": .bool(false)]
        try a.write(member: "anna") { try $0.put(.backlogItem, "x1", RowFields(fields)) }
        try a.sync(to: b)
        clock.advance(5)
        try a.write(member: "anna") { try $0.put(.backlogItem, "x1", ["deleted": .bool(true)]) }
        clock.advance(5)
        try b.write(member: "tom") { try $0.put(.backlogItem, "x1", ["title": .text("Plan trip to Rome")]) }
        try a.sync(to: b)
        try b.sync(to: a)
        for store in [a, b] {
            #expect(try store.value(.backlogItem, "x1", "deleted") == .bool(true))
            #expect(try store.value(.backlogItem, "x1", "title") == .text("Plan trip to Rome")) // kept, restorable
            let log = try store.conflicts()
            #expect(log.count == 1)
            #expect(log.first?.kind == .editOfDeleted)
            #expect(log.first?.lost.value == .text("Plan trip to Rome"))
        }
        #expect(try a.canonicalState() == b.canonicalState())
    }

    @Test func applyingTheSameBatchTwiceChangesNothing() throws {
        let (a, b) = try pair()
        try a.write(member: nil) { tx in for i in 0..<20 { try tx.put(.shoppingItem, "i\(i)", shoppingItem("Item \(i)")) } }
        let batches = try a.allDeltas(for: VersionVector())
        let first = try b.apply(batches[0])
        #expect(first.applied.count == 20)
        let state = try b.canonicalState(), vector = try b.versionVector()
        let second = try b.apply(batches[0])
        #expect(second.applied.isEmpty && second.ignored == 20)
        #expect(try b.canonicalState() == state)
        #expect(try b.versionVector() == vector)
    }

    @Test func aBatchAfterAGapAppliesItsChangesButDoesNotClaimTheGap() throws {
        let (a, b) = try pair()
        try a.write(member: nil) { tx in for i in 0..<10 { try tx.put(.shoppingItem, "i\(i)", shoppingItem("Item \(i)")) } }
        let batches = try a.allDeltas(for: VersionVector(), batchLimit: 4)
        #expect(batches.count == 3)
        try b.apply(batches[2]) // out of order: changes 9...10
        #expect(try b.value(.shoppingItem, "i9", "name") == .text("Item 9"))
        #expect(try b.versionVector()[a.replicaID] == 0) // 1...8 still missing
        try b.apply(batches[0])
        #expect(try b.versionVector()[a.replicaID] == 4)
        try b.apply(batches[1])
        #expect(try b.versionVector()[a.replicaID] == 8)
        try a.sync(to: b) // asks again from 8
        #expect(try b.versionVector() == a.versionVector())
        #expect(try b.canonicalState() == a.canonicalState())
    }

    // MARK: Deltas

    @Test func deltaIsEmptyOnceInSyncWhateverTheSize() throws {
        let (a, b) = try pair()
        try a.write(member: nil) { tx in for i in 0..<3000 { try tx.put(.shoppingItem, "i\(i)", shoppingItem("Item \(i)")) } }
        try b.write(member: nil) { tx in
            for i in 0..<500 { try tx.put(.backlogCategory, "c\(i)", ["title": .text("C\(i)"), "position": .integer(Int64(i)), "deleted": .bool(false)]) }
        }
        try a.sync(to: b, batchLimit: 256)
        try b.sync(to: a, batchLimit: 256)
        #expect(try a.versionVector() == b.versionVector())
        #expect(try a.allDeltas(for: b.versionVector()).isEmpty)
        #expect(try b.allDeltas(for: a.versionVector()).isEmpty)
        #expect(try a.deltas(for: b.versionVector()).lagCount == 0)
    }

    @Test func batchesAreBoundedAndCarryWholeChanges() throws {
        let (a, b) = try pair()
        try a.write(member: nil) { tx in for i in 0..<100 { try tx.put(.shoppingItem, "i\(i)", shoppingItem("Item \(i)")) } }
        let batches = try a.allDeltas(for: VersionVector(), batchLimit: 7)
        #expect(batches.count == 15)
        for batch in batches {
            #expect(batch.changes.count <= 7)
            #expect(batch.changes.allSatisfy { $0.fields.count == 3 })
        }
        for batch in batches { try b.apply(batch) }
        #expect(try b.canonicalState() == a.canonicalState())
    }

    @Test func supersededChangesAreNotResentButTheirNumbersAreCovered() throws {
        let (a, b) = try pair()
        try a.write(member: nil) { try $0.put(.shoppingItem, "i1", shoppingItem("Milk")) }
        for n in 0..<50 {
            clock.advance(1)
            try a.write(member: nil) { try $0.put(.shoppingItem, "i1", ["name": .text("Milk \(n)")]) }
        }
        let batches = try a.allDeltas(for: VersionVector())
        #expect(batches.flatMap(\.changes).count == 2) // the create's other fields, the last rename
        // The index keeps only changes that still hold a field.
        #expect(try a.connection.scalarInt("SELECT count(*) FROM change_index") == 2)
        for batch in batches { try b.apply(batch) }
        #expect(try b.versionVector()[a.replicaID] == 51)
        #expect(try b.value(.shoppingItem, "i1", "name") == .text("Milk 49"))
    }

    @Test func theSnapshotIgnoresWritesMadeWhileStreaming() throws {
        let (a, b) = try pair()
        try a.write(member: nil) { tx in for i in 0..<10 { try tx.put(.shoppingItem, "i\(i)", shoppingItem("Item \(i)")) } }
        let cursor = try a.deltas(for: VersionVector(), batchLimit: 4)
        let first = try #require(try cursor.next())
        try a.write(member: nil) { try $0.put(.shoppingItem, "late", shoppingItem("Late")) } // not blocked by the reader
        var rest: [DeltaBatch] = []
        while let batch = try cursor.next() { rest.append(batch) }
        #expect(cursor.snapshotVector[a.replicaID] == 10)
        for batch in [first] + rest { try b.apply(batch) }
        #expect(try b.versionVector()[a.replicaID] == 10)
        #expect(try b.value(.shoppingItem, "late", "name") == nil)
    }

    // MARK: Wiped and fresh replicas

    @Test func aFreshReplicaLearnsAndErasesNothing() throws {
        let (a, b) = try pair()
        try a.write(member: nil) { tx in for i in 0..<30 { try tx.put(.shoppingItem, "i\(i)", shoppingItem("Item \(i)")) } }
        try a.sync(to: b)
        // B's database is wiped: a new database, a new replica id.
        let wiped = try makeStore(dir, "b-again", clock: clock, id: 0xB2)
        try wiped.sync(to: a) // it has nothing to send...
        try a.sync(to: wiped) // ...and learns everything
        #expect(try a.canonicalState() == b.canonicalState())
        #expect(try wiped.canonicalState() == a.canonicalState())
        // Its new writes are numbered afresh and not mistaken for B's old ones.
        try wiped.write(member: nil) { try $0.put(.shoppingItem, "new", shoppingItem("Bread")) }
        try wiped.sync(to: a)
        #expect(try a.value(.shoppingItem, "new", "name") == .text("Bread"))
    }

    // MARK: Bad input

    func assertRefusedAndUnchanged(_ store: ReplicaStore, _ batch: DeltaBatch, mentioning text: String) throws {
        let state = try store.canonicalState(), vector = try store.versionVector(), clock = try store.lastTimestamp()
        #expect { try store.apply(batch) } throws: { String(describing: $0).contains(text) }
        #expect(try store.canonicalState() == state)
        #expect(try store.versionVector() == vector)
        #expect(try store.lastTimestamp() == clock)
    }

    @Test func malformedChangesAreRefusedAndChangeNothing() throws {
        let (a, b) = try pair()
        try a.write(member: nil) { try $0.put(.shoppingItem, "ok", shoppingItem("Milk")) }
        let good = try a.allDeltas(for: VersionVector())[0]
        let origin = ReplicaID(rawValue: 0xC)
        func batch(_ fields: [FieldWrite], entity: EntityKind = .shoppingItem, row: String = "x", hlc: HybridTimestamp? = nil) -> DeltaBatch {
            let change = Change(
                origin: origin, seq: 1, hlc: hlc ?? HybridTimestamp(milliseconds: clock.now), member: nil,
                entity: entity, rowID: row, fields: fields)
            // A valid change first: the whole batch must be refused, not just the bad part.
            return DeltaBatch(changes: good.changes + [change], coverage: good.coverage + [Coverage(origin: origin, after: 0, upTo: 1)])
        }
        // A field this release does not know is kept (OpenSchemaTests), within the bounds of what is kept.
        try assertRefusedAndUnchanged(b, batch([FieldWrite(field: "Price!", value: .integer(3))]), mentioning: "a field name is")
        try assertRefusedAndUnchanged(b, batch([FieldWrite(field: "name", value: .integer(3))]), mentioning: "expected text")
        try assertRefusedAndUnchanged(
            b, batch([FieldWrite(field: "name", value: .text(String(repeating: "x", count: 10_000)))]),
            mentioning: "longer than")
        try assertRefusedAndUnchanged(b, batch([FieldWrite(field: "name", value: .text("x"))], row: "../etc"), mentioning: "invalid row id")
        // Changes in the receiver's own name that it never made.
        let forged = Change(
            origin: b.replicaID, seq: 7, hlc: HybridTimestamp(milliseconds: clock.now), member: nil,
            entity: .shoppingItem, rowID: "f", fields: [FieldWrite(field: "name", value: .text("Forged"))])
        try assertRefusedAndUnchanged(b, DeltaBatch(changes: [forged]), mentioning: "never made")
        try assertRefusedAndUnchanged(b, DeltaBatch(coverage: [Coverage(origin: b.replicaID, after: 0, upTo: 5)]), mentioning: "never made")
        // The good batch alone still applies.
        try b.apply(good)
        #expect(try b.value(.shoppingItem, "ok", "name") == .text("Milk"))
    }

    /// A write's fields are pairs as given (``RowFields``): the change lists them in the
    /// order of their names whatever order they came in, and a name given twice, an unknown
    /// one, a bad member or a bad value refuses the write and changes nothing.
    @Test func aWritesFieldsAreCheckedAndListedByName() throws {
        let (a, _) = try pair()
        let (_, made) = try a.write(member: "anna") { tx in
            _ = try tx.create(.shoppingItem, "i1", ["state": .text("active"), "listed": .integer(3), "name": .text("Milk")])
            _ = try tx.create(.shoppingItem, "i2", ["name": .text("Eggs"), "state": .text("active"), "listed": .integer(4)])
            _ = try tx.put(.task, "t1", RowFields(["title": .text("Bins"), "done": .bool(false), "created": .integer(1), "deleted": .bool(false)]))
        }
        #expect(
            made.map { $0.fields.map(\.field) } == [
                ["listed", "name", "state"], ["listed", "name", "state"],
                ["created", "deleted", "done", "title"],
            ])
        #expect(made.allSatisfy { $0.member == "anna" })
        let before = try a.canonicalState(), vector = try a.versionVector()
        func refused(_ member: String?, _ fields: RowFields, _ expected: ChangeValidationError) {
            #expect {
                try a.write(member: member) { tx in
                    _ = try tx.create(.shoppingItem, "ok", shoppingItem("Fine")) // a good change first: rolled back too
                    _ = try tx.create(.shoppingItem, "bad", fields)
                }
            } throws: { error in
                guard case let .invalidChange(reason, _, _) = error as? StoreError else { return false }
                return reason == expected
            }
        }
        refused(
            nil, ["name": .text("A"), "state": .text("active"), "name": .text("B"), "listed": .integer(1)],
            .duplicateField(.shoppingItem, "name"))
        refused(
            nil, ["name": .text("A"), "zz": .integer(1), "colour": .text("red"), "state": .text("active")],
            .unknownField(.shoppingItem, "colour")) // the first unknown name in name order
        refused("not a member id!", shoppingItem("A"), .badMember)
        refused(
            nil, ["name": .text(""), "state": .text("active"), "listed": .integer(1)],
            .badValue(.shoppingItem, field: "name", reason: "may not be empty"))
        refused(nil, [:], .emptyChange)
        #expect(try a.canonicalState() == before)
        #expect(try a.versionVector() == vector)
        #expect(a.connection.held.count == 0)
    }

    /// A write told it need not keep its changes returns none, and writes everything as
    /// the one that keeps them: rows, counter, clock and index.
    @Test func aWriteThatKeepsNoChangesWritesTheSame() throws {
        let (a, b) = try pair()
        let (count, kept) = try a.write(member: nil, keepingChanges: false) { tx in
            for i in 0..<150 { try tx.create(.shoppingItem, "n\(i)", shoppingItem("Item \(i)")) }
            return 150
        }
        #expect(count == 150 && kept.isEmpty)
        let (_, next) = try a.write(member: nil) { tx in _ = try tx.create(.shoppingItem, "last", shoppingItem("Last")) }
        #expect(next.map(\.seq) == [151])
        #expect(try a.versionVector()[a.replicaID] == 151)
        #expect(try a.connection.scalarInt("SELECT count(*) FROM change_index") == 151)
        try a.sync(to: b)
        #expect(try b.canonicalState() == (try a.canonicalState()))
        #expect(try b.allDeltas(for: VersionVector()).flatMap(\.changes).count == 151)
    }

    @Test func immutableFieldsCannotBeRewritten() throws {
        let (a, b) = try pair()
        let entry: [String: FieldValue] = [
            "kid": .text("k1"), "kind": .text("earn"), "peanuts": .integer(2), "selection": .null,
            "title": .text("Made the bed"), "created": .integer(5), "hidden": .bool(false),
        ]
        try a.write(member: nil) { try $0.put(.ledgerEntry, "e1", RowFields(entry)) }
        try a.sync(to: b)
        #expect(throws: StoreError.self) { try a.write(member: nil) { try $0.put(.ledgerEntry, "e1", ["peanuts": .integer(20)]) } }
        try a.write(member: nil) { try $0.put(.ledgerEntry, "e1", ["hidden": .bool(true)]) } // the one mutable field
        let tampered = Change(
            origin: ReplicaID(rawValue: 0xC), seq: 1, hlc: HybridTimestamp(milliseconds: clock.now), member: nil,
            entity: .ledgerEntry, rowID: "e1", fields: [FieldWrite(field: "peanuts", value: .integer(20))])
        try assertRefusedAndUnchanged(b, DeltaBatch(changes: [tampered]), mentioning: "set once")
    }

    @Test func theSchemaConstraintsHaveTheLastWord() throws {
        let (a, _) = try pair()
        #expect(throws: SQLiteError.self) {
            try a.connection.execute("INSERT INTO shopping_item (id, name, state, listed) VALUES ('z', 'Milk', 'bought', 1)")
        }
        #expect(throws: SQLiteError.self) {
            try a.connection.execute("INSERT INTO task (id, title, done, created, deleted) VALUES ('z', 'x', 2, 1, 0)")
        }
    }

    @Test func rowsAppearInTheirTableOnlyWhenComplete() throws {
        let (a, b) = try pair()
        try a.write(member: nil) { try $0.put(.shoppingItem, "i1", shoppingItem("Milk")) }
        try a.sync(to: b)
        clock.advance(1)
        try a.write(member: nil) { try $0.put(.shoppingItem, "i2", shoppingItem("Eggs")) }
        try a.write(member: nil) { try $0.put(.shoppingItem, "i2", ["name": .text("Free-range eggs")]) }
        // Deliver only the rename (the second change) first: i2 is incomplete on B.
        let rename = try a.allDeltas(for: b.versionVector()).flatMap(\.changes).filter { $0.fields.map(\.field) == ["name"] }
        try b.apply(DeltaBatch(changes: rename))
        let count = { try b.connection.scalarInt("SELECT count(*) FROM shopping_item") }
        #expect(try count() == 1)
        try a.sync(to: b)
        #expect(try count() == 2)
        #expect(try b.value(.shoppingItem, "i2", "name") == .text("Free-range eggs"))
    }

    /// A machine whose clock is ahead: its far-future changes wait, everything else flows.
    @Test func changesStampedTooFarAheadAreHeldAndMergedWhenTheClockCatchesUp() throws {
        let (a, b) = try pair()
        let skewed = ReplicaID(rawValue: 0xC)
        let ahead = HybridTimestamp(milliseconds: clock.now + 15 * 60_000)
        let future = Change(
            origin: skewed, seq: 1, hlc: ahead, member: nil, entity: .shoppingItem, rowID: "f",
            fields: shoppingItem("From the future").map { FieldWrite(field: $0.key, value: $0.value) })
        try a.write(member: nil) { try $0.put(.shoppingItem, "ok", shoppingItem("Milk")) }
        let good = try a.allDeltas(for: VersionVector())[0]
        let outcome = try b.apply(
            DeltaBatch(
                changes: good.changes + [future],
                coverage: good.coverage + [Coverage(origin: skewed, after: 0, upTo: 1)]))
        // The good change is merged at once; the future one is kept, not merged, and not claimed.
        #expect(outcome.applied.map(\.rowID) == ["ok"])
        #expect(outcome.held == [future])
        #expect(try b.value(.shoppingItem, "ok", "name") == .text("Milk"))
        #expect(try b.row(.shoppingItem, "f").isEmpty)
        #expect(try b.versionVector()[skewed] == 0)
        #expect(try b.versionVector()[a.replicaID] == 1)
        #expect(try b.lastTimestamp() < ahead) // the clock was not dragged forward
        #expect(try b.heldChanges().count == 1)
        // Offered again: still held, once.
        _ = try b.apply(DeltaBatch(changes: [future], coverage: [Coverage(origin: skewed, after: 0, upTo: 1)]))
        #expect(try b.heldChanges().count == 1)
        #expect(try b.releaseHeldChanges() == nil) // not yet due
        // Five minutes on, the stamp is within the 10-minute bound: merged, and forgotten.
        clock.advance(5 * 60_000 + 1)
        let released = try #require(try b.releaseHeldChanges())
        #expect(released.applied == [future])
        #expect(try b.value(.shoppingItem, "f", "name") == .text("From the future"))
        #expect(try b.heldChanges().count == 0)
        // The coverage claimed while it was held is taken at once: no other session needed,
        // and a third machine gets the change from b.
        #expect(released.versionVector[skewed] == 1)
        #expect(try b.versionVector()[skewed] == 1)
        let c = try makeStore(dir, "c", clock: clock, id: 0xD)
        try b.sync(to: c)
        #expect(try c.value(.shoppingItem, "f", "name") == .text("From the future"))
        #expect(try c.versionVector()[skewed] == 1)
    }

    /// Coverage claimed in several batches while an origin is held chains up, and a claim
    /// that leaves a gap is not taken.
    @Test func coverageClaimedWhileHeldChainsAndWaitsForTheLastHeldChange() throws {
        let b = try makeStore(dir, "b", clock: clock, id: 0xB)
        let skewed = ReplicaID(rawValue: 0xC)
        func change(_ seq: UInt64, aheadMinutes: Int64) -> Change {
            Change(
                origin: skewed, seq: seq, hlc: HybridTimestamp(milliseconds: clock.now + aheadMinutes * 60_000),
                member: nil, entity: .shoppingItem, rowID: "r\(seq)",
                fields: shoppingItem("Item \(seq)").map { FieldWrite(field: $0.key, value: $0.value) })
        }
        try b.apply(
            DeltaBatch(
                changes: [change(1, aheadMinutes: 12), change(2, aheadMinutes: 0)],
                coverage: [Coverage(origin: skewed, after: 0, upTo: 2)]))
        try b.apply(DeltaBatch(changes: [change(3, aheadMinutes: 14)], coverage: [Coverage(origin: skewed, after: 2, upTo: 3)]))
        try b.apply(DeltaBatch(changes: [change(9, aheadMinutes: 0)], coverage: [Coverage(origin: skewed, after: 5, upTo: 9)]))
        #expect(try b.versionVector()[skewed] == 0)
        clock.advance(2 * 60_000 + 1) // seq 1 is due, seq 3 still held
        #expect(try b.releaseHeldChanges()?.applied.map(\.seq) == [1])
        #expect(try b.versionVector()[skewed] == 0)
        clock.advance(2 * 60_000)
        #expect(try b.releaseHeldChanges()?.applied.map(\.seq) == [3])
        #expect(try b.versionVector()[skewed] == 3) // not 9: 4…5 never arrived
    }

    /// Held changes are durable: they survive a restart of the store.
    @Test func heldChangesSurviveAReopen() throws {
        let path = dir.path("held.sqlite")
        let future = Change(
            origin: ReplicaID(rawValue: 0xC), seq: 1, hlc: HybridTimestamp(milliseconds: clock.now + 3_600_000),
            member: "m1", entity: .task, rowID: "t",
            fields: [
                FieldWrite(
                    field: "title", value: .text("Later"),
                    base: Stamp(hlc: HybridTimestamp(milliseconds: 5), origin: ReplicaID(rawValue: 0xD)))
            ])
        do { _ = try ReplicaStore(path: path, physicalClock: clock.function).apply(DeltaBatch(changes: [future])) }
        clock.advance(3_600_000)
        let reopened = try ReplicaStore(path: path, physicalClock: clock.function)
        #expect(try reopened.releaseHeldChanges()?.applied == [future]) // every field, base and member kept
    }
}

/// Record format 2 and migration 8.
@Suite struct RecordFormatTests {
    let dir: TemporaryDirectory
    let clock = ManualClock()
    init() throws { dir = try TemporaryDirectory() }

    /// Every record of a store, by table and row id.
    func records(_ store: ReplicaStore) throws -> [String: [UInt8]] {
        var all: [String: [UInt8]] = [:]
        for entity in EntityKind.allCases {
            try store.connection.query("SELECT id, versions FROM \(entity.rawValue)") { statement in
                while try statement.step() { all["\(entity.rawValue)/\(statement.text(0))"] = statement.withBlob(1) { Array($0) } }
            }
        }
        try store.connection.query("SELECT entity, row_id, versions FROM partial_row") { statement in
            while try statement.step() { all["partial/\(statement.text(0))/\(statement.text(1))"] = statement.withBlob(2) { Array($0) } }
        }
        return all
    }

    /// A database of schema 7 (records in format 1, as pulse-peer wrote them before) opens
    /// migrated: every record in format 2, every field version the same, smaller; it syncs.
    @Test func migration8RewritesEveryRecordAndKeepsEveryVersion() throws {
        let path = dir.path("v7.sqlite")
        let peer = try makeStore(dir, "peer", clock: clock, id: 0xB)
        var before: [String: VersionedRow] = [:]
        var sizeBefore = 0
        do {
            let store = try makeStore(dir, "v7", clock: clock, id: 0xA)
            let member = RowIDRules.random()
            try store.write(member: member) { tx in
                for i in 0..<300 { _ = try tx.create(.shoppingItem, RowIDRules.random(), shoppingItem("Item \(i)")) }
                _ = try tx.put(
                    .task, "t1",
                    [
                        "title": .text("Water plants"), "done": .bool(false), "assignee": .text(member),
                        "due": .text("2026-11-25"), "created": .integer(5), "template": .null,
                        "period": .null, "deleted": .bool(false),
                    ])
            }
            try store.write(member: "anna") { tx in _ = try tx.put(.task, "t1", ["done": .bool(true)]) } // a base stamp
            // A partial row: a change of the peer whose row's creation has not arrived.
            try peer.write(member: nil) { tx in _ = try tx.put(.shoppingItem, "p1", shoppingItem("Paint")) }
            let (_, update) = try peer.write(member: nil) { tx in _ = try tx.put(.shoppingItem, "p1", ["state": .text("restock")]) }
            try store.apply(DeltaBatch(changes: update))
            // Back to format 1 and schema 7, as the previous version left it.
            for entity in EntityKind.allCases {
                let ids = try store.connection.query("SELECT id FROM \(entity.rawValue)") { statement in
                    var ids: [String] = []
                    while try statement.step() { ids.append(statement.text(0)) }
                    return ids
                }
                for id in ids {
                    let versions = try store.versions(entity, id)
                    before["\(entity.rawValue)/\(id)"] = versions
                    let statement = try store.connection.statement("UPDATE \(entity.rawValue) SET versions = ?2 WHERE id = ?1")
                    try statement.bind(.text(id), at: 1)
                    try statement.bind(blob: Format1.encode(versions), at: 2)
                    while try statement.step() {}
                    statement.reset()
                }
            }
            let partial = try store.versions(.shoppingItem, "p1")
            #expect(partial.byName.keys.sorted() == ["state"])
            before["partial/p1"] = partial
            let statement = try store.connection.statement("UPDATE partial_row SET versions = ?1 WHERE row_id = 'p1'")
            try statement.bind(blob: Format1.encode(partial), at: 1)
            while try statement.step() {}
            statement.reset()
            sizeBefore = try records(store).values.reduce(0) { $0 + $1.count }
            try store.connection.execute(ReplicaStoreTests.undoMigration11 + ReplicaStoreTests.undoMigration9 + "PRAGMA user_version = 7")
        }
        let store = try ReplicaStore(path: path, physicalClock: clock.function)
        #expect(try store.connection.scalarInt("PRAGMA user_version") == Int64(Migrations.latest))
        let after = try records(store)
        #expect(after.count == before.count)
        #expect(after.values.allSatisfy { $0.first == RowVersions.format })
        let sizeAfter = after.values.reduce(0) { $0 + $1.count }
        #expect(sizeAfter * 2 < sizeBefore, "\(sizeBefore) → \(sizeAfter) bytes")
        for (key, versions) in before {
            let parts = key.split(separator: "/").map(String.init)
            let entity = parts[0] == "partial" ? EntityKind.shoppingItem : EntityKind(rawValue: parts[0])!
            #expect(try store.versions(entity, parts[1]) == versions, "\(key)")
        }
        #expect(try store.integrityCheck() == "ok")
        // It syncs both ways with a peer on the new format: the partial row completes.
        try peer.sync(to: store)
        try store.sync(to: peer)
        #expect(try store.canonicalState() == peer.canonicalState())
        #expect(try store.row(.shoppingItem, "p1")["state"] == .text("restock"))
        #expect(try records(store).values.allSatisfy { $0.first == RowVersions.format })
    }

    /// A value is left to its typed column only where the column's declared type gives it
    /// back unchanged: the tables' declared types agree with ``RowVersions/storedExactly``.
    @Test func theColumnsDeclaredTypesKeepTheValuesTheRecordLeavesOut() throws {
        let store = try makeStore(dir, "types", clock: clock, id: 0xA)
        for entity in EntityKind.allCases {
            let declared: [String: String] = try store.connection.query("PRAGMA table_info(\(entity.rawValue))") { statement in
                var types: [String: String] = [:]
                while try statement.step() { types[statement.text(1)] = statement.text(2) }
                return types
            }
            for spec in entity.schema.fields {
                let type = try #require(declared[spec.name], "\(entity.rawValue).\(spec.name)")
                #expect(RowVersions.storedExactly(spec.type, .text("x")) == (type == "TEXT"), "\(entity.rawValue).\(spec.name) \(type)")
                #expect(RowVersions.storedExactly(spec.type, .integer(1)) == (type == "INTEGER"), "\(entity.rawValue).\(spec.name) \(type)")
            }
        }
    }
}

/// Format 1 of ``RowVersions``, as pulse-peer wrote it up to schema 7 (the tests make old
/// databases with it).
enum Format1 {
    static func encode(_ row: VersionedRow) -> [UInt8] {
        let fields = row.byName
        var out: [UInt8] = [1]
        struct Origin: Equatable { let stamp: Stamp; let seq: UInt64; let member: String? }
        let names = fields.keys.sorted()
        var origins: [Origin] = [], indexes: [Int] = []
        for name in names {
            let v = fields[name]!
            let origin = Origin(stamp: v.stamp, seq: v.seq, member: v.member)
            if let index = origins.firstIndex(of: origin) { indexes.append(index) } else { indexes.append(origins.count); origins.append(origin) }
        }
        func fixed(_ value: UInt64) { withUnsafeBytes(of: value.littleEndian) { out.append(contentsOf: $0) } }
        func text(_ text: String) { Varint.append(UInt64(text.utf8.count), to: &out); out.append(contentsOf: text.utf8) }
        Varint.append(UInt64(origins.count), to: &out)
        for origin in origins {
            fixed(UInt64(bitPattern: origin.stamp.hlc.rawValue)); fixed(UInt64(bitPattern: origin.stamp.origin.storage))
            Varint.append(origin.seq, to: &out)
            out.append(origin.member == nil ? 0 : 1)
            if let member = origin.member { text(member) }
        }
        Varint.append(UInt64(names.count), to: &out)
        for (name, index) in zip(names, indexes) {
            let v = fields[name]!
            text(name)
            Varint.append(UInt64(index), to: &out)
            switch v.value {
            case .null: out.append(0)
            case let .integer(value): out.append(1); fixed(UInt64(bitPattern: value))
            case let .text(value): out.append(2); text(value)
            }
            out.append(v.base == nil ? 0 : 1)
            if let base = v.base { fixed(UInt64(bitPattern: base.hlc.rawValue)); fixed(UInt64(bitPattern: base.origin.storage)) }
        }
        return out
    }
}
