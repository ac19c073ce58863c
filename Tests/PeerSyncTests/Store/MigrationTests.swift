import Foundation
import Testing
@testable import PulseModel
@testable import PulseStore

/// The store's migrations, in order, on homes of every earlier data format, and durability:
/// what was committed survives a crash, and a damaged file is refused.
@Suite struct MigrationTests: StoreFixture {
    let dir: TemporaryDirectory
    let clock = ManualClock()

    init() throws { dir = try TemporaryDirectory() }

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
            "INSERT INTO shopping_item (id, name, state, listed, versions, name_key) VALUES ('s', 'Milk', 'gone', 1, x'0102', 'milk')",
            // A row without its name key (a write path that forgot it).
            "INSERT INTO shopping_item (id, name, state, listed, versions) VALUES ('s', 'Milk', 'active', 1, x'0102')",
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
            INSERT INTO shopping_item (id, name, state, listed, versions, name_key) VALUES ('s', 'Milk', 'restock', 1, x'0102', 'milk');
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

    /// Migrations 26's (the rotating chores), 25's (the shopping trips), 24's (the shopping lists) and 23's (the
    /// shopping check-offs) tables and columns, gone: a database from before them.
    static let undoMigration23 = """
        DROP TABLE calendar_object; DROP TABLE app_password; DROP TABLE chore_report; ALTER TABLE settings DROP COLUMN kids_approval;
        ALTER TABLE catalogue_selection DROP COLUMN rotation; ALTER TABLE catalogue_selection DROP COLUMN rotation_from; DROP TABLE savings_goal; DROP TABLE away; DROP TABLE rotation_swap; ALTER TABLE recurring_template DROP COLUMN rotation;
        ALTER TABLE ledger_entry DROP COLUMN bonus_for;
        ALTER TABLE recurring_template DROP COLUMN rotation_from; DROP TABLE shopping_trip; DROP TABLE shopping_list; DROP INDEX shopping_item_by_list; ALTER TABLE shopping_item DROP COLUMN list;
        DROP TABLE shopping_checkoff;
        """

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
            try store.connection.execute(Self.undoMigration23 + Self.undoMigration11 + "PRAGMA user_version = 10")
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
            try store.connection.execute(
                Self.undoMigration23 + Self.undoMigration11 + Self.undoMigration9 + "ALTER TABLE backlog_item DROP COLUMN position; PRAGMA user_version = 6")
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

    /// Migration 21: a shopping item's name key (its name in any case) beside its name, for
    /// every row an older database holds, and kept by each path that writes a row since: a
    /// local write, a peer's new row (held and inserted with its neighbours), a peer's rename
    /// (the upsert). The rule's lookup finds the items of a name by the key's index, never a
    /// deleted one.
    @Test func aVersion20DatabaseGainsNameKeysThatEveryWriteKeeps() throws {
        let path = dir.path("v20.sqlite")
        func item(_ name: String, _ state: String) -> RowFields { ["name": .text(name), "state": .text(state), "listed": .integer(1)] }
        do {
            let store = try ReplicaStore(path: path, physicalClock: clock.function)
            try store.write(member: nil) { tx in
                _ = try tx.create(.shoppingItem, "i1", item("Milk", "active"))
                _ = try tx.create(.shoppingItem, "i2", item("ÄPFEL", "restock"))
                _ = try tx.create(.shoppingItem, "i3", item("milk", "deleted"))
            }
            try store.connection.execute(
                """
                CREATE TABLE shopping_item_20 (
                    id TEXT PRIMARY KEY NOT NULL, name TEXT NOT NULL, state TEXT NOT NULL, listed INTEGER NOT NULL,
                    versions BLOB NOT NULL) WITHOUT ROWID;
                INSERT INTO shopping_item_20 SELECT id, name, state, listed, versions FROM shopping_item;
                DROP TABLE shopping_item;
                ALTER TABLE shopping_item_20 RENAME TO shopping_item;
                CREATE INDEX shopping_item_by_state ON shopping_item (state, listed);
                DROP TABLE shopping_checkoff; DROP TABLE shopping_list; DROP TABLE shopping_trip; DROP TABLE away; DROP TABLE savings_goal; DROP TABLE chore_report; DROP TABLE app_password; DROP TABLE calendar_object; ALTER TABLE settings DROP COLUMN kids_approval;
                ALTER TABLE catalogue_selection DROP COLUMN rotation; ALTER TABLE catalogue_selection DROP COLUMN rotation_from;
                DROP TABLE rotation_swap; ALTER TABLE recurring_template DROP COLUMN rotation;
                ALTER TABLE recurring_template DROP COLUMN rotation_from; ALTER TABLE ledger_entry DROP COLUMN bonus_for;
                PRAGMA user_version = 20;
                """)
        }
        let store = try ReplicaStore(path: path, physicalClock: clock.function)
        #expect(try store.connection.scalarInt("PRAGMA user_version") == Int64(Migrations.latest))
        func keys() throws -> [String] {
            try store.connection.query("SELECT id, name_key FROM shopping_item ORDER BY id") { statement in
                var keys: [String] = []
                while try statement.step() { keys.append("\(statement.text(0)) \(statement.text(1))") }
                return keys
            }
        }
        #expect(try keys() == ["i1 milk", "i2 äpfel", "i3 milk"])
        #expect(try store.liveRows(.shoppingItem, named: ["MILK", "äpfel", "Bread"]).map(\.id).sorted() == ["i1", "i2"])
        let plan = try store.connection.query("EXPLAIN QUERY PLAN SELECT id FROM shopping_item WHERE name_key = ?1 AND state <> 'deleted'") { statement in
            var details: [String] = []
            while try statement.step() { details.append(statement.text(3)) }
            return details.joined(separator: "; ")
        }
        #expect(plan.contains("shopping_item_by_name_key"), "\(plan)")

        let (peer, _) = try pair()
        try store.sync(to: peer)
        try store.write(member: nil) { tx in _ = try tx.create(.shoppingItem, "i4", item("Bread", "active")) }
        try peer.write(member: nil) { tx in
            _ = try tx.create(.shoppingItem, "i5", item("ÉCLAIRS", "active"))
            _ = try tx.put(.shoppingItem, "i1", ["name": .text("Oat MILK")])
        }
        try peer.sync(to: store)
        #expect(try keys() == ["i1 oat milk", "i2 äpfel", "i3 milk", "i4 bread", "i5 éclairs"])
        #expect(try store.liveRows(.shoppingItem, named: ["milk"]).isEmpty)
        #expect(try store.liveRows(.shoppingItem, named: ["OAT milk", "éclairs", "bread"]).map(\.id).sorted() == ["i1", "i4", "i5"])
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
}
