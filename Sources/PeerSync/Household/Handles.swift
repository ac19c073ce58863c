import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// How people name a row on the command line or in the API: its position in the list
/// shown (1, 2, …), its exact name (any case), or a prefix of its id (4+ characters).
/// Ambiguity is an error that lists the candidates.
enum Handles {
    /// `positional`: the list positions count in, when it is not all of `items` (the
    /// shopping list, while names and ids also find items of the restock pool).
    static func resolve<T>(_ handle: String, in items: [T], positional: [T]? = nil, what: String, list: String,
                           name: (T) -> String, id: (T) -> String) throws -> T {
        let trimmed = handle.trimmed
        let positional = positional ?? items
        let position = Int(trimmed)
        if let position, position >= 1, position <= positional.count { return positional[position - 1] }
        let byName = items.filter { name($0).lowercased() == trimmed.lowercased() }
        if byName.count == 1 { return byName[0] }
        // A number beyond the list may still be an id prefix made of digits ("8894…").
        let byID = trimmed.count >= 4 ? items.filter { id($0).hasPrefix(trimmed.lowercased()) } : []
        if let position, byName.isEmpty, byID.isEmpty {
            throw HouseholdError.invalidInput("there is no \(what) \(position): the \(list) has \(positional.count)")
        }
        if byName.isEmpty && byID.count == 1 { return byID[0] }
        let candidates = byName.isEmpty ? byID : byName
        if candidates.isEmpty { throw HouseholdError.invalidInput("no \(what) \(trimmed.debugDescription) in the \(list)") }
        throw HouseholdError.invalidInput("\(trimmed.debugDescription) matches \(candidates.count) \(what)s; use an id prefix: "
            + candidates.map { "\(id($0).prefix(8)) \(name($0))" }.joined(separator: ", "))
    }
}

/// Calendar days in the machine's time zone (proleptic Gregorian, as ISO 8601). The local
/// date comes from the C library (`localtime_r`: the TZ variable, else /etc/localtime);
/// day arithmetic is exact integer arithmetic on day numbers (H. Hinnant's
/// `days_from_civil`), so no calendar library is needed.
public enum Days {
    public static func today(_ now: Date = Date()) -> IsoDate {
        var seconds = time_t(now.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        guard localtime_r(&seconds, &parts) != nil else { return civil(number(of: now)) }
        return IsoDate(year: Int(parts.tm_year) + 1900, month: Int(parts.tm_mon) + 1, day: Int(parts.tm_mday))!
    }

    /// Seconds from `now` until just after the next local midnight (00:00:01).
    public static func secondsUntilNextMidnight(_ now: Date = Date()) -> Double {
        let current = now.timeIntervalSince1970
        var seconds = time_t(current.rounded(.down))
        var parts = tm()
        guard localtime_r(&seconds, &parts) != nil else { return 3600 }
        parts.tm_mday += 1
        parts.tm_hour = 0
        parts.tm_min = 0
        parts.tm_sec = 1
        parts.tm_isdst = -1 // let mktime decide (a DST change at midnight)
        let next = mktime(&parts)
        guard next != -1 else { return 3600 }
        return max(1, Double(next) - current)
    }

    public static func adding(_ days: Int, to date: IsoDate) -> IsoDate {
        civil(number(date) + days)
    }

    /// 1 = Monday … 7 = Sunday.
    public static func weekday(_ date: IsoDate) -> Int {
        // 1970-01-01 (day 0) was a Thursday (4).
        ((number(date) + 3) % 7 + 7) % 7 + 1
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
        Int64(number(date)) * 86_400_000
    }

    /// Days since 1970-01-01 (negative before).
    static func number(_ date: IsoDate) -> Int {
        let y = date.month <= 2 ? date.year - 1 : date.year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (date.month > 2 ? date.month - 3 : date.month + 9) + 2) / 5 + date.day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The UTC day number of an instant.
    static func number(of instant: Date) -> Int {
        Int((instant.timeIntervalSince1970 / 86_400).rounded(.down))
    }

    /// The date of a day number.
    static func civil(_ number: Int) -> IsoDate {
        let z = number + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return IsoDate(year: yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month: month, day: day)!
    }
}
