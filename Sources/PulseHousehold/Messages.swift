import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// The sentences people read, kept apart from the code that decides: one JSON catalogue
/// per language (`Resources/messages-en.json`), served as it is to the page, whose
/// `messages.js` formats exactly as ``format(_:_:)`` does.
///
/// A message is text with placeholders, a small subset of ICU MessageFormat:
/// - `{name}`: the parameter (a number, a string; a list is joined with ", "; an object
///   shows its `label`);
/// - `{name, plural, one {…} other {…}}` (also `=0 {…}`), `#` inside being the number;
/// - `{name, select, value {…} other {…}}`;
/// - `{name, key, prefix}`: the catalogue's message `prefix.<value>` (a noun, a list's
///   name), else the value itself;
/// - `{name, quoted}`: each value of the list between the language's quotation marks
///   (`quote.open`, `quote.close`).
public struct MessageCatalogue: Sendable {
    public let language: String
    let messages: [String: String]
    /// English's words for a key this language lacks (a home file that translates a few).
    let fallback: [String: String]

    package init(language: String, messages: [String: String], fallback: [String: String] = [:]) {
        self.language = language
        self.messages = messages
        self.fallback = fallback
    }

    /// The catalogues built into the binary, each decoded at its first use (a command
    /// decodes only its reader's language and English).
    private static let english_ = decode("en", PackageResources.messages_en_json)
    private static let polish = decode("pl", PackageResources.messages_pl_json)
    private static let german = decode("de", PackageResources.messages_de_json)
    private static let dutch = decode("nl", PackageResources.messages_nl_json)

    static func builtInTable(_ language: String) -> [String: String]? {
        switch language {
        case "en": english_
        case "pl": polish
        case "de": german
        case "nl": dutch
        default: nil
        }
    }

    private static func decode(_ language: String, _ bytes: [UInt8]) -> [String: String] {
        guard let table = try? JSONDecoder().decode([String: String].self, from: Data(bytes)) else {
            fatalError("the built-in \(language) messages do not decode (Resources/messages-\(language).json)")
        }
        return table
    }

    /// English: the default, and the words every other language falls back to.
    public static let english = MessageCatalogue(language: "en", messages: english_)

    /// The built-in catalogue of `language` (nil: none).
    public static func builtIn(_ language: String) -> MessageCatalogue? {
        guard let table = builtInTable(language) else { return nil }
        return MessageCatalogue(language: language, messages: table, fallback: language == "en" ? [:] : english.messages)
    }

    /// The catalogue of `language` for a household: the built-in one with the home's own
    /// file `HOME/messages-<language>.json` over it (a family's corrections, or a language
    /// of its own; keys it lacks fall back to English). A file that cannot be read or is
    /// not a catalogue is a refusal naming it; the caller then uses English.
    public static func load(_ language: String, home: HouseholdHome?) throws(HouseholdError) -> MessageCatalogue {
        let base = builtIn(language)
        guard let home, Languages.isWellFormed(language) else { return base ?? english }
        let url = home.directory.appendingPathComponent("messages-\(language).json")
        guard FileManager.default.fileExists(atPath: url.path) else { return base ?? english }
        let own = try ownFile(url)
        return MessageCatalogue(language: language, messages: (base?.messages ?? [:]).merging(own) { $1 }, fallback: english.messages)
    }

    /// Reads and checks a home's message file: a JSON object of English's keys to strings
    /// whose braces balance, at most 1 MiB.
    static func ownFile(_ url: URL) throws(HouseholdError) -> [String: String] {
        func bad(_ problem: String) -> HouseholdError { .refuse(.messagesInvalid, ["path": .string(url.path), "problem": .string(problem)]) }
        let data: Data
        do {
            var info = stat()
            guard stat(url.path, &info) == 0 else { throw bad("it cannot be read") }
            guard info.st_size <= 1 << 20 else { throw bad("it is larger than 1 MiB") }
            data = try Data(contentsOf: url)
        } catch let error as HouseholdError {
            throw error
        } catch {
            throw bad("it cannot be read")
        }
        guard let table = try? JSONDecoder().decode([String: String].self, from: data) else {
            throw bad("it is not a JSON object of messages (\"key\": \"text\")")
        }
        for (key, template) in table.sorted(by: { $0.key < $1.key }) {
            guard english.messages[key] != nil else { throw bad("\"\(key.prefix(60))\" is no message of House Pulse") }
            guard balanced(template) else { throw bad("the braces of \"\(key)\" do not balance") }
        }
        return table
    }

    static func balanced(_ template: String) -> Bool {
        var depth = 0
        for c in template {
            if c == "{" {
                depth += 1
            } else if c == "}" {
                depth -= 1
                if depth < 0 { return false }
            }
        }
        return depth == 0
    }

    /// The languages a household can read: the built-in ones and those of its own files.
    public static func languages(home: HouseholdHome?) -> [String] {
        var found = Languages.builtIn
        guard let home, let names = try? FileManager.default.contentsOfDirectory(atPath: home.directory.path) else { return found }
        for name in names.sorted() where name.hasPrefix("messages-") && name.hasSuffix(".json") {
            let language = String(name.dropFirst("messages-".count).dropLast(".json".count))
            if Languages.isWellFormed(language), !found.contains(language) { found.append(language) }
        }
        return found
    }

    /// The catalogue as served to the page: every key, English's where this language has none.
    public var json: [UInt8] {
        let merged = fallback.merging(messages) { $1 }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Array((try? encoder.encode(merged)) ?? Data("{}".utf8))
    }

    public var keys: Dictionary<String, String>.Keys { messages.keys }

    /// The message `key` with `params` filled in; the key itself when the catalogue lacks it.
    public func text(_ key: String, _ params: [String: JSONValue] = [:]) -> String {
        guard let template = messages[key] ?? fallback[key] else { return key }
        return format(template, params)
    }

    public func has(_ key: String) -> Bool { messages[key] != nil || fallback[key] != nil }

    /// Formats `template` (the grammar above).
    public func format(_ template: String, _ params: [String: JSONValue]) -> String {
        var out = ""
        var index = template.startIndex
        render(template, &index, params, number: nil, into: &out, until: nil)
        return out
    }

    private func render(
        _ t: String, _ i: inout String.Index, _ params: [String: JSONValue], number: String?,
        into out: inout String, until close: Character?
    ) {
        while i < t.endIndex {
            let c = t[i]
            if let close, c == close { return }
            if c == "#", let number { out += number; i = t.index(after: i); continue }
            guard c == "{" else { out.append(c); i = t.index(after: i); continue }
            i = t.index(after: i)
            // The argument: name[, type[, rest]]
            var head = ""
            while i < t.endIndex, t[i] != "}", t[i] != "," { head.append(t[i]); i = t.index(after: i) }
            let name = head.trimmed
            guard i < t.endIndex else { return }
            if t[i] == "}" {
                out += Self.plain(params[name])
                i = t.index(after: i)
                continue
            }
            i = t.index(after: i) // ","
            var type = ""
            while i < t.endIndex, t[i] != "}", t[i] != "," { type.append(t[i]); i = t.index(after: i) }
            type = type.trimmed
            if type == "key" {
                var prefix = ""
                if i < t.endIndex, t[i] == "," { i = t.index(after: i) }
                while i < t.endIndex, t[i] != "}" { prefix.append(t[i]); i = t.index(after: i) }
                if i < t.endIndex { i = t.index(after: i) }
                let value = Self.plain(params[name])
                let key = prefix.trimmed + "." + value
                out += has(key) ? text(key, params) : value
                continue
            }
            if type == "quoted" {
                if i < t.endIndex { i = t.index(after: i) }
                let open = messages["quote.open"] ?? "\"", close = messages["quote.close"] ?? "\""
                let values: [JSONValue] = if case let .array(values)? = params[name] { values } else { [params[name] ?? .null] }
                out += values.map { open + Self.plain($0) + close }.joined(separator: ", ")
                continue
            }
            if i < t.endIndex, t[i] == "," { i = t.index(after: i) }
            // Branches: selector {text} … until the closing brace.
            let value = params[name]
            var exact: String?, category: String?, other: String?
            let exactSelector: String, categorySelector: String?
            if type == "plural" {
                let n = value?.integerValue ?? 0
                exactSelector = "=\(n)"
                categorySelector = Self.pluralCategory(n, language: language)
            } else {
                exactSelector = Self.plain(value)
                categorySelector = nil
            }
            while i < t.endIndex {
                while i < t.endIndex, t[i] == " " || t[i] == "\n" { i = t.index(after: i) }
                guard i < t.endIndex, t[i] != "}" else { break }
                var selector = ""
                while i < t.endIndex, t[i] != "{", t[i] != " " { selector.append(t[i]); i = t.index(after: i) }
                while i < t.endIndex, t[i] == " " { i = t.index(after: i) }
                guard i < t.endIndex, t[i] == "{" else { break }
                i = t.index(after: i)
                var branch = ""
                render(t, &i, params, number: type == "plural" ? Self.plain(value) : number, into: &branch, until: "}")
                if i < t.endIndex { i = t.index(after: i) }
                if selector == exactSelector, exact == nil { exact = branch }
                if selector == categorySelector, category == nil { category = branch }
                if selector == "other" { other = branch }
            }
            if i < t.endIndex { i = t.index(after: i) }
            out += exact ?? category ?? other ?? ""
        }
    }

    static func plain(_ value: JSONValue?) -> String {
        switch value {
        case nil, .null?: ""
        case let .bool(v)?: v ? "true" : "false"
        case let .integer(v)?: String(v)
        case let .number(v)?: v == v.rounded() && abs(v) < 1e15 ? String(Int64(v)) : String(v)
        case let .string(v)?: v
        case let .array(values)?: values.map { plain($0) }.joined(separator: ", ")
        case let .object(fields)?: plain(fields["label"] ?? fields["name"])
        }
    }

    /// The CLDR plural category of a whole number in `language` (CLDR's rules for whole
    /// numbers: English, German and Dutch have one/other; Polish one/few/many: 1 orzeszek,
    /// 2–4 and 22–24 orzeszki, 0, 5–21 and 25 orzeszków). Checked against CLDR for 0–1000
    /// (`Tests/page/plural-cldr.json`, the browser's `Intl.PluralRules`). An unknown
    /// language gets English's rule.
    public static func pluralCategory(_ n: Int64, language: String) -> String {
        let n = n.magnitude
        switch language {
        case "pl":
            if n == 1 { return "one" }
            let (ones, tens) = (n % 10, n % 100)
            return (2...4).contains(ones) && !(12...14).contains(tens) ? "few" : "many"
        default:
            return n == 1 ? "one" : "other"
        }
    }
}
