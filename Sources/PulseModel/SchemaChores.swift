extension EntityKind {
    /// The schemas of the entities of issue 58's chores and kids (added through the open schema:
    /// no protocol version): days away, swapped turns, savings goals, chore reports.
    static let choreSchemas: [EntitySchema] = [
        EntitySchema(
            kind: .away,
            fields: [
                FieldSpec("member", .reference(.member), immutable: true),
                FieldSpec("first_day", .date),
                FieldSpec("last_day", .date),
                FieldSpec("deleted", .bool),
            ], tombstone: deleted, singletonRowID: nil),
        EntitySchema(
            kind: .rotationSwap,
            fields: [
                FieldSpec("template", .reference(.recurringTemplate), immutable: true),
                FieldSpec("first", .date, immutable: true),
                FieldSpec("second", .date, immutable: true),
                FieldSpec("created", .timestamp, immutable: true),
            ], tombstone: nil, singletonRowID: nil),
        EntitySchema(
            kind: .savingsGoal,
            fields: [
                FieldSpec("kid", .reference(.kid), immutable: true),
                FieldSpec("reward", .reference(.catalogueSelection), immutable: true),
                FieldSpec("title", .text(max: 200), immutable: true),
                FieldSpec("peanuts", .integer(1...1000), immutable: true),
                FieldSpec("created", .timestamp, immutable: true),
                FieldSpec("ended", .timestamp, keptOnceSet: true),
                FieldSpec("redeemed", .reference(.ledgerEntry), nullable: true),
            ], tombstone: nil, singletonRowID: nil),
        EntitySchema(
            kind: .choreReport,
            fields: [
                FieldSpec("kid", .reference(.kid), immutable: true),
                FieldSpec("selection", .reference(.catalogueSelection), immutable: true),
                FieldSpec("title", .text(max: 200), immutable: true),
                FieldSpec("peanuts", .integer(1...1000), immutable: true),
                FieldSpec("day", .date, immutable: true),
                FieldSpec("created", .timestamp, immutable: true),
                FieldSpec("declined", .timestamp, keptOnceSet: true),
                FieldSpec("word", .text(max: 180), nullable: true),
            ], tombstone: nil, singletonRowID: nil),
    ]
}
