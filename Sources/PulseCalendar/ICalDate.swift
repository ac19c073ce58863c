/// DATE and DATE-TIME values (RFC 5545 §3.3.4, §3.3.5): `20261205`, `20261205T173000`,
/// `20261205T173000Z`, with the `TZID` parameter kept as named (a household's day is what the
/// mapping needs, not the client's zone database).
public struct ICalDate: Equatable, Sendable {
    public var year: Int
    public var month: Int
    public var day: Int
    /// Hours, minutes, seconds; nil: a DATE (a whole day).
    public var time: (hour: Int, minute: Int, second: Int)?
    /// `Z`: the time is UTC. Otherwise floating, or in `zone`.
    public var utc: Bool
    public var zone: String?

    public init(year: Int, month: Int, day: Int, time: (hour: Int, minute: Int, second: Int)? = nil, utc: Bool = false, zone: String? = nil) {
        self.year = year
        self.month = month
        self.day = day
        self.time = time
        self.utc = utc
        self.zone = zone
    }

    public static func == (a: ICalDate, b: ICalDate) -> Bool {
        a.year == b.year && a.month == b.month && a.day == b.day && a.utc == b.utc && a.zone == b.zone
            && a.time?.hour == b.time?.hour && a.time?.minute == b.time?.minute && a.time?.second == b.time?.second
    }

    /// The property's value read as a date, or an error naming the property.
    public init(_ property: ICalProperty) throws(ICalError) {
        guard let date = ICalDate(value: property.value, zone: property.parameter("TZID")) else {
            throw ICalError(.badValue, line: 0, "\(property.name) is not a date: \(property.value.prefix(40))")
        }
        if property.parameter("VALUE")?.uppercased() == "DATE" && date.time != nil {
            throw ICalError(.badValue, line: 0, "\(property.name) says VALUE=DATE but holds a time")
        }
        self = date
    }

    /// `YYYYMMDD` or `YYYYMMDDTHHMMSS[Z]`; nil when it is neither or names no real day.
    public init?(value: String, zone: String? = nil) {
        let bytes = Array(value.utf8)
        func number(_ range: Range<Int>) -> Int? {
            var n = 0
            for i in range {
                guard bytes[i] >= 48 && bytes[i] <= 57 else { return nil }
                n = n * 10 + Int(bytes[i] - 48)
            }
            return n
        }
        guard bytes.count == 8 || bytes.count == 15 || bytes.count == 16,
            let year = number(0..<4), let month = number(4..<6), let day = number(6..<8),
            (1...12).contains(month), day >= 1, day <= ICalDate.days(in: month, of: year)
        else { return nil }
        self.init(year: year, month: month, day: day)
        if bytes.count > 8 {
            guard bytes[8] == UInt8(ascii: "T"), let hour = number(9..<11), let minute = number(11..<13),
                let second = number(13..<15), hour < 24, minute < 60, second <= 60
            else { return nil }
            if bytes.count == 16 {
                guard bytes[15] == UInt8(ascii: "Z") else { return nil }
                utc = true
            }
            time = (hour, minute, second)
            self.zone = utc ? nil : zone
        }
    }

    /// As written in a property's value (`TZID` goes in its parameter).
    public var value: String {
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        let yyyy = String(repeating: "0", count: max(0, 4 - String(year).count)) + String(year)
        var text = yyyy + two(month) + two(day)
        if let time { text += "T" + two(time.hour) + two(time.minute) + two(time.second) + (utc ? "Z" : "") }
        return text
    }

    /// The day as the household writes it (`2026-12-05`).
    public var isoDay: String {
        let text = value
        return "\(text.prefix(4))-\(text.dropFirst(4).prefix(2))-\(text.dropFirst(6).prefix(2))"
    }

    /// The day after (a DATE's end, as a to-do due on a day is due by its end).
    public var nextDay: ICalDate {
        var next = ICalDate(year: year, month: month, day: day + 1, time: time, utc: utc, zone: zone)
        if next.day > ICalDate.days(in: month, of: year) {
            next.day = 1
            next.month += 1
            if next.month > 12 {
                next.month = 1
                next.year += 1
            }
        }
        return next
    }

    static func days(in month: Int, of year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }
}
