import PulseModel

// The migrations of the open schema and of the "next" test release (Migrations.swift lists
// every step in order; these are their SQL).
extension Migrations {
    /// Migration 17 (the open schema): what this release keeps without knowing it — a change
    /// to an entity it does not know, or the fields of a change that it does not know — whole,
    /// with its stamps, by `(origin, seq)`; `entity` is the wire's code, `fields` the change's
    /// fields of no known meaning (KeptChanges.swift).
    static let migration17 = """
        CREATE TABLE kept_change (
            origin INTEGER NOT NULL CHECK (origin <> 0),
            seq INTEGER NOT NULL CHECK (seq > 0),
            hlc INTEGER NOT NULL CHECK (hlc >= 0),
            entity INTEGER NOT NULL CHECK (entity BETWEEN 1 AND 255),
            row_id TEXT NOT NULL CHECK (length(row_id) BETWEEN 1 AND 128),
            writer TEXT CHECK (writer IS NULL OR length(writer) BETWEEN 1 AND 128),
            fields BLOB NOT NULL CHECK (typeof(fields) = 'blob' AND length(fields) > 1),
            PRIMARY KEY (origin, seq)
        ) WITHOUT ROWID;
        CREATE INDEX kept_change_row ON kept_change (entity, row_id);
        """

    /// Migration 20: a phone's session since it signed in again (`phone.renewed`: SHA-256 of
    /// its new cookie, 64 hex digits; the column takes what the schema takes, as `credential`),
    /// an optional field (issue 51).
    static let migration20 = """
        ALTER TABLE phone ADD COLUMN renewed TEXT CHECK (renewed IS NULL OR length(renewed) BETWEEN 1 AND 64);
        """

    /// Migration 22: a shopping item's quantity and note (issue 57), optional fields; the
    /// columns take what the schema takes.
    static let migration22 = """
        ALTER TABLE shopping_item ADD COLUMN quantity TEXT CHECK (quantity IS NULL OR length(quantity) BETWEEN 1 AND 40);
        ALTER TABLE shopping_item ADD COLUMN note TEXT CHECK (note IS NULL OR length(note) BETWEEN 1 AND 200);
        """

    /// Migration 23: the shopping check-offs the walking order is learned from (issue 57).
    static let migration23 = """
        CREATE TABLE shopping_checkoff (
            id TEXT PRIMARY KEY NOT NULL,
            name TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
            member TEXT,
            at INTEGER NOT NULL CHECK (at >= 0),
            after TEXT CHECK (after IS NULL OR length(after) BETWEEN 1 AND 200),
            before TEXT CHECK (before IS NULL OR length(before) BETWEEN 1 AND 200),
            versions BLOB NOT NULL CHECK (typeof(versions) = 'blob' AND length(versions) > 1)
        ) WITHOUT ROWID;
        CREATE INDEX shopping_checkoff_at ON shopping_checkoff (at);
        """

    /// Migration 24: the household's shopping lists beside its first one (issue 57), the list an
    /// item is on and the one a check-off was made on (optional fields: null, the first list);
    /// an item's list is read with its state, a list's check-offs newest first.
    static let migration24 = """
        CREATE TABLE shopping_list (
            id TEXT PRIMARY KEY NOT NULL,
            name TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 60),
            created INTEGER NOT NULL CHECK (created >= 0),
            deleted INTEGER NOT NULL CHECK (deleted IN (0, 1)),
            versions BLOB NOT NULL CHECK (typeof(versions) = 'blob' AND length(versions) > 1)
        ) WITHOUT ROWID;
        ALTER TABLE shopping_item ADD COLUMN list TEXT CHECK (list IS NULL OR length(list) BETWEEN 1 AND 128);
        CREATE INDEX shopping_item_by_list ON shopping_item (list, state, listed) WHERE list IS NOT NULL;
        ALTER TABLE shopping_checkoff ADD COLUMN list TEXT CHECK (list IS NULL OR length(list) BETWEEN 1 AND 128);
        CREATE INDEX shopping_checkoff_by_list ON shopping_checkoff (list, at);
        """

    /// Migration 25: the members' shopping trips (issue 57, "I'm going shopping"); the trips
    /// not ended are read at each look at the list.
    static let migration25 = """
        CREATE TABLE shopping_trip (
            id TEXT PRIMARY KEY NOT NULL,
            member TEXT,
            list TEXT CHECK (list IS NULL OR length(list) BETWEEN 1 AND 128),
            shop TEXT CHECK (shop IS NULL OR length(shop) BETWEEN 1 AND 60),
            started INTEGER NOT NULL CHECK (started >= 0),
            until INTEGER NOT NULL CHECK (until >= 0),
            ended INTEGER CHECK (ended IS NULL OR ended >= 0),
            versions BLOB NOT NULL CHECK (typeof(versions) = 'blob' AND length(versions) > 1)
        ) WITHOUT ROWID;
        CREATE INDEX shopping_trip_going ON shopping_trip (started) WHERE ended IS NULL;
        """

    /// Migration 26: chores that rotate (issue 58): a recurring task's rotation and its first
    /// day (optional fields), the members' days away, and the turns exchanged; a bonus's chore.
    static let migration26 = """
        ALTER TABLE ledger_entry ADD COLUMN bonus_for TEXT CHECK (bonus_for IS NULL OR length(bonus_for) BETWEEN 1 AND 128);
        ALTER TABLE recurring_template ADD COLUMN rotation TEXT CHECK (rotation IS NULL OR length(rotation) BETWEEN 1 AND 1000);
        ALTER TABLE recurring_template ADD COLUMN rotation_from TEXT
            CHECK (rotation_from IS NULL OR rotation_from GLOB '[0-9][0-9][0-9][0-9]-[0-1][0-9]-[0-3][0-9]');
        CREATE TABLE away (
            id TEXT PRIMARY KEY NOT NULL,
            member TEXT NOT NULL,
            first_day TEXT NOT NULL CHECK (first_day GLOB '[0-9][0-9][0-9][0-9]-[0-1][0-9]-[0-3][0-9]'),
            last_day TEXT NOT NULL CHECK (last_day GLOB '[0-9][0-9][0-9][0-9]-[0-1][0-9]-[0-3][0-9]'),
            deleted INTEGER NOT NULL CHECK (deleted IN (0, 1)),
            versions BLOB NOT NULL CHECK (typeof(versions) = 'blob' AND length(versions) > 1)
        ) WITHOUT ROWID;
        CREATE TABLE rotation_swap (
            id TEXT PRIMARY KEY NOT NULL,
            template TEXT NOT NULL,
            first TEXT NOT NULL CHECK (first GLOB '[0-9][0-9][0-9][0-9]-[0-1][0-9]-[0-3][0-9]'),
            second TEXT NOT NULL CHECK (second GLOB '[0-9][0-9][0-9][0-9]-[0-1][0-9]-[0-3][0-9]'),
            created INTEGER NOT NULL CHECK (created >= 0),
            versions BLOB NOT NULL CHECK (typeof(versions) = 'blob' AND length(versions) > 1)
        ) WITHOUT ROWID;
        CREATE INDEX rotation_swap_by_template ON rotation_swap (template);
        """

    /// Migration 27: the kids' savings goals (issue 58); a kid's goal not ended is read with
    /// each look at the kids.
    static let migration27 = """
        CREATE TABLE savings_goal (
            id TEXT PRIMARY KEY NOT NULL,
            kid TEXT NOT NULL,
            reward TEXT NOT NULL,
            title TEXT NOT NULL CHECK (length(title) BETWEEN 1 AND 200),
            peanuts INTEGER NOT NULL CHECK (peanuts BETWEEN 1 AND 1000),
            created INTEGER NOT NULL CHECK (created >= 0),
            ended INTEGER CHECK (ended IS NULL OR ended >= 0),
            redeemed TEXT,
            versions BLOB NOT NULL CHECK (typeof(versions) = 'blob' AND length(versions) > 1)
        ) WITHOUT ROWID;
        CREATE INDEX savings_goal_by_kid ON savings_goal (kid, created) WHERE ended IS NULL;
        """

    /// Migration 28: chores a kid reports for a parent to approve (issue 58), and the household's
    /// setting that asks for it (an optional field: absent, no approval).
    static let migration28 = """
        ALTER TABLE settings ADD COLUMN kids_approval INTEGER CHECK (kids_approval IS NULL OR kids_approval IN (0, 1));
        CREATE TABLE chore_report (
            id TEXT PRIMARY KEY NOT NULL,
            kid TEXT NOT NULL,
            selection TEXT NOT NULL,
            title TEXT NOT NULL CHECK (length(title) BETWEEN 1 AND 200),
            peanuts INTEGER NOT NULL CHECK (peanuts BETWEEN 1 AND 1000),
            day TEXT NOT NULL CHECK (day GLOB '[0-9][0-9][0-9][0-9]-[0-1][0-9]-[0-3][0-9]'),
            created INTEGER NOT NULL CHECK (created >= 0),
            declined INTEGER CHECK (declined IS NULL OR declined >= 0),
            word TEXT CHECK (word IS NULL OR length(word) BETWEEN 1 AND 180),
            versions BLOB NOT NULL CHECK (typeof(versions) = 'blob' AND length(versions) > 1)
        ) WITHOUT ROWID;
        CREATE INDEX chore_report_by_kid ON chore_report (kid, created);
        """

    /// Migration 29: a kids' chore taking turns among kids (issue 58): optional fields of the selection.
    static let migration29 = """
        ALTER TABLE catalogue_selection ADD COLUMN rotation TEXT CHECK (rotation IS NULL OR length(rotation) BETWEEN 1 AND 1000);
        ALTER TABLE catalogue_selection ADD COLUMN rotation_from TEXT
            CHECK (rotation_from IS NULL OR rotation_from GLOB '[0-9][0-9][0-9][0-9]-[0-1][0-9]-[0-3][0-9]');
        """

    /// Migration 30: the members' passwords for apps over CalDAV (issue 59).
    static let migration30 = """
        CREATE TABLE app_password (
            id TEXT PRIMARY KEY NOT NULL,
            member TEXT NOT NULL,
            login TEXT NOT NULL CHECK (length(login) BETWEEN 1 AND 60),
            label TEXT NOT NULL CHECK (length(label) BETWEEN 1 AND 60),
            hash TEXT NOT NULL CHECK (length(hash) BETWEEN 1 AND 200),
            created INTEGER NOT NULL CHECK (created >= 0),
            revoked INTEGER CHECK (revoked IS NULL OR revoked >= 0),
            last_used INTEGER CHECK (last_used IS NULL OR last_used >= 0),
            versions BLOB NOT NULL CHECK (typeof(versions) = 'blob' AND length(versions) > 1)
        ) WITHOUT ROWID;
        CREATE INDEX app_password_by_member ON app_password (member);
        """

    /// Migration 31: what apps over CalDAV made of the household's to-dos (issue 59): the UID
    /// and name an app gave one, and what the household keeps of it without mapping it.
    static let migration31 = """
        CREATE TABLE calendar_object (
            id TEXT PRIMARY KEY NOT NULL,
            kind TEXT NOT NULL CHECK (length(kind) BETWEEN 1 AND 20),
            uid TEXT NOT NULL CHECK (length(uid) BETWEEN 1 AND 255),
            href TEXT NOT NULL CHECK (length(href) BETWEEN 1 AND 255),
            kept TEXT CHECK (kept IS NULL OR length(kept) BETWEEN 1 AND 4096),
            versions BLOB NOT NULL CHECK (typeof(versions) = 'blob' AND length(versions) > 1)
        ) WITHOUT ROWID;
        """

    #if DEBUG
    /// The "next" test release's migration (``TestRelease``: TwoReleasesTests): notes, and a
    /// shopping item's brand. Never in a release build.
    static let nextRelease =
        !TestRelease.next
        ? []
        : [
            Step(
                name: "next release: notes and brands",
                sql: """
                    CREATE TABLE note (
                        id TEXT PRIMARY KEY NOT NULL,
                        title TEXT NOT NULL CHECK (length(title) BETWEEN 1 AND 200),
                        done INTEGER NOT NULL CHECK (done IN (0, 1)),
                        deleted INTEGER NOT NULL CHECK (deleted IN (0, 1)),
                        versions BLOB NOT NULL CHECK (typeof(versions) = 'blob' AND length(versions) > 1)
                    ) WITHOUT ROWID;
                    ALTER TABLE shopping_item ADD COLUMN brand TEXT CHECK (brand IS NULL OR length(brand) BETWEEN 1 AND 40);
                    """)
        ]
    #else
    static let nextRelease: [Step] = []
    #endif
}
