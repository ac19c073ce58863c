extension EntityKind {
    /// The schemas of the entities of issue 59's apps over CalDAV (added through the open schema:
    /// no protocol version): app passwords, and what apps made of the household's to-dos.
    static let appSchemas: [EntitySchema] = [
        EntitySchema(
            kind: .appPassword,
            fields: [
                FieldSpec("member", .reference(.member), immutable: true),
                FieldSpec("login", .text(max: 60), immutable: true),
                FieldSpec("label", .text(max: 60), immutable: true),
                FieldSpec("hash", .text(max: 200), immutable: true),
                FieldSpec("created", .timestamp, immutable: true),
                FieldSpec("revoked", .timestamp, keptOnceSet: true),
                FieldSpec("last_used", .timestamp, nullable: true),
            ], tombstone: nil, singletonRowID: nil),
        // Texts within what a release that does not know the entity keeps and relays
        // (``KeptRules/maxTextBytes``): the open schema's promise, no protocol version.
        EntitySchema(
            kind: .calendarObject,
            fields: [
                FieldSpec("kind", .text(max: 20), immutable: true),
                FieldSpec("uid", .text(max: 255)),
                FieldSpec("href", .text(max: 255)),
                FieldSpec("kept", .text(max: 4096), nullable: true),
            ], tombstone: nil, singletonRowID: nil),
    ]
}
