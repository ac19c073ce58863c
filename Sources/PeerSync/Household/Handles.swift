import Foundation

/// How people name a row on the command line or in the API: its position in the list
/// shown (1, 2, …), its exact name (any case), or a prefix of its id (4+ characters).
/// Ambiguity is an error that lists the candidates.
enum Handles {
    static func resolve<T>(_ handle: String, in items: [T], what: String, list: String,
                           name: (T) -> String, id: (T) -> String) throws -> T {
        let trimmed = handle.trimmingCharacters(in: .whitespaces)
        if let position = Int(trimmed) {
            guard position >= 1, position <= items.count else {
                throw HouseholdError.invalidInput("there is no \(what) \(position): the \(list) has \(items.count)")
            }
            return items[position - 1]
        }
        let byName = items.filter { name($0).lowercased() == trimmed.lowercased() }
        if byName.count == 1 { return byName[0] }
        let byID = trimmed.count >= 4 ? items.filter { id($0).hasPrefix(trimmed.lowercased()) } : []
        if byName.isEmpty && byID.count == 1 { return byID[0] }
        let candidates = byName.isEmpty ? byID : byName
        if candidates.isEmpty { throw HouseholdError.invalidInput("no \(what) \(trimmed.debugDescription) in the \(list)") }
        throw HouseholdError.invalidInput("\(trimmed.debugDescription) matches \(candidates.count) \(what)s; use an id prefix: "
            + candidates.map { "\(id($0).prefix(8)) \(name($0))" }.joined(separator: ", "))
    }
}

/// Calendar days in the machine's time zone.
public enum Days {
    public static func today(_ now: Date = Date()) -> IsoDate {
        let parts = Calendar.current.dateComponents([.year, .month, .day], from: now)
        return IsoDate(year: parts.year!, month: parts.month!, day: parts.day!)!
    }

    public static func adding(_ days: Int, to date: IsoDate) -> IsoDate {
        var components = DateComponents()
        components.year = date.year
        components.month = date.month
        components.day = date.day
        components.hour = 12
        let calendar = Calendar(identifier: .gregorian)
        let moved = calendar.date(byAdding: .day, value: days, to: calendar.date(from: components)!)!
        let parts = calendar.dateComponents([.year, .month, .day], from: moved)
        return IsoDate(year: parts.year!, month: parts.month!, day: parts.day!)!
    }

    /// 1 = Monday … 7 = Sunday.
    public static func weekday(_ date: IsoDate) -> Int {
        // Zeller-free: days since 2001-01-01 (a Monday).
        let start = Date(timeIntervalSinceReferenceDate: 0)
        var components = DateComponents()
        components.year = date.year
        components.month = date.month
        components.day = date.day
        components.hour = 12
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let days = calendar.dateComponents([.day], from: start, to: calendar.date(from: components)!).day!
        return ((days % 7) + 7) % 7 + 1
    }

    /// `today`, `tomorrow`, or `YYYY-MM-DD`.
    public static func parse(_ text: String, today: IsoDate = Days.today()) throws -> IsoDate {
        switch text.lowercased() {
        case "today": return today
        case "tomorrow": return adding(1, to: today)
        default:
            guard let date = IsoDate(text) else {
                throw HouseholdError.invalidInput("\(text.debugDescription) is not a date: use today, tomorrow or YYYY-MM-DD")
            }
            return date
        }
    }

    /// Milliseconds since 1970 at 00:00 UTC of `date`.
    static func epochMilliseconds(_ date: IsoDate) -> Int64 {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        var components = DateComponents()
        components.year = date.year
        components.month = date.month
        components.day = date.day
        return Int64(calendar.date(from: components)!.timeIntervalSince1970 * 1000)
    }
}
