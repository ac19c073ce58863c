import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

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

    /// `today`, `tomorrow`, or `YYYY-MM-DD`; nil for anything else.
    public static func parse(_ text: String, today: IsoDate = Days.today()) -> IsoDate? {
        switch text.lowercased() {
        case "today": today
        case "tomorrow": adding(1, to: today)
        default: IsoDate(text)
        }
    }

    /// Milliseconds since 1970 at 00:00 UTC of `date`.
    package static func epochMilliseconds(_ date: IsoDate) -> Int64 {
        Int64(number(date)) * 86_400_000
    }

    /// Days since 1970-01-01 (negative before).
    package static func number(_ date: IsoDate) -> Int {
        let y = date.month <= 2 ? date.year - 1 : date.year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (date.month > 2 ? date.month - 3 : date.month + 9) + 2) / 5 + date.day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The UTC day number of an instant.
    package static func number(of instant: Date) -> Int {
        Int((instant.timeIntervalSince1970 / 86_400).rounded(.down))
    }

    /// The date of a day number.
    package static func civil(_ number: Int) -> IsoDate {
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
