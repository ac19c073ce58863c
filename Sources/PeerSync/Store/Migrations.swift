/// Numbered schema migrations, applied in order inside one transaction each;
/// `PRAGMA user_version` records the last one applied.
///
/// Two layers of tables:
/// - `field_version` is the replicated state: one row per (entity, row, field) holding
///   the winning value and its stamp. Every sync decision reads and writes it.
/// - one typed table per entity (`shopping_item`, `task`, …) is the projection that
///   queries read. A row appears there once all its fields have arrived; the CHECK
///   and NOT NULL constraints repeat the rules of `EntityKind.schema`, so a value the
///   Swift validation missed is still refused by SQLite ("trust SQLite more than yourself").
enum Migrations {
    static let all: [String] = [migration1]

    static var latest: Int { all.count }

    static func migrate(_ connection: Connection) throws {
        let current = Int(try connection.scalarInt("PRAGMA user_version") ?? 0)
        guard current <= latest else {
            throw StoreError.newerSchema(found: current, supported: latest)
        }
        for (index, sql) in all.enumerated() where index + 1 > current {
            try connection.transaction {
                try connection.execute(sql)
                try connection.execute("PRAGMA user_version = \(index + 1)")
            }
        }
    }

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
