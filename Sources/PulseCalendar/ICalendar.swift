/// iCalendar objects (RFC 5545) read and written: the format CalDAV clients send and fetch
/// (issue 59). A leaf like the wire protocol: it knows content lines, components and values,
/// nothing of the household. What a client sends is a stranger's bytes until a password
/// says otherwise, so reading is bounded before any work (``ICalLimits``) and every refusal
/// is an ``ICalError`` with a code, never a crash (`Tests/PeerSyncTests/Calendar`: a seeded
/// fuzz run in the suite). Why our own reader and not libical: decision 0024.

/// A component (`BEGIN:NAME` … `END:NAME`): its properties in order, then its components.
public struct ICalComponent: Equatable, Sendable {
    /// Upper case: `VCALENDAR`, `VTODO`, `VALARM`, …
    public var name: String
    public var properties: [ICalProperty]
    public var components: [ICalComponent]

    public init(_ name: String, properties: [ICalProperty] = [], components: [ICalComponent] = []) {
        self.name = name.uppercased()
        self.properties = properties
        self.components = components
    }

    /// The first property named `name` (any case), if any.
    public func first(_ name: String) -> ICalProperty? {
        let name = name.uppercased()
        return properties.first { $0.name == name }
    }

    /// Every property named `name` (any case), in order.
    public func all(_ name: String) -> [ICalProperty] {
        let name = name.uppercased()
        return properties.filter { $0.name == name }
    }
}

/// One content line: `NAME;PARAM=value,value:value` (RFC 5545 §3.1).
public struct ICalProperty: Equatable, Sendable {
    /// Upper case.
    public var name: String
    public var parameters: [ICalParameter]
    /// The value as written on the line (a text value still escaped: ``text``).
    public var value: String

    public init(_ name: String, _ value: String, parameters: [ICalParameter] = []) {
        self.name = name.uppercased()
        self.value = value
        self.parameters = parameters
    }

    /// A text property (`SUMMARY:Milk\, 2 l`), its value unescaped (RFC 5545 §3.3.11).
    public init(_ name: String, text: String, parameters: [ICalParameter] = []) {
        self.init(name, ICalText.escape(text), parameters: parameters)
    }

    /// The value read as TEXT.
    public var text: String { ICalText.unescape(value) }

    /// The first value of the parameter `name` (any case), if it is there.
    public func parameter(_ name: String) -> String? {
        let name = name.uppercased()
        return parameters.first { $0.name == name }?.values.first
    }
}

/// `NAME=value,value`: values as meant (a quoted value without its quotes).
public struct ICalParameter: Equatable, Sendable {
    public var name: String
    public var values: [String]

    public init(_ name: String, _ values: [String]) {
        self.name = name.uppercased()
        self.values = values
    }
}

/// What reading one object may cost, checked as it reads: the size first, then lines,
/// a line's length, nesting, components and parameters.
public struct ICalLimits: Sendable {
    public var bytes: Int
    public var lines: Int
    public var lineBytes: Int
    public var depth: Int
    public var components: Int
    public var parameters: Int

    /// An object of one to-do: a client's VTODO with its alarms and time zones is a few KiB.
    public static let standard = ICalLimits(
        bytes: 256 * 1024, lines: 4096, lineBytes: 16 * 1024, depth: 4, components: 256, parameters: 32)

    public init(bytes: Int, lines: Int, lineBytes: Int, depth: Int, components: Int, parameters: Int) {
        self.bytes = bytes
        self.lines = lines
        self.lineBytes = lineBytes
        self.depth = depth
        self.components = components
        self.parameters = parameters
    }
}

/// Why an object was refused: a code to act on (CalDAV's answer), the line, and words for a log.
public struct ICalError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Code: String, Sendable {
        case tooLarge = "too_large"
        case notUTF8 = "not_utf8"
        case malformedLine = "malformed_line"
        case unbalanced
        case tooDeep = "too_deep"
        case tooMany = "too_many"
        case notACalendar = "not_a_calendar"
        case badValue = "bad_value"
    }
    public let code: Code
    /// The physical line (from 1) where it was found; 0 when it is the whole object's.
    public let line: Int
    public let detail: String

    public init(_ code: Code, line: Int, _ detail: String) {
        self.code = code
        self.line = line
        self.detail = detail
    }

    public var description: String { line > 0 ? "line \(line): \(detail)" : detail }
}

public enum ICalendar {
    /// Reads one `VCALENDAR` object. CRLF or LF line ends, folded lines (also folded inside
    /// a UTF-8 sequence, as RFC 5545 §3.1 warns simple writers do), blank lines and a UTF-8
    /// byte order mark are accepted; anything else outside the grammar is refused.
    public static func parse(_ bytes: [UInt8], limits: ICalLimits = .standard) throws(ICalError) -> ICalComponent {
        guard bytes.count <= limits.bytes else {
            throw ICalError(.tooLarge, line: 0, "the object is \(bytes.count) bytes, at most \(limits.bytes)")
        }
        var stack: [ICalComponent] = []
        var root: ICalComponent?
        var components = 0
        for (number, line) in try logicalLines(bytes, limits: limits) {
            let property = try contentLine(line, number: number, limits: limits)
            if root != nil {
                throw ICalError(.notACalendar, line: number, "content after the calendar's END")
            }
            switch property.name {
            case "BEGIN":
                let name = property.value.uppercased()
                guard isName(name.utf8) else { throw ICalError(.malformedLine, line: number, "BEGIN without a component name") }
                guard stack.isEmpty ? name == "VCALENDAR" : name != "VCALENDAR" else {
                    throw ICalError(.notACalendar, line: number, stack.isEmpty ? "not a VCALENDAR object" : "a VCALENDAR inside another")
                }
                guard stack.count < limits.depth else {
                    throw ICalError(.tooDeep, line: number, "components nested deeper than \(limits.depth)")
                }
                components += 1
                guard components <= limits.components else {
                    throw ICalError(.tooMany, line: number, "more than \(limits.components) components")
                }
                stack.append(ICalComponent(name))
            case "END":
                guard let open = stack.popLast() else { throw ICalError(.unbalanced, line: number, "END with nothing open") }
                guard property.value.uppercased() == open.name else {
                    throw ICalError(.unbalanced, line: number, "END:\(property.value) closes \(open.name)")
                }
                if stack.isEmpty { root = open } else { stack[stack.count - 1].components.append(open) }
            default:
                guard !stack.isEmpty else { throw ICalError(.notACalendar, line: number, "a property outside any component") }
                stack[stack.count - 1].properties.append(property)
            }
        }
        guard let root else {
            throw ICalError(.unbalanced, line: 0, stack.isEmpty ? "no VCALENDAR object" : "\(stack.last!.name) is never ended")
        }
        return root
    }

    /// The object as a client expects it: CRLF line ends, lines folded at 75 octets, never
    /// inside a UTF-8 sequence (RFC 5545 §3.1).
    public static func serialize(_ component: ICalComponent) -> String {
        var out: [UInt8] = []
        write(component, into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// The component's content lines, unfolded and without line ends (`BEGIN:…` and `END:…`
    /// included): what ``serialize(_:)`` writes, one element a line before folding.
    public static func contentLines(_ component: ICalComponent) -> [String] {
        ["BEGIN:\(component.name)"] + component.properties.map(line) + component.components.flatMap(contentLines) + ["END:\(component.name)"]
    }

    private static func write(_ component: ICalComponent, into out: inout [UInt8]) {
        fold("BEGIN:\(component.name)", into: &out)
        for property in component.properties { fold(line(property), into: &out) }
        for child in component.components { write(child, into: &out) }
        fold("END:\(component.name)", into: &out)
    }

    static func line(_ property: ICalProperty) -> String {
        var text = property.name
        for parameter in property.parameters {
            text += ";\(parameter.name)="
            text += parameter.values.map { value in
                value.utf8.contains { $0 == UInt8(ascii: ";") || $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: ",") }
                    ? "\"\(value)\"" : value
            }.joined(separator: ",")
        }
        return text + ":" + property.value
    }

    private static func fold(_ line: String, into out: inout [UInt8]) {
        var width = 0
        for scalar in line.unicodeScalars {
            let size = UTF8.width(scalar)
            if width + size > 75 {
                out += [13, 10, 32]
                width = 1
            }
            out += Array(String(scalar).utf8)
            width += size
        }
        out += [13, 10]
    }

    // MARK: Reading

    /// The unfolded lines, each with the physical line it starts on; blank lines left out.
    static func logicalLines(_ bytes: [UInt8], limits: ICalLimits) throws(ICalError) -> [(Int, [UInt8])] {
        var start = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        var lines: [(Int, [UInt8])] = []
        var physical = 0
        while start < bytes.count {
            var end = start
            while end < bytes.count && bytes[end] != 10 { end += 1 }
            physical += 1
            guard physical <= limits.lines else { throw ICalError(.tooMany, line: physical, "more than \(limits.lines) lines") }
            var content = bytes[start..<end]
            if content.last == 13 { content = content.dropLast() }
            start = end + 1
            if let first = content.first, first == 32 || first == 9 {
                // A continuation: the previous line goes on without this one whitespace.
                guard !lines.isEmpty else { throw ICalError(.malformedLine, line: physical, "a continuation with no line before it") }
                guard lines[lines.count - 1].1.count + content.count - 1 <= limits.lineBytes else {
                    throw ICalError(.tooLarge, line: lines[lines.count - 1].0, "a line longer than \(limits.lineBytes) bytes")
                }
                lines[lines.count - 1].1 += content.dropFirst()
            } else if !content.isEmpty {
                guard content.count <= limits.lineBytes else {
                    throw ICalError(.tooLarge, line: physical, "a line longer than \(limits.lineBytes) bytes")
                }
                lines.append((physical, Array(content)))
            }
        }
        return lines
    }

    /// `name *(";" param) ":" value`, the grammar of RFC 5545 §3.1 (and its controls refused).
    static func contentLine(_ bytes: [UInt8], number: Int, limits: ICalLimits) throws(ICalError) -> ICalProperty {
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw ICalError(.notUTF8, line: number, "a line that is not UTF-8")
        }
        let scalars = Array(text.unicodeScalars)
        var i = 0
        func isControl(_ s: Unicode.Scalar) -> Bool { (s.value < 0x20 && s != "\t") || s.value == 0x7F }
        func token() -> String {
            let from = i
            while i < scalars.count, isNameScalar(scalars[i]) { i += 1 }
            return String(String.UnicodeScalarView(scalars[from..<i]))
        }
        let name = token()
        guard !name.isEmpty else { throw ICalError(.malformedLine, line: number, "a line without a property name") }
        var parameters: [ICalParameter] = []
        while i < scalars.count, scalars[i] == ";" {
            i += 1
            let parameterName = token()
            guard !parameterName.isEmpty, i < scalars.count, scalars[i] == "=" else {
                throw ICalError(.malformedLine, line: number, "a parameter of \(name.uppercased()) without NAME=")
            }
            i += 1
            var values: [String] = []
            repeat {
                if i < scalars.count, scalars[i] == "," { i += 1 }
                var value = String.UnicodeScalarView()
                if i < scalars.count, scalars[i] == "\"" {
                    i += 1
                    while i < scalars.count, scalars[i] != "\"" {
                        guard !isControl(scalars[i]) else { throw ICalError(.malformedLine, line: number, "a control character in a parameter") }
                        value.append(scalars[i])
                        i += 1
                    }
                    guard i < scalars.count else { throw ICalError(.malformedLine, line: number, "a quoted parameter never closed") }
                    i += 1
                } else {
                    while i < scalars.count, !";:,\"".unicodeScalars.contains(scalars[i]) {
                        guard !isControl(scalars[i]) else { throw ICalError(.malformedLine, line: number, "a control character in a parameter") }
                        value.append(scalars[i])
                        i += 1
                    }
                }
                values.append(String(value))
            } while i < scalars.count && scalars[i] == ","
            parameters.append(ICalParameter(parameterName, values))
            guard parameters.count <= limits.parameters else {
                throw ICalError(.tooMany, line: number, "more than \(limits.parameters) parameters")
            }
        }
        guard i < scalars.count, scalars[i] == ":" else {
            throw ICalError(.malformedLine, line: number, "\(name.uppercased()) has no ':' before its value")
        }
        let value = scalars[(i + 1)...]
        guard !value.contains(where: isControl) else {
            throw ICalError(.malformedLine, line: number, "a control character in the value of \(name.uppercased())")
        }
        return ICalProperty(name, String(String.UnicodeScalarView(value)), parameters: parameters)
    }

    static func isNameScalar(_ s: Unicode.Scalar) -> Bool {
        ("A"..."Z").contains(s) || ("a"..."z").contains(s) || ("0"..."9").contains(s) || s == "-"
    }

    static func isName(_ bytes: String.UTF8View) -> Bool {
        !bytes.isEmpty && bytes.allSatisfy { isNameScalar(Unicode.Scalar($0)) }
    }
}

/// TEXT values (RFC 5545 §3.3.11): `\\`, `\;`, `\,` and `\n` escaped.
public enum ICalText {
    public static func escape(_ text: String) -> String {
        var out = ""
        out.unicodeScalars.reserveCapacity(text.unicodeScalars.count)
        var previousCR = false
        for scalar in text.unicodeScalars {
            defer { previousCR = scalar == "\r" }
            switch scalar {
            case "\\": out += "\\\\"
            case ";": out += "\\;"
            case ",": out += "\\,"
            case "\n": if !previousCR { out += "\\n" }
            case "\r": out += "\\n"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// Unknown escapes keep their character (`\:` is `:`), as clients in the wild write them.
    public static func unescape(_ value: String) -> String {
        var out = String.UnicodeScalarView()
        var escaped = false
        for scalar in value.unicodeScalars {
            if escaped {
                out.append(scalar == "n" || scalar == "N" ? "\n" : scalar)
                escaped = false
            } else if scalar == "\\" {
                escaped = true
            } else {
                out.append(scalar)
            }
        }
        if escaped { out.append("\\") }
        return String(out)
    }

    /// A list of TEXT values (`CATEGORIES:Food,Dairy\, cold`), split where a comma is not escaped.
    public static func list(_ value: String) -> [String] {
        var parts: [String] = []
        var current = ""
        var escaped = false
        for scalar in value.unicodeScalars {
            if escaped {
                current.unicodeScalars.append("\\")
                current.unicodeScalars.append(scalar)
                escaped = false
            } else if scalar == "\\" {
                escaped = true
            } else if scalar == "," {
                parts.append(unescape(current))
                current = ""
            } else {
                current.unicodeScalars.append(scalar)
            }
        }
        if escaped { current.unicodeScalars.append("\\") }
        parts.append(unescape(current))
        return parts
    }
}
