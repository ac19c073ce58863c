import PulseModel
/// Numbered schema migrations, applied in order inside one transaction each;
/// `PRAGMA user_version` records the last one applied.
///
/// The tables:
/// - one typed table per entity (`shopping_item`, `task`, …) holds each complete row: its
///   columns, which queries read, and in `versions` the replicated state of the row (for
///   each field the winning value, its stamp and change number: ``RowVersions``). The
///   CHECK and NOT NULL constraints repeat the rules of `EntityKind.schema`, so a value the
///   Swift validation missed is still refused by SQLite ("trust SQLite more than yourself").
/// - `partial_row` holds the versions of rows whose fields have not all arrived yet (a
///   change of another machine can come before the change that created its row); such a
///   row moves to its typed table with the change that completes it.
/// - `change_index` finds the row of a change by `(origin, seq)` for deltas (the entity
///   and row id as ``ChangeIndex`` stores them).
///
/// History: migration 1 kept one row per field (`field_version`); migration 2 folded them
/// into one `row_version` record per row; migration 3 moved each complete row's record
/// into its typed row, so that a new row is one B-tree insert (plus its index entries)
/// instead of two; 4–5 hold far-future changes; 6 adds the machine entities; 7 gives backlog
/// items a position (a field that rows made before it may lack: `FieldSpec.optional`); 8
/// rewrites every record in ``RowVersions`` format 2 (field numbers, members as 16 bytes,
/// no copy of the values a typed row's columns hold: ≈ 130 → 45 bytes a shopping item); 9
/// keeps the clock in this replica's row of `version_vector`; 10 rewrites the checks of a
/// column against three or more values as comparisons (see ``migration10``); 11 shortens
/// `change_index` entries (``ChangeIndex``); 12 records `published_seq` (Rewind.swift); 13 adds
/// the household's kids' PIN (`kids_pin`, protocol 5) and `synced_once`; 14 the language a
/// member reads (protocol 6); 15 the household's phones (protocol 7); 16 the household CA's roots
/// and grants, and where agents serve phones (protocol 8); 17 the changes kept for a later
/// release (`kept_change`: KeptChanges.swift); 18 the stamps of overwritten changes and the
/// seals of forked histories (Histories.swift, protocol 9); 19 kept changes' fields in bytes, not
/// JSON (KeptChanges.swift); 20 phones signed in again; 21 a shopping item's name key, indexed
/// (KeyColumns.swift); 22 a shopping item's quantity and note; 23 the shop's check-offs
/// (`shopping_checkoff`, the walking order's evidence). The steps that reshape data in Swift
/// (2, 3, 8) are in MigrationRewrites.swift.
package enum Migrations {
    /// One step: SQL, then (for data that SQL cannot reshape) Swift code, in the same
    /// transaction.
    package struct Step: Sendable {
        /// What it does, in a few words (its number is its place in ``all``).
        package let name: String
        package let sql: String
        var code: (@Sendable (Connection) throws -> Void)?
    }

    /// Every migration, named, in the order they run; never reordered or removed.
    package static let all: [Step] = base + nextRelease

    static let base: [Step] = [
        Step(name: "field versions", sql: migration1),
        Step(name: "one record per row", sql: migration2, code: foldFieldVersions),
        Step(name: "records in typed rows", sql: migration3, code: moveVersionsIntoRows),
        Step(name: "held far-future changes", sql: migration4),
        Step(name: "coverage of held changes", sql: migration5),
        Step(name: "machines", sql: migration6),
        Step(name: "backlog positions", sql: migration7),
        Step(name: "records format 2", sql: "", code: reencodeRecords),
        Step(name: "clock in the vector row", sql: migration9),
        Step(name: "checks as comparisons", sql: migration10),
        Step(name: "short change index", sql: ChangeIndex.migration11, code: ChangeIndex.rewrite),
        Step(name: "published mark", sql: migration12),
        Step(name: "household PIN", sql: migration13),
        Step(name: "member languages", sql: migration14),
        Step(name: "phones", sql: migration15),
        Step(name: "household CA", sql: migration16),
        Step(name: "kept changes", sql: migration17),
        Step(name: "stamps of overwritten changes, seals", sql: migration18),
        Step(name: "kept fields in bytes", sql: "", code: ReplicaStore.reencodeKeptFields),
        Step(name: "phones signed in again", sql: migration20),
        Step(name: "shopping names by key", sql: KeyColumn.migration21, code: KeyColumn.fillMigration21),
        Step(name: "shopping quantities and notes", sql: migration22),
        Step(name: "shopping check-offs", sql: migration23),
        Step(name: "shopping lists", sql: migration24),
        Step(name: "shopping trips", sql: migration25),
        Step(name: "rotating chores, bonuses", sql: migration26),
        Step(name: "savings goals", sql: migration27),
        Step(name: "chores a kid reports", sql: migration28),
        Step(name: "kids' chores that take turns", sql: migration29),
        Step(name: "app passwords", sql: migration30),
        Step(name: "what apps made of to-dos", sql: migration31),
    ]

    package static var latest: Int { all.count }

    /// Whether the database is at the latest schema (a read: no lock is taken).
    static func isCurrent(_ connection: Connection) throws -> Bool {
        let current = Int(try connection.scalarInt("PRAGMA user_version") ?? 0)
        guard current <= latest else { throw StoreError.newerSchema(found: current, supported: latest) }
        return current == latest
    }

    static func migrate(_ connection: Connection) throws {
        let current = Int(try connection.scalarInt("PRAGMA user_version") ?? 0)
        guard current <= latest else {
            throw StoreError.newerSchema(found: current, supported: latest)
        }
        for (index, step) in all.enumerated() where index + 1 > current {
            try connection.transaction {
                try connection.execute(step.sql)
                try step.code?(connection)
                try connection.execute("PRAGMA user_version = \(index + 1)")
            }
        }
    }

    static let migration2 = """
        CREATE TABLE row_version (
            entity TEXT NOT NULL,
            row_id TEXT NOT NULL CHECK (length(row_id) BETWEEN 1 AND 128),
            versions BLOB NOT NULL CHECK (typeof(versions) = 'blob' AND length(versions) > 1),
            PRIMARY KEY (entity, row_id)
        ) WITHOUT ROWID;

        CREATE TABLE change_index (
            origin INTEGER NOT NULL CHECK (origin <> 0),
            seq INTEGER NOT NULL CHECK (seq > 0),
            entity TEXT NOT NULL,
            row_id TEXT NOT NULL,
            PRIMARY KEY (origin, seq)
        ) WITHOUT ROWID;

        INSERT INTO change_index (origin, seq, entity, row_id)
            SELECT DISTINCT origin, seq, entity, row_id FROM field_version;
        """

    /// Migration 4: changes stamped too far ahead of this machine's clock, kept until it catches up
    /// (``ReplicaStore/releaseHeldChanges()``).
    static let migration4 = """
        CREATE TABLE held_change (
            origin INTEGER NOT NULL CHECK (origin <> 0),
            seq INTEGER NOT NULL CHECK (seq > 0),
            hlc INTEGER NOT NULL,
            change BLOB NOT NULL,
            PRIMARY KEY (origin, seq)
        ) WITHOUT ROWID;
        """

    /// Migration 5: coverage claimed for an origin while some of its changes were held
    /// (``ReplicaStore/releaseHeldChanges()`` advances the version vector to it once the
    /// last of them is merged).
    static let migration5 = """
        CREATE TABLE held_coverage (
            origin INTEGER PRIMARY KEY CHECK (origin <> 0),
            up_to INTEGER NOT NULL CHECK (up_to > 0)
        );
        """

    /// The entities whose tables migration 1 creates (later ones are born with `versions`).
    static let entitiesOfMigration1 = EntityKind.allCases.filter { !entitiesAfterMigration1.contains($0) }
    /// The entities made by later migrations (6: machines; 13: the kids' PIN; 15: phones;
    /// 16: the household CA; 23: shopping check-offs; 24: shopping lists; 25: shopping trips; 26: rotating chores; 27: savings goals;
    /// 28: chore reports; 30: app passwords; 31: calendar objects).
    static let entitiesAfterMigration1: [EntityKind] = {
        var entities: [EntityKind] = [
            .machine, .machineRemoval, .discoveryKey, .kidsPIN, .phone, .caRoot, .caGrant, .phoneService, .shoppingCheckoff, .shoppingList,
            .shoppingTrip, .away, .rotationSwap, .savingsGoal, .choreReport, .appPassword, .calendarObject,
        ]
        #if DEBUG
        if TestRelease.next { entities.append(.note) }
        #endif
        return entities
    }()
    /// The entities whose tables exist at migration 8.
    static let entitiesOfMigration8 = EntityKind.allCases.filter { !entitiesAfterMigration1.dropFirst(3).contains($0) }

    /// Migration 3, in SQL: every typed table gains `versions`. The default (two zero bytes)
    /// only lets existing rows take the column; `moveVersionsIntoRows` fills every one of
    /// them, and a new row always carries its record (a record is never this short).
    package static var migration3: String {
        entitiesOfMigration1.map { entity in
            "ALTER TABLE \(entity.rawValue) ADD COLUMN versions BLOB NOT NULL DEFAULT x'0000' "
                + "CHECK (typeof(versions) = 'blob' AND length(versions) > 1);"
        }.joined(separator: "\n")
    }

    /// Per-machine trust (docs/SECURITY.md): the machines admitted, the ones removed, and
    /// the keys that recognise the household's advertisements.
    static let migration6 = """
        CREATE TABLE machine (
            id TEXT PRIMARY KEY NOT NULL,
            name TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
            member TEXT,
            added_by TEXT NOT NULL CHECK (length(added_by) BETWEEN 1 AND 64),
            added INTEGER NOT NULL CHECK (added >= 0),
            versions BLOB NOT NULL CHECK (typeof(versions) = 'blob' AND length(versions) > 1)
        ) WITHOUT ROWID;

        CREATE TABLE machine_removal (
            id TEXT PRIMARY KEY NOT NULL,
            removed_by TEXT NOT NULL CHECK (length(removed_by) BETWEEN 1 AND 64),
            removed INTEGER NOT NULL CHECK (removed >= 0),
            versions BLOB NOT NULL CHECK (typeof(versions) = 'blob' AND length(versions) > 1)
        ) WITHOUT ROWID;

        CREATE TABLE discovery_key (
            id TEXT PRIMARY KEY NOT NULL,
            key TEXT NOT NULL CHECK (length(key) BETWEEN 1 AND 64),
            created INTEGER NOT NULL CHECK (created >= 0),
            versions BLOB NOT NULL CHECK (typeof(versions) = 'blob' AND length(versions) > 1)
        ) WITHOUT ROWID;
        """

    /// Migration 9: the clock moves next to this replica's counter, into its row of
    /// `version_vector`, so a commit writes one page for both instead of that page and
    /// `meta`'s (each page is a frame more in the WAL per durable commit: ≈ 4 µs here).
    /// `meta`'s `hlc` stays as it was and still counts (the clock is the larger of the
    /// two): before this replica's first change it has no row, and the clock lives there.
    /// Migration 12: `published_seq`, the highest change number of this replica that may have
    /// left this machine (Rewind.swift). A database from before it may have sent everything
    /// it made; a new one (no replica id yet) has sent nothing.
    static let migration12 = """
        INSERT OR IGNORE INTO meta (key, value) SELECT 'published_seq', coalesce((SELECT seq FROM version_vector
            WHERE origin = (SELECT value FROM meta WHERE key = 'replica_id')), 0);
        """

    /// Migration 13: the household's kids' PIN, replicated (protocol 5); and `synced_once`
    /// for a database that already holds the household's data (KidsPIN.swift: a machine that
    /// never synced may not set the first PIN).
    static let migration13 = """
        CREATE TABLE kids_pin (
            id TEXT PRIMARY KEY NOT NULL CHECK (id = 'pin'),
            hash TEXT CHECK (hash IS NULL OR length(hash) BETWEEN 1 AND 200),
            reset TEXT CHECK (reset IS NULL OR length(reset) BETWEEN 1 AND 300),
            versions BLOB NOT NULL CHECK (typeof(versions) = 'blob' AND length(versions) > 1)
        ) WITHOUT ROWID;
        INSERT OR IGNORE INTO meta (key, value) SELECT 'synced_once', 1 WHERE EXISTS (SELECT 1 FROM household);
        """

    static let migration9 = """
        ALTER TABLE version_vector ADD COLUMN hlc INTEGER;
        """

    /// Migration 10: every CHECK of a column against a list of three or more values
    /// (`state IN ('active', 'restock', 'deleted')`) becomes a chain of comparisons, with
    /// the same meaning (the columns are NOT NULL). SQLite compiles such an IN list into a
    /// temporary B-tree that each INSERT or UPDATE of the row builds and frees again
    /// (`EXPLAIN`: `OpenEphemeral` with no `Once`): ≈ 1.5 µs of every shopping item written
    /// or merged, a third of the typed insert in a catch-up profile. Lists of two values are
    /// compiled to comparisons already. A CHECK cannot be altered in place: each table is
    /// rebuilt (SQLite's documented procedure: new table, copy, drop, rename, indexes).
    /// `MigrationTests.noWriteBuildsATemporaryTable` keeps new checks from bringing it back.
    static let migration10 = """
        CREATE TABLE shopping_item_10 (
            id TEXT PRIMARY KEY NOT NULL,
            name TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
            state TEXT NOT NULL CHECK (state = 'active' OR state = 'restock' OR state = 'deleted'),
            listed INTEGER NOT NULL CHECK (listed >= 0),
            versions BLOB NOT NULL CHECK (typeof(versions) = 'blob' AND length(versions) > 1)
        ) WITHOUT ROWID;
        INSERT INTO shopping_item_10 (id, name, state, listed, versions)
            SELECT id, name, state, listed, versions FROM shopping_item;
        DROP TABLE shopping_item;
        ALTER TABLE shopping_item_10 RENAME TO shopping_item;
        CREATE INDEX shopping_item_by_state ON shopping_item (state, listed);

        CREATE TABLE settings_10 (
            id TEXT PRIMARY KEY NOT NULL CHECK (id = 'settings'),
            appearance TEXT NOT NULL CHECK (appearance = 'light' OR appearance = 'dark' OR appearance = 'system'),
            celebrations INTEGER NOT NULL CHECK (celebrations IN (0, 1)),
            suggestions INTEGER NOT NULL CHECK (suggestions IN (0, 1)),
            versions BLOB NOT NULL CHECK (typeof(versions) = 'blob' AND length(versions) > 1)
        ) WITHOUT ROWID;
        INSERT INTO settings_10 (id, appearance, celebrations, suggestions, versions)
            SELECT id, appearance, celebrations, suggestions, versions FROM settings;
        DROP TABLE settings;
        ALTER TABLE settings_10 RENAME TO settings;

        CREATE TABLE catalogue_selection_10 (
            id TEXT PRIMARY KEY NOT NULL,
            kind TEXT NOT NULL CHECK (kind = 'rule' OR kind = 'chore' OR kind = 'reward'),
            title TEXT NOT NULL CHECK (length(title) BETWEEN 1 AND 200),
            peanuts INTEGER NOT NULL CHECK (peanuts BETWEEN 1 AND 20),
            category TEXT NOT NULL CHECK (category = 'security' OR category = 'respect' OR category = 'fun'),
            selected INTEGER NOT NULL CHECK (selected IN (0, 1)),
            versions BLOB NOT NULL CHECK (typeof(versions) = 'blob' AND length(versions) > 1)
        ) WITHOUT ROWID;
        INSERT INTO catalogue_selection_10 (id, kind, title, peanuts, category, selected, versions)
            SELECT id, kind, title, peanuts, category, selected, versions FROM catalogue_selection;
        DROP TABLE catalogue_selection;
        ALTER TABLE catalogue_selection_10 RENAME TO catalogue_selection;

        CREATE TABLE conflict_10 (
            id INTEGER PRIMARY KEY,
            logged_hlc INTEGER NOT NULL,
            kind TEXT NOT NULL CHECK (kind = 'overwritten' OR kind = 'rejected' OR kind = 'edit_of_deleted'),
            entity TEXT NOT NULL,
            row_id TEXT NOT NULL,
            field TEXT NOT NULL,
            kept_value, kept_hlc INTEGER NOT NULL, kept_origin INTEGER NOT NULL, kept_member TEXT,
            lost_value, lost_hlc INTEGER NOT NULL, lost_origin INTEGER NOT NULL, lost_member TEXT
        );
        INSERT INTO conflict_10 (id, logged_hlc, kind, entity, row_id, field, kept_value, kept_hlc, kept_origin,
                                 kept_member, lost_value, lost_hlc, lost_origin, lost_member)
            SELECT id, logged_hlc, kind, entity, row_id, field, kept_value, kept_hlc, kept_origin,
                   kept_member, lost_value, lost_hlc, lost_origin, lost_member FROM conflict;
        DROP TABLE conflict;
        ALTER TABLE conflict_10 RENAME TO conflict;
        """

    /// Migration 14 (protocol version 6): the language a member reads, null for automatic.
    /// Optional in the schema: members made before it have none.
    static let migration14 = """
        ALTER TABLE member ADD COLUMN language TEXT CHECK (language IS NULL OR length(language) BETWEEN 1 AND 8);
        """

    /// Migration 15 (protocol version 7): the household's phones (issue 42). `removed` is set
    /// once a phone is removed; no method clears it.
    static let migration15 = """
        CREATE TABLE phone (
            id TEXT PRIMARY KEY NOT NULL,
            name TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
            member TEXT,
            credential TEXT NOT NULL CHECK (length(credential) BETWEEN 1 AND 64),
            added_by TEXT NOT NULL CHECK (length(added_by) BETWEEN 1 AND 64),
            added INTEGER NOT NULL CHECK (added >= 0),
            removed INTEGER CHECK (removed IS NULL OR removed >= 0),
            versions BLOB NOT NULL CHECK (typeof(versions) = 'blob' AND length(versions) > 1)
        ) WITHOUT ROWID;
        """

    /// Migration 16 (protocol version 8): the household CA's roots (one per household wins:
    /// the earliest) and the agents' requests for an intermediate (PKCS #10) and their
    /// certificates (docs/decisions/0014-household-ca.md), base64 DER.
    static let migration16 = """
        CREATE TABLE ca_root (
            id TEXT PRIMARY KEY NOT NULL,
            certificate TEXT NOT NULL CHECK (length(certificate) BETWEEN 1 AND 2000),
            holder TEXT NOT NULL CHECK (length(holder) BETWEEN 1 AND 64),
            created INTEGER NOT NULL CHECK (created >= 0),
            versions BLOB NOT NULL CHECK (typeof(versions) = 'blob' AND length(versions) > 1)
        ) WITHOUT ROWID;
        CREATE TABLE ca_grant (
            id TEXT PRIMARY KEY NOT NULL,
            request TEXT NOT NULL CHECK (length(request) BETWEEN 1 AND 1000),
            certificate TEXT CHECK (certificate IS NULL OR length(certificate) BETWEEN 1 AND 2000),
            requested INTEGER NOT NULL CHECK (requested >= 0),
            versions BLOB NOT NULL CHECK (typeof(versions) = 'blob' AND length(versions) > 1)
        ) WITHOUT ROWID;
        CREATE TABLE phone_service (
            id TEXT PRIMARY KEY NOT NULL,
            urls TEXT CHECK (urls IS NULL OR length(urls) BETWEEN 1 AND 600),
            updated INTEGER NOT NULL CHECK (updated >= 0),
            versions BLOB NOT NULL CHECK (typeof(versions) = 'blob' AND length(versions) > 1)
        ) WITHOUT ROWID;
        """

    /// Migration 7 (protocol version 4): a backlog item's place in its category, so items
    /// can be reordered. Optional in the schema: rows made before it keep none and are
    /// ordered by `created`.
    static let migration7 = """
        ALTER TABLE backlog_item ADD COLUMN position INTEGER;
        """

    static let migration1 = """
        CREATE TABLE meta (
            key TEXT PRIMARY KEY NOT NULL,
            value NOT NULL
        ) WITHOUT ROWID;

        CREATE TABLE version_vector (
            origin INTEGER PRIMARY KEY NOT NULL CHECK (origin <> 0),
            seq INTEGER NOT NULL CHECK (seq > 0)
        );

        CREATE TABLE field_version (
            entity TEXT NOT NULL,
            row_id TEXT NOT NULL CHECK (length(row_id) BETWEEN 1 AND 128),
            field TEXT NOT NULL,
            value,
            hlc INTEGER NOT NULL CHECK (hlc >= 0),
            origin INTEGER NOT NULL CHECK (origin <> 0),
            seq INTEGER NOT NULL CHECK (seq > 0),
            base_hlc INTEGER,
            base_origin INTEGER,
            member TEXT,
            CHECK ((base_hlc IS NULL) = (base_origin IS NULL)),
            PRIMARY KEY (entity, row_id, field)
        ) WITHOUT ROWID;
        CREATE INDEX field_version_by_origin ON field_version (origin, seq);

        CREATE TABLE conflict (
            id INTEGER PRIMARY KEY,
            logged_hlc INTEGER NOT NULL,
            kind TEXT NOT NULL CHECK (kind IN ('overwritten', 'rejected', 'edit_of_deleted')),
            entity TEXT NOT NULL,
            row_id TEXT NOT NULL,
            field TEXT NOT NULL,
            kept_value, kept_hlc INTEGER NOT NULL, kept_origin INTEGER NOT NULL, kept_member TEXT,
            lost_value, lost_hlc INTEGER NOT NULL, lost_origin INTEGER NOT NULL, lost_member TEXT
        );

        CREATE TABLE household (
            id TEXT PRIMARY KEY NOT NULL CHECK (id = 'profile'),
            name TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 100)
        ) WITHOUT ROWID;

        CREATE TABLE settings (
            id TEXT PRIMARY KEY NOT NULL CHECK (id = 'settings'),
            appearance TEXT NOT NULL CHECK (appearance IN ('light', 'dark', 'system')),
            celebrations INTEGER NOT NULL CHECK (celebrations IN (0, 1)),
            suggestions INTEGER NOT NULL CHECK (suggestions IN (0, 1))
        ) WITHOUT ROWID;

        CREATE TABLE member (
            id TEXT PRIMARY KEY NOT NULL,
            name TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 60),
            initials TEXT NOT NULL CHECK (length(initials) BETWEEN 1 AND 3),
            color TEXT NOT NULL CHECK (length(color) BETWEEN 1 AND 7),
            removed INTEGER NOT NULL CHECK (removed IN (0, 1))
        ) WITHOUT ROWID;

        CREATE TABLE replica (
            id TEXT PRIMARY KEY NOT NULL,
            machine TEXT NOT NULL CHECK (length(machine) BETWEEN 1 AND 64),
            label TEXT NOT NULL CHECK (length(label) <= 100)
        ) WITHOUT ROWID;

        CREATE TABLE shopping_item (
            id TEXT PRIMARY KEY NOT NULL,
            name TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
            state TEXT NOT NULL CHECK (state IN ('active', 'restock', 'deleted')),
            listed INTEGER NOT NULL CHECK (listed >= 0)
        ) WITHOUT ROWID;
        CREATE INDEX shopping_item_by_state ON shopping_item (state, listed);

        CREATE TABLE task (
            id TEXT PRIMARY KEY NOT NULL,
            title TEXT NOT NULL CHECK (length(title) BETWEEN 1 AND 200),
            done INTEGER NOT NULL CHECK (done IN (0, 1)),
            assignee TEXT,
            due TEXT CHECK (due IS NULL OR due GLOB '[0-9][0-9][0-9][0-9]-[0-1][0-9]-[0-3][0-9]'),
            created INTEGER NOT NULL CHECK (created >= 0),
            template TEXT,
            period TEXT CHECK (period IS NULL OR length(period) BETWEEN 1 AND 16),
            deleted INTEGER NOT NULL CHECK (deleted IN (0, 1))
        ) WITHOUT ROWID;

        CREATE TABLE backlog_category (
            id TEXT PRIMARY KEY NOT NULL,
            title TEXT NOT NULL CHECK (length(title) BETWEEN 1 AND 200),
            position INTEGER NOT NULL,
            deleted INTEGER NOT NULL CHECK (deleted IN (0, 1))
        ) WITHOUT ROWID;

        CREATE TABLE backlog_item (
            id TEXT PRIMARY KEY NOT NULL,
            title TEXT NOT NULL CHECK (length(title) BETWEEN 1 AND 200),
            category TEXT NOT NULL,
            created INTEGER NOT NULL CHECK (created >= 0),
            deleted INTEGER NOT NULL CHECK (deleted IN (0, 1))
        ) WITHOUT ROWID;
        CREATE INDEX backlog_item_by_category ON backlog_item (category);

        CREATE TABLE recurring_template (
            id TEXT PRIMARY KEY NOT NULL,
            title TEXT NOT NULL CHECK (length(title) BETWEEN 1 AND 200),
            schedule TEXT NOT NULL CHECK (length(schedule) BETWEEN 1 AND 64),
            assignee TEXT,
            created INTEGER NOT NULL CHECK (created >= 0),
            deleted INTEGER NOT NULL CHECK (deleted IN (0, 1))
        ) WITHOUT ROWID;

        CREATE TABLE kid (
            id TEXT PRIMARY KEY NOT NULL,
            name TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 60),
            removed INTEGER NOT NULL CHECK (removed IN (0, 1))
        ) WITHOUT ROWID;

        CREATE TABLE catalogue_selection (
            id TEXT PRIMARY KEY NOT NULL,
            kind TEXT NOT NULL CHECK (kind IN ('rule', 'chore', 'reward')),
            title TEXT NOT NULL CHECK (length(title) BETWEEN 1 AND 200),
            peanuts INTEGER NOT NULL CHECK (peanuts BETWEEN 1 AND 20),
            category TEXT NOT NULL CHECK (category IN ('security', 'respect', 'fun')),
            selected INTEGER NOT NULL CHECK (selected IN (0, 1))
        ) WITHOUT ROWID;

        CREATE TABLE ledger_entry (
            id TEXT PRIMARY KEY NOT NULL,
            kid TEXT NOT NULL,
            kind TEXT NOT NULL CHECK (kind IN ('earn', 'spend')),
            peanuts INTEGER NOT NULL CHECK (peanuts BETWEEN 1 AND 1000),
            selection TEXT,
            title TEXT NOT NULL CHECK (length(title) BETWEEN 1 AND 200),
            created INTEGER NOT NULL CHECK (created >= 0),
            hidden INTEGER NOT NULL CHECK (hidden IN (0, 1))
        ) WITHOUT ROWID;
        CREATE INDEX ledger_entry_by_kid ON ledger_entry (kid);
        """
}
