import FoundationEssentials
import PulseModel

/// The shopping rules that need no I/O.
public enum ShoppingRules {
    /// What an edit of one field of an item (its quantity or note) does.
    public enum FieldEdit: Sendable, Equatable { case unchanged, set, changedMeanwhile }

    /// An edit of a field to `new`, where it is `current` now and the editor saw `was` (nil:
    /// not said): already so, nothing (the same edit sent twice, a phone's queue replayed);
    /// changed by someone else since the editor saw it, refused, theirs kept; else set.
    public static func edit(current: String?, to new: String?, was: String??) -> FieldEdit {
        if new == current { return .unchanged }
        if case let .some(seen) = was, seen != current { return .changedMeanwhile }
        return .set
    }

    public struct Step: Sendable, Equatable {
        public let name: String
        /// The pool item this name brings back, or nil for a new item.
        public let restock: ShoppingItem?
        /// The item of that name on the list already: nothing is added.
        public var onList: ShoppingItem? = nil
        /// The earlier step of this addition with the same name (its index): nothing is added.
        public var repeatOf: Int? = nil
    }

    /// What adding `names` does (issue 52, item 9: a list never holds one thing twice by a
    /// typing slip): a name already on the list (any case) adds nothing and answers that item;
    /// a name given twice in one addition counts once; a name found in the restock pool brings
    /// that item back (the most recently bought one when several match); any other name is a
    /// new item. (Two computers adding the same name while apart still make two: each merge
    /// keeps both, and the list shows both.)
    ///
    /// Each name is looked up by its folded key (the list and the pool read once into tables):
    /// an addition of n names to a list of m items costs n + m, not n × m (a 100k-item addition
    /// to a 100k-item list took minutes).
    public static func plan(_ names: [String], pool: [ShoppingItem], active: [ShoppingItem] = []) -> [Step] {
        var listed: [String: ShoppingItem] = [:]
        for item in active { listed[item.name.nameKey] = listed[item.name.nameKey] ?? item }
        // The pool's items of each name in the pool's order, and how many a step took already.
        var pooled: [String: [ShoppingItem]] = [:]
        for item in pool { pooled[item.name.nameKey, default: []].append(item) }
        var taken: [String: Int] = [:]
        var first: [String: Int] = [:]
        first.reserveCapacity(names.count)
        return names.enumerated().map { index, name in
            let key = name.nameKey
            if let listed = listed[key] { return Step(name: name, restock: nil, onList: listed) }
            if let earlier = first[key] { return Step(name: name, restock: nil, repeatOf: earlier) }
            first[key] = index
            let used = taken[key] ?? 0
            guard let candidates = pooled[key], used < candidates.count else { return Step(name: name, restock: nil) }
            taken[key] = used + 1
            return Step(name: name, restock: candidates[used])
        }
    }

    /// The names of `cleared` items that are on the `active` list again (any case).
    public static func readded(_ cleared: [ShoppingItem], active: [ShoppingItem]) -> [String] {
        let onList = Set(active.map(\.name.nameKey))
        return cleared.filter { onList.contains($0.name.nameKey) }.map(\.name)
    }
}
