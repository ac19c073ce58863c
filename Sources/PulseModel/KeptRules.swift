/// The open schema's rules (PROTOCOL.md §7): what a remote change may hold that this release
/// does not know, and within which bounds it is kept (PulseStore/KeptChanges.swift keeps it).
extension EntitySchema {
    /// ``validate(_:)`` in an open schema (a remote change): a field this release does not
    /// know is kept when it passes ``KeptRules`` rather than refused. Returns whether the
    /// change holds any such field.
    public func validateOpen(_ change: Change) throws(ChangeValidationError) -> Bool {
        try validateHeader(change, memberChecked: false)
        var seen: UInt64 = 0
        var unknown = false
        for (index, write) in change.fields.enumerated() {
            if let number = number(of: write.field) {
                guard seen & (1 << number) == 0 else { throw .duplicateField(kind, write.field) }
                seen |= 1 << number
                try validate(number, write.value)
            } else {
                try KeptRules.validate(code: kind.code, field: write.field, value: write.value)
                for earlier in change.fields[..<index] where earlier.field == write.field { throw .duplicateField(kind, write.field) }
                unknown = true
            }
        }
        return unknown
    }
}

/// The bounds of what this release keeps without knowing it (PROTOCOL.md §7, "An open
/// schema"): a change to an entity it does not know, or a field of a known entity it does not
/// know. What passes is kept and relayed; anything beyond is refused as before (ERROR 5).
public enum KeptRules {
    /// A field name: 1–64 bytes, a lower-case letter then lower-case letters, digits and `_`
    /// (every name of the registry is one: `EntityRegistryTests`).
    public static let maxFieldNameBytes = 64
    /// A text value: at most 4096 bytes (a wire string), no U+0000.
    public static let maxTextBytes = 4096

    public static func isFieldName(_ name: String) -> Bool {
        let utf8 = name.utf8
        guard let first = utf8.first, (1...maxFieldNameBytes).contains(utf8.count), (0x61...0x7A).contains(first) else { return false }
        return utf8.allSatisfy { (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x5F }
    }

    /// Checks one field of no known meaning (of entity `code`): its name and the value's size.
    public static func validate(code: UInt8, field: String, value: FieldValue) throws(ChangeValidationError) {
        guard isFieldName(field) else {
            throw .badKeptField(code: code, field: field, reason: "a field name is 1–\(maxFieldNameBytes) bytes of a–z, 0–9 and _")
        }
        if case let .text(text) = value {
            guard text.utf8.count <= maxTextBytes else {
                throw .badKeptField(code: code, field: field, reason: "longer than \(maxTextBytes) bytes")
            }
            guard !text.utf8.contains(0) else { throw .badKeptField(code: code, field: field, reason: "contains U+0000") }
        }
    }
}

extension KeptChange {
    /// Its checks: those of any change (number, member, row id, 1–16 fields, each once), and
    /// ``KeptRules`` for every field.
    public func validate() throws(ChangeValidationError) {
        guard seq >= 1 else { throw .badSequence }
        if let writer { try EntitySchema.validate(member: writer) }
        guard RowIDRules.isValid(row) else { throw .badRowID(rowID) }
        guard !fields.isEmpty else { throw .emptyChange }
        guard fields.count <= Limits.maxFieldsPerChange else { throw .tooManyFields(fields.count) }
        for (index, write) in fields.enumerated() {
            try KeptRules.validate(code: code, field: write.field, value: write.value)
            for earlier in fields[..<index] where earlier.field == write.field {
                throw .badKeptField(code: code, field: write.field, reason: "set twice in one change")
            }
        }
    }
}
