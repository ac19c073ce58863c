import PulseCalendar

/// A `calendar-query`'s filter (RFC 4791 §9.7), read from its XML and evaluated on an object:
/// components, properties and parameters tested for presence, text and time ranges. What the
/// clients of issue 59 send: "the VTODOs" (Thunderbird, DAVx⁵), "without COMPLETED" or "STATUS is
/// not COMPLETED" (Home Assistant's `caldav` library), a time range (Apple's Reminders).
public indirect enum DAVFilter: Equatable, Sendable {
    /// `comp-filter`: a component named `name` (in the one tested) that is there (or not), and
    /// whose properties and components match every test.
    case component(name: String, isNotDefined: Bool, range: DAVTimeRange?, properties: [DAVPropertyFilter], components: [DAVFilter])

    /// The filter's root, the calendar object itself, matches `object` (a `VCALENDAR`).
    public func matches(_ object: ICalComponent) -> Bool {
        guard case let .component(name, isNotDefined, range, properties, components) = self else { return false }
        // The root names the object itself; nested filters name its components.
        guard object.name == name else { return isNotDefined }
        return !isNotDefined && Self.test(object, range: range, properties: properties, components: components)
    }

    static func test(_ component: ICalComponent, range: DAVTimeRange?, properties: [DAVPropertyFilter], components: [DAVFilter]) -> Bool {
        if let range, !range.overlaps(component) { return false }
        guard properties.allSatisfy({ $0.matches(component) }) else { return false }
        return components.allSatisfy { filter in
            guard case let .component(name, isNotDefined, range, properties, nested) = filter else { return false }
            let named = component.components.filter { $0.name == name }
            if isNotDefined { return named.isEmpty }
            return named.contains { test($0, range: range, properties: properties, components: nested) }
        }
    }

    /// Reads `<C:filter>`; a filter we cannot evaluate is refused (403 `supported-filter`), never
    /// answered as if it matched everything.
    public static func read(_ filter: DAVElement) throws(DAVRefusal) -> DAVFilter {
        let roots = filter.children.filter { $0.namespace == DAVXML.caldav }
        guard roots.count == 1, roots[0].name == "comp-filter" else {
            throw unsupported("a filter holds exactly one comp-filter")
        }
        return try component(roots[0])
    }

    static func component(_ element: DAVElement) throws(DAVRefusal) -> DAVFilter {
        guard let name = element.attribute("name"), !name.isEmpty else { throw unsupported("a comp-filter without its name") }
        var isNotDefined = false
        var range: DAVTimeRange?
        var properties: [DAVPropertyFilter] = []
        var components: [DAVFilter] = []
        for child in element.children where child.namespace == DAVXML.caldav {
            switch child.name {
            case "is-not-defined": isNotDefined = true
            case "time-range": range = try DAVTimeRange.read(child)
            case "prop-filter": properties.append(try DAVPropertyFilter.read(child))
            case "comp-filter": components.append(try component(child))
            default: throw unsupported("comp-filter holds \(child.name)")
            }
        }
        return .component(name: name.uppercased(), isNotDefined: isNotDefined, range: range, properties: properties, components: components)
    }

    static func unsupported(_ detail: String) -> DAVRefusal {
        DAVRefusal(403, "supported_filter", detail, precondition: DAVName(DAVXML.caldav, "supported-filter"))
    }
}

/// `prop-filter` (RFC 4791 §9.7.2) and its `param-filter`s.
public struct DAVPropertyFilter: Equatable, Sendable {
    public var name: String
    public var isNotDefined = false
    public var text: DAVTextMatch?
    public var range: DAVTimeRange?
    public var parameters: [(name: String, isNotDefined: Bool, text: DAVTextMatch?)] = []

    public static func == (a: DAVPropertyFilter, b: DAVPropertyFilter) -> Bool {
        a.name == b.name && a.isNotDefined == b.isNotDefined && a.text == b.text && a.range == b.range
            && a.parameters.map(\.name) == b.parameters.map(\.name) && a.parameters.map(\.isNotDefined) == b.parameters.map(\.isNotDefined)
            && a.parameters.map(\.text) == b.parameters.map(\.text)
    }

    func matches(_ component: ICalComponent) -> Bool {
        let named = component.all(name)
        if isNotDefined { return named.isEmpty }
        return named.contains { property in
            if let text, !text.matches(name == "CATEGORIES" || name == "RESOURCES" ? ICalText.list(property.value) : [property.text]) {
                return false
            }
            if let range {
                guard let date = try? ICalDate(property), range.contains(DAVTimeRange.instant(date)) else { return false }
            }
            return parameters.allSatisfy { parameter in
                let values = property.parameters.filter { $0.name == parameter.name }.flatMap(\.values)
                if parameter.isNotDefined { return values.isEmpty }
                guard !values.isEmpty else { return false }
                return parameter.text.map { $0.matches(values) } ?? true
            }
        }
    }

    static func read(_ element: DAVElement) throws(DAVRefusal) -> DAVPropertyFilter {
        guard let name = element.attribute("name"), !name.isEmpty else { throw DAVFilter.unsupported("a prop-filter without its name") }
        var filter = DAVPropertyFilter(name: name.uppercased())
        for child in element.children where child.namespace == DAVXML.caldav {
            switch child.name {
            case "is-not-defined": filter.isNotDefined = true
            case "text-match": filter.text = try DAVTextMatch.read(child)
            case "time-range": filter.range = try DAVTimeRange.read(child)
            case "param-filter":
                guard let parameter = child.attribute("name"), !parameter.isEmpty else { throw DAVFilter.unsupported("a param-filter without its name") }
                var isNotDefined = false
                var text: DAVTextMatch?
                for test in child.children where test.namespace == DAVXML.caldav {
                    switch test.name {
                    case "is-not-defined": isNotDefined = true
                    case "text-match": text = try DAVTextMatch.read(test)
                    default: throw DAVFilter.unsupported("param-filter holds \(test.name)")
                    }
                }
                filter.parameters.append((parameter.uppercased(), isNotDefined, text))
            default: throw DAVFilter.unsupported("prop-filter holds \(child.name)")
            }
        }
        return filter
    }
}

/// `text-match` (RFC 4791 §9.7.5): a substring, in ASCII case-insensitively (`i;ascii-casemap`,
/// the default) or exactly (`i;octet`); `negate-condition="yes"` turns it round.
public struct DAVTextMatch: Equatable, Sendable {
    public var text: String
    public var caseSensitive: Bool
    public var negate: Bool

    func matches(_ values: [String]) -> Bool {
        let found = values.contains { value in
            caseSensitive ? value.contains(text) : Self.asciiLower(value).contains(Self.asciiLower(text))
        }
        return found != negate
    }

    static func asciiLower(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.map { ("A"..."Z").contains($0) ? Unicode.Scalar($0.value + 32)! : $0 }))
    }

    static func read(_ element: DAVElement) throws(DAVRefusal) -> DAVTextMatch {
        let collation = element.attribute("collation") ?? "i;ascii-casemap"
        guard collation == "i;ascii-casemap" || collation == "i;octet" else {
            throw DAVRefusal(
                403, "supported_collation", "the collation \(collation.prefix(40))",
                precondition: DAVName(DAVXML.caldav, "supported-collation"))
        }
        let negate = element.attribute("negate-condition")
        guard negate == nil || negate == "yes" || negate == "no" else { throw DAVFilter.unsupported("negate-condition=\(negate!.prefix(20))") }
        return DAVTextMatch(text: element.text, caseSensitive: collation == "i;octet", negate: negate == "yes")
    }
}

/// `time-range` (RFC 4791 §9.9), in UTC. A DATE or a floating time is read as UTC, and a time in
/// a named zone as if it were UTC: off by the zone's offset at most (documented in
/// docs/CALDAV.md; the household's tasks are due on a day).
public struct DAVTimeRange: Equatable, Sendable {
    /// `YYYYMMDDTHHMMSS`, compared as text; nil: unbounded.
    public var start: String?
    public var end: String?

    static func read(_ element: DAVElement) throws(DAVRefusal) -> DAVTimeRange {
        func bound(_ attribute: String) throws(DAVRefusal) -> String? {
            guard let value = element.attribute(attribute) else { return nil }
            guard let date = ICalDate(value: value), date.utc else {
                throw DAVRefusal(400, "bad_time_range", "time-range's \(attribute) is not a UTC date-time: \(value.prefix(40))")
            }
            return instant(date)
        }
        let range = DAVTimeRange(start: try bound("start"), end: try bound("end"))
        guard range.start != nil || range.end != nil else { throw DAVRefusal(400, "bad_time_range", "a time-range with neither start nor end") }
        return range
    }

    static func instant(_ date: ICalDate) -> String {
        let value = date.value
        return date.time == nil ? value + "T000000" : String(value.prefix(15))
    }

    func contains(_ instant: String) -> Bool {
        (start.map { $0 <= instant } ?? true) && (end.map { instant < $0 } ?? true)
    }

    /// RFC 4791 §9.9's table for VTODO (DURATION not read: a to-do of ours has none; one that has
    /// it is tested by its DTSTART). A DUE that is a DATE counts as the end of its day.
    func overlaps(_ todo: ICalComponent) -> Bool {
        func date(_ name: String) -> String? {
            // A DUE on a day (a DATE) is due by its end: the next day's start.
            todo.first(name).flatMap { try? ICalDate($0) }.map { name == "DUE" && $0.time == nil ? Self.instant($0.nextDay) : Self.instant($0) }
        }
        let s = start ?? "00000101T000000", e = end ?? "99991231T235959"
        switch (date("DTSTART"), date("DUE"), date("COMPLETED"), date("CREATED")) {
        case let (start?, due?, _, _): return (s < due || s <= start) && (e > start || e >= due)
        case let (start?, nil, _, _): return s <= start && e > start
        case let (nil, due?, _, _): return s < due && e >= due
        case let (nil, nil, completed?, created?): return (s <= created || s <= completed) && (e >= created || e >= completed)
        case let (nil, nil, completed?, nil): return s <= completed && e >= completed
        case let (nil, nil, nil, created?): return e > created
        case (nil, nil, nil, nil): return true
        }
    }
}
