extension EntityKind {
    /// The schemas of the entities of issue 59's apps over CalDAV (added through the open schema:
    /// no protocol version): app passwords.
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
            ], tombstone: nil, singletonRowID: nil)
    ]
}
