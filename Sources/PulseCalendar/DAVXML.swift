/// The XML of WebDAV's bodies (RFC 4918: PROPFIND, REPORT, PROPPATCH; RFC 4791, RFC 6578), read
/// and written. Like the iCalendar reader, a stranger's bytes are read here, bounded first
/// (``DAVXMLLimits``), and refused with a code (``DAVXMLError``).
///
/// XML 1.0 with namespaces, without a document type: elements, attributes, text, CDATA,
/// comments, processing instructions, the five predefined entities and character references.
/// A `<!DOCTYPE` is refused, so no entity is ever declared, expanded or fetched (no XXE, no
/// "billion laughs"). Why not libxml2: decision 0024 (linked, it costs the agent 3 MB at rest).
public struct DAVElement: Equatable, Sendable {
    /// The namespace's URI (`DAV:`, `urn:ietf:params:xml:ns:caldav`), "" for none.
    public var namespace: String
    public var name: String
    public var attributes: [DAVAttribute]
    public var children: [DAVElement]
    /// The element's own character data, joined (CDATA included), as written: trim it to read it.
    public var text: String

    public init(_ namespace: String, _ name: String, attributes: [DAVAttribute] = [], children: [DAVElement] = [], text: String = "") {
        self.namespace = namespace
        self.name = name
        self.attributes = attributes
        self.children = children
        self.text = text
    }

    public func child(_ namespace: String, _ name: String) -> DAVElement? {
        children.first { $0.namespace == namespace && $0.name == name }
    }

    public func children(_ namespace: String, _ name: String) -> [DAVElement] {
        children.filter { $0.namespace == namespace && $0.name == name }
    }

    /// An attribute without a namespace (`name="VTODO"`), as CalDAV's filters have them.
    public func attribute(_ name: String) -> String? {
        attributes.first { $0.namespace.isEmpty && $0.name == name }?.value
    }
}

public struct DAVAttribute: Equatable, Sendable {
    public var namespace: String
    public var name: String
    public var value: String

    public init(_ namespace: String = "", _ name: String, _ value: String) {
        self.namespace = namespace
        self.name = name
        self.value = value
    }
}

public struct DAVXMLLimits: Sendable {
    public var bytes: Int
    public var depth: Int
    public var elements: Int
    public var attributes: Int

    /// A `calendar-multiget` of 1 000 hrefs is ≈ 100 KiB.
    public static let standard = DAVXMLLimits(bytes: 512 * 1024, depth: 32, elements: 20_000, attributes: 32)

    public init(bytes: Int, depth: Int, elements: Int, attributes: Int) {
        self.bytes = bytes
        self.depth = depth
        self.elements = elements
        self.attributes = attributes
    }
}

public struct DAVXMLError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Code: String, Sendable {
        case tooLarge = "too_large"
        case notUTF8 = "not_utf8"
        case documentType = "document_type"
        case malformed
        case unboundPrefix = "unbound_prefix"
        case tooDeep = "too_deep"
        case tooMany = "too_many"
    }
    public let code: Code
    /// The byte offset where it was found.
    public let offset: Int
    public let detail: String

    public init(_ code: Code, at offset: Int, _ detail: String) {
        self.code = code
        self.offset = offset
        self.detail = detail
    }

    public var description: String { "at byte \(offset): \(detail)" }
}

public enum DAVXML {
    public static let dav = "DAV:"
    public static let caldav = "urn:ietf:params:xml:ns:caldav"
    static let xml = "http://www.w3.org/XML/1998/namespace"

    /// Reads one document's root element.
    public static func parse(_ bytes: [UInt8], limits: DAVXMLLimits = .standard) throws(DAVXMLError) -> DAVElement {
        guard bytes.count <= limits.bytes else {
            throw DAVXMLError(.tooLarge, at: 0, "the body is \(bytes.count) bytes, at most \(limits.bytes)")
        }
        var reader = Reader(bytes: bytes, limits: limits)
        return try reader.document()
    }

    /// The element as a document, namespaces given prefixes in the order met (`d` for `DAV:`,
    /// `c` for CalDAV's, `n0`, `n1`, … for others).
    public static func serialize(_ root: DAVElement) -> String {
        var prefixes: [String: String] = [:]
        func collect(_ element: DAVElement) {
            for namespace in [element.namespace] + element.attributes.map(\.namespace)
            where !namespace.isEmpty && namespace != xml && prefixes[namespace] == nil {
                prefixes[namespace] = namespace == dav ? "d" : namespace == caldav ? "c" : "n\(prefixes.count)"
            }
            element.children.forEach(collect)
        }
        collect(root)
        prefixes[xml] = "xml"
        var out = "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n"
        write(root, prefixes: prefixes, declare: true, into: &out)
        return out
    }

    private static func write(_ element: DAVElement, prefixes: [String: String], declare: Bool, into out: inout String) {
        let name = element.namespace.isEmpty ? element.name : "\(prefixes[element.namespace]!):\(element.name)"
        out += "<" + name
        if declare {
            for (namespace, prefix) in prefixes.sorted(by: { $0.value < $1.value }) where namespace != xml {
                out += " xmlns:\(prefix)=\"\(escape(namespace, attribute: true))\""
            }
        }
        for attribute in element.attributes {
            let attributeName = attribute.namespace.isEmpty ? attribute.name : "\(prefixes[attribute.namespace]!):\(attribute.name)"
            out += " \(attributeName)=\"\(escape(attribute.value, attribute: true))\""
        }
        if element.children.isEmpty && element.text.isEmpty {
            out += "/>"
            return
        }
        out += ">" + escape(element.text, attribute: false)
        for child in element.children { write(child, prefixes: prefixes, declare: false, into: &out) }
        out += "</\(name)>"
    }

    public static func escape(_ text: String, attribute: Bool) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"" where attribute: out += "&quot;"
            case "\r": out += "&#13;"
            case "\n" where attribute: out += "&#10;"
            case "\t" where attribute: out += "&#9;"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    // MARK: Reading

    struct Reader {
        let bytes: [UInt8]
        let limits: DAVXMLLimits
        var i = 0
        var elements = 0
        /// Prefix → namespace, one scope per open element ("" is the default namespace).
        var scopes: [[String: String]] = [["xml": DAVXML.xml]]

        init(bytes: [UInt8], limits: DAVXMLLimits) {
            // XML's line ends (§2.11): CRLF and a lone CR are read as LF.
            var normalized: [UInt8] = []
            normalized.reserveCapacity(bytes.count)
            var k = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
            while k < bytes.count {
                if bytes[k] == 13 {
                    normalized.append(10)
                    if k + 1 < bytes.count && bytes[k + 1] == 10 { k += 1 }
                } else {
                    normalized.append(bytes[k])
                }
                k += 1
            }
            self.bytes = normalized
            self.limits = limits
        }

        func fail(_ code: DAVXMLError.Code, _ detail: String) -> DAVXMLError { DAVXMLError(code, at: i, detail) }

        func at(_ literal: String) -> Bool { bytes[i...].starts(with: literal.utf8) }

        mutating func skipSpace() {
            while i < bytes.count, bytes[i] == 32 || bytes[i] == 9 || bytes[i] == 10 { i += 1 }
        }

        mutating func document() throws(DAVXMLError) -> DAVElement {
            if at("<?xml") {
                let declaration = try instruction()
                if let encoding = declaration.firstRange(of: "encoding") {
                    let rest = declaration[encoding.upperBound...].drop { $0 == " " || $0 == "=" }.dropFirst().prefix { $0 != "\"" && $0 != "'" }
                    guard rest.lowercased() == "utf-8" else { throw fail(.notUTF8, "encoding \(rest.prefix(20)), only UTF-8 is read") }
                }
            }
            try misc()
            guard i < bytes.count, bytes[i] == UInt8(ascii: "<") else { throw fail(.malformed, "no root element") }
            let root = try element(depth: 1)
            try misc()
            guard i == bytes.count else { throw fail(.malformed, "content after the root element") }
            return root
        }

        /// Spaces, comments and processing instructions (a document type refused).
        mutating func misc() throws(DAVXMLError) {
            while true {
                skipSpace()
                if at("<!--") {
                    try comment()
                } else if at("<?") {
                    _ = try instruction()
                } else if at("<!DOCTYPE") || at("<!") {
                    throw fail(.documentType, "a document type or declaration: not read")
                } else {
                    return
                }
            }
        }

        mutating func comment() throws(DAVXMLError) {
            i += 4
            while i < bytes.count, !at("--") { i += 1 }
            guard at("-->") else { throw fail(.malformed, "a comment never closed, or -- inside it") }
            i += 3
        }

        mutating func instruction() throws(DAVXMLError) -> String {
            let start = i
            while i < bytes.count, !at("?>") { i += 1 }
            guard i < bytes.count else { throw fail(.malformed, "a processing instruction never closed") }
            i += 2
            return try utf8(bytes[start..<i])
        }

        func utf8(_ slice: ArraySlice<UInt8>) throws(DAVXMLError) -> String {
            guard let text = String(validating: slice, as: UTF8.self) else { throw fail(.notUTF8, "bytes that are not UTF-8") }
            for scalar in text.unicodeScalars where !isChar(scalar) {
                throw fail(.malformed, "a character XML does not allow (U+\(String(scalar.value, radix: 16, uppercase: true)))")
            }
            return text
        }

        func isChar(_ s: Unicode.Scalar) -> Bool {
            s == "\t" || s == "\n" || s == "\r" || (s.value >= 0x20 && s.value != 0xFFFE && s.value != 0xFFFF)
        }

        mutating func name() throws(DAVXMLError) -> String {
            let start = i
            while i < bytes.count {
                let b = bytes[i]
                let ok =
                    (b >= 0x80) || (b >= 97 && b <= 122) || (b >= 65 && b <= 90) || b == 95 || b == 58
                    || (i > start && ((b >= 48 && b <= 57) || b == 45 || b == 46))
                guard ok else { break }
                i += 1
            }
            guard i > start, i - start <= 256 else { throw fail(.malformed, i == start ? "a name expected" : "a name longer than 256 bytes") }
            return try utf8(bytes[start..<i])
        }

        /// `prefix:local` → (namespace, local); unprefixed attributes have no namespace.
        func resolve(_ qualified: String, attribute: Bool) throws(DAVXMLError) -> (String, String) {
            let parts = qualified.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count <= 2, !parts.contains(where: \.isEmpty) else { throw fail(.malformed, "the name \(qualified.prefix(40))") }
            let (prefix, local) = parts.count == 2 ? (String(parts[0]), String(parts[1])) : ("", String(parts[0]))
            if prefix.isEmpty && attribute { return ("", local) }
            guard let namespace = scopes.last![prefix] ?? (prefix.isEmpty ? "" : nil) else {
                throw fail(.unboundPrefix, "the prefix \(prefix.prefix(40)) names no namespace")
            }
            return (namespace, local)
        }

        mutating func element(depth: Int) throws(DAVXMLError) -> DAVElement {
            guard depth <= limits.depth else { throw fail(.tooDeep, "elements nested deeper than \(limits.depth)") }
            elements += 1
            guard elements <= limits.elements else { throw fail(.tooMany, "more than \(limits.elements) elements") }
            i += 1 // "<"
            let qualified = try name()
            var raw: [(String, String)] = []
            var scope = scopes.last!
            while true {
                let before = i
                skipSpace()
                guard i < bytes.count else { throw fail(.malformed, "the tag \(qualified.prefix(40)) never closed") }
                if bytes[i] == UInt8(ascii: ">") || at("/>") { break }
                guard i > before else { throw fail(.malformed, "a space expected before an attribute") }
                let attribute = try name()
                skipSpace()
                guard i < bytes.count, bytes[i] == UInt8(ascii: "=") else { throw fail(.malformed, "= expected after \(attribute.prefix(40))") }
                i += 1
                skipSpace()
                let value = try attributeValue()
                guard !raw.contains(where: { $0.0 == attribute }) else { throw fail(.malformed, "the attribute \(attribute.prefix(40)) twice") }
                raw.append((attribute, value))
                guard raw.count <= limits.attributes else { throw fail(.tooMany, "more than \(limits.attributes) attributes") }
                if attribute == "xmlns" {
                    scope[""] = value
                } else if attribute.hasPrefix("xmlns:") {
                    let prefix = String(attribute.dropFirst(6))
                    guard !value.isEmpty, !prefix.isEmpty, prefix != "xmlns", prefix != "xml" else {
                        throw fail(.malformed, "the namespace declaration \(attribute.prefix(40))")
                    }
                    scope[prefix] = value
                }
            }
            scopes.append(scope)
            defer { scopes.removeLast() }
            let (namespace, local) = try resolve(qualified, attribute: false)
            var result = DAVElement(namespace, local)
            for (attribute, value) in raw where attribute != "xmlns" && !attribute.hasPrefix("xmlns:") {
                let (attributeNamespace, attributeName) = try resolve(attribute, attribute: true)
                guard !result.attributes.contains(where: { $0.namespace == attributeNamespace && $0.name == attributeName }) else {
                    throw fail(.malformed, "the attribute \(attribute.prefix(40)) twice")
                }
                result.attributes.append(DAVAttribute(attributeNamespace, attributeName, value))
            }
            if at("/>") {
                i += 2
                return result
            }
            i += 1 // ">"
            var text = ""
            while true {
                guard i < bytes.count else { throw fail(.malformed, "\(qualified.prefix(40)) never ended") }
                if at("</") {
                    i += 2
                    let closing = try name()
                    skipSpace()
                    guard closing == qualified, i < bytes.count, bytes[i] == UInt8(ascii: ">") else {
                        throw fail(.malformed, "</\(closing.prefix(40))> closes <\(qualified.prefix(40))>")
                    }
                    i += 1
                    result.text = text
                    return result
                } else if at("<![CDATA[") {
                    i += 9
                    let start = i
                    while i < bytes.count, !at("]]>") { i += 1 }
                    guard i < bytes.count else { throw fail(.malformed, "a CDATA section never closed") }
                    text += try utf8(bytes[start..<i])
                    i += 3
                } else if at("<!--") {
                    try comment()
                } else if at("<?") {
                    _ = try instruction()
                } else if at("<!") {
                    throw fail(.documentType, "a declaration inside an element")
                } else if bytes[i] == UInt8(ascii: "<") {
                    result.children.append(try element(depth: depth + 1))
                } else {
                    text += try characters(until: UInt8(ascii: "<"))
                }
            }
        }

        mutating func attributeValue() throws(DAVXMLError) -> String {
            guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") || bytes[i] == UInt8(ascii: "'") else {
                throw fail(.malformed, "an attribute's value must be quoted")
            }
            let quote = bytes[i]
            i += 1
            let value = try characters(until: quote)
            guard i < bytes.count else { throw fail(.malformed, "an attribute's value never closed") }
            i += 1
            return value
        }

        /// Character data up to `end` (not consumed), references resolved; in an attribute
        /// (a quote ends it), `<` is refused and a literal tab or line end reads as a space.
        mutating func characters(until end: UInt8) throws(DAVXMLError) -> String {
            let inAttribute = end != UInt8(ascii: "<")
            var out = ""
            var start = i
            func flush(_ reader: Reader, to position: Int) throws(DAVXMLError) {
                var chunk = try reader.utf8(reader.bytes[start..<position])
                if inAttribute { chunk = String(chunk.map { $0 == "\t" || $0 == "\n" ? " " : $0 }) }
                out += chunk
            }
            while i < bytes.count, bytes[i] != end {
                if bytes[i] == UInt8(ascii: "<") { throw fail(.malformed, "< inside an attribute's value") }
                if !inAttribute && at("]]>") { throw fail(.malformed, "]]> outside a CDATA section") }
                guard bytes[i] == UInt8(ascii: "&") else {
                    i += 1
                    continue
                }
                try flush(self, to: i)
                out.unicodeScalars.append(try reference())
                start = i
            }
            try flush(self, to: i)
            return out
        }

        mutating func reference() throws(DAVXMLError) -> Unicode.Scalar {
            let start = i
            while i < bytes.count, bytes[i] != UInt8(ascii: ";"), i - start < 12 { i += 1 }
            guard i < bytes.count, bytes[i] == UInt8(ascii: ";") else { throw fail(.malformed, "& without its ;") }
            let body = String(decoding: bytes[(start + 1)..<i], as: UTF8.self)
            i += 1
            switch body {
            case "lt": return "<"
            case "gt": return ">"
            case "amp": return "&"
            case "apos": return "'"
            case "quot": return "\""
            default:
                let hex = body.hasPrefix("#x"), digits = body.dropFirst(hex ? 2 : 1)
                let number =
                    body.hasPrefix("#") && !digits.isEmpty && digits.allSatisfy({ hex ? $0.isHexDigit : $0.isASCII && $0.isNumber })
                    ? UInt32(digits, radix: hex ? 16 : 10) : nil
                guard let number, let scalar = Unicode.Scalar(number), isChar(scalar) else {
                    throw fail(body.hasPrefix("#") ? .malformed : .documentType, "the reference &\(body.prefix(12)); (no entity is declared)")
                }
                return scalar
            }
        }
    }
}
