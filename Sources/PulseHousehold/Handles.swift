import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import PulseModel

/// How people name a row on the command line or in the API: its position in the list
/// shown (1, 2, …), its exact name (any case), or the start or the end of its id (4+
/// characters). Ambiguity is an error that lists the candidates by their short codes.
///
/// The end of an id is what tells rows apart: a row made since ids became time-ordered
/// (``RowIDRules/newRowID()``) starts with its creation time, shared by the rows made in
/// the same minute, and ends with random digits; an older row's id is random throughout,
/// so the start people may have used still finds it.
package enum Handles {
    /// `positional`: the list positions count in, when it is not all of `items` (the
    /// shopping list, while names and ids also find items of the restock pool). `what` and
    /// `list` are the row's kind and the list's, as the refusals name them (`noun.<what>`
    /// and `list.<list>` in the message catalogue).
    package static func resolve<T>(
        _ handle: String, in items: [T], positional: [T]? = nil, what: String, list: String,
        name: (T) -> String, id: (T) -> String
    ) throws -> T {
        let trimmed = handle.trimmed
        let positional = positional ?? items
        let position = Int(trimmed)
        if let position, position >= 1, position <= positional.count { return positional[position - 1] }
        let byName = items.filter { name($0).lowercased() == trimmed.lowercased() }
        if byName.count == 1 { return byName[0] }
        // A number beyond the list may still be the start or end of an id made of digits ("8894…").
        let lowered = trimmed.lowercased()
        let byID = trimmed.count >= 4 ? items.filter { id($0).hasPrefix(lowered) || id($0).hasSuffix(lowered) } : []
        if let position, byName.isEmpty, byID.isEmpty {
            throw HouseholdError.refuse(
                .noSuchPosition, ["kind": .string(what), "list": .string(list), "position": JSONValue(position), "count": JSONValue(positional.count)])
        }
        if byName.isEmpty && byID.count == 1 { return byID[0] }
        let candidates = byName.isEmpty ? byID : byName
        if candidates.isEmpty { throw HouseholdError.refuse(.notFound, ["kind": .string(what), "list": .string(list), "handle": .string(trimmed)]) }
        throw HouseholdError.refuse(
            .ambiguous,
            [
                "kind": .string(what), "list": .string(list), "handle": .string(trimmed),
                "count": JSONValue(candidates.count),
                "candidates": .array(
                    candidates.map {
                        .object([
                            "id": .string(id($0)), "code": .string(shortCode(id($0))),
                            "label": .string("\(shortCode(id($0))) \(name($0))"),
                        ])
                    }),
            ])
    }

    /// The short code people type for a row: the last 8 characters of its id (random
    /// digits in every id this program makes).
    package static func shortCode(_ id: String) -> String { String(id.suffix(8)) }
}
