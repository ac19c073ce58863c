// The schema's checks of a change and of each value (Schema.swift holds the entities and fields).
extension EntitySchema {
    /// Checks one field write against the schema (type, range, length).
    public func validate(field name: String, value: FieldValue) throws(ChangeValidationError) {
        guard let number = number(of: name) else { throw .unknownField(kind, name) }
        try validate(number, value)
    }

    /// Checks a value of field number `number` (type, range, length).
    public func validate(_ number: Int, _ value: FieldValue) throws(ChangeValidationError) {
        let spec = fields[number]
        func bad(_ reason: String) -> ChangeValidationError { .badValue(kind, field: spec.name, reason: reason) }
        if case .null = value {
            if spec.nullable { return }
            throw bad("may not be empty")
        }
        switch spec.type {
        case let .text(max, allowEmpty):
            guard let s = value.textValue else { throw bad("expected text") }
            if s.isEmpty && !allowEmpty { throw bad("may not be empty") }
            let bytes = s.utf8.count
            // Characters are counted only when the bytes could exceed them (a character
            // takes at least one byte; counting them walks grapheme clusters).
            if bytes > max && s.count > max { throw bad("longer than \(max) characters") }
            if bytes > max * 4 { throw bad("longer than \(max * 4) bytes") }
            // U+0000–U+001F and U+007F are single bytes in UTF-8, and no byte of a longer
            // sequence is below 0x80: the bytes tell.
            func control(_ byte: UInt8) -> Bool { byte < 0x20 || byte == 0x7F }
            if s.utf8.withContiguousStorageIfAvailable({ $0.contains(where: control) }) ?? s.utf8.contains(where: control) {
                throw bad("contains control characters")
            }
        case .bool:
            guard value.boolValue != nil else { throw bad("expected 0 or 1") }
        case let .integer(range):
            guard let v = value.integerValue else { throw bad("expected an integer") }
            guard range.contains(v) else { throw bad("\(v) is outside \(range.lowerBound)…\(range.upperBound)") }
        case let .choice(words):
            guard let s = value.textValue, words.contains(s) else {
                throw bad("expected one of \(words.joined(separator: ", "))")
            }
        case .date:
            guard let s = value.textValue, IsoDate(s) != nil else { throw bad("expected a date YYYY-MM-DD") }
        case .reference:
            guard let s = value.textValue, RowIDRules.isValid(s) else { throw bad("expected a row id") }
        case .timestamp:
            guard let v = value.integerValue, v >= 0 else { throw bad("expected a timestamp") }
        case .language:
            guard let s = value.textValue, (2...8).contains(s.utf8.count), s.utf8.allSatisfy({ (0x61...0x7A).contains($0) }) else {
                throw bad("expected a language: 2–8 lower-case letters a–z")
            }
        }
    }

    /// Checks a whole change: row id, fields known and distinct, values valid.
    public func validate(_ change: Change) throws(ChangeValidationError) {
        try validate(change, memberChecked: false)
    }

    /// The same; `memberChecked`: the change's member has passed ``validate(member:)``
    /// already (a local transaction's changes share one, checked with the first).
    public func validate(_ change: Change, memberChecked: Bool) throws(ChangeValidationError) {
        try validateHeader(change, memberChecked: memberChecked)
        // Each field by its number (its name looked up once); a repeated one by its bit.
        var seen: UInt64 = 0
        for write in change.fields {
            guard let number = number(of: write.field) else { throw .unknownField(kind, write.field) }
            guard seen & (1 << number) == 0 else { throw .duplicateField(kind, write.field) }
            seen |= 1 << number
            try validate(number, write.value)
        }
    }
}

extension EntitySchema {
    /// The checks of ``validate(_:memberChecked:)`` before its fields: sequence number,
    /// member, row id, and a count of fields from 1 to ``Limits/maxFieldsPerChange``. A local
    /// write, whose fields are known distinct fields by number, checks each value with
    /// ``validate(_:_:)`` after these.
    public func validateHeader(_ change: Change, memberChecked: Bool) throws(ChangeValidationError) {
        guard change.seq >= 1 else { throw .badSequence }
        if !memberChecked, let writer = change.writer { try Self.validate(member: writer) }
        guard RowIDRules.isValid(change.row) else { throw .badRowID(change.rowID) }
        if let singleton = singletonRowID, change.row != TextID(singleton) { throw .badRowID(change.rowID) }
        guard !change.fields.isEmpty else { throw .emptyChange }
        guard change.fields.count <= Limits.maxFieldsPerChange else { throw .tooManyFields(change.fields.count) }
    }

    /// A change's member: a valid id, at most ``Limits/maxMemberIDLength`` bytes.
    public static func validate(member: String) throws(ChangeValidationError) {
        try validate(member: TextID(member))
    }

    /// The same of an id as a change holds it.
    package static func validate(member: TextID) throws(ChangeValidationError) {
        if !RowIDRules.isValid(member) || member.utf8Count > Limits.maxMemberIDLength {
            throw .badMember // (a valid id is ASCII and not empty: bytes are characters)
        }
    }
}
