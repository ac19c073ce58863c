import PulseModel

/// Which language a reader gets: the languages the household's words exist in, and the
/// choice of one from what a person asked for (issue 40). Pure: table-tested.
public enum Languages {
    /// The languages built in (complete catalogues: `Tests/page/catalogues.test.mjs`); the
    /// first is the default. A household may add its own (``MessageCatalogue/languages(home:)``).
    public static let builtIn = ["en", "pl", "de", "nl"]
    public static let available = builtIn

    /// Each language by its own name (never translated: a reader finds their language by it).
    public static let ownNames = ["en": "English", "pl": "Polski", "de": "Deutsch", "nl": "Nederlands"]

    /// A language tag as this program names languages: 2 to 8 lower-case ASCII letters.
    public static func isWellFormed(_ tag: String) -> Bool {
        (2...8).contains(tag.utf8.count) && tag.utf8.allSatisfy { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) }
    }

    /// What the command line reads: the language, and the explicit choice (`--lang`,
    /// `PULSE_LANG`) that named no available language, to say so in one line.
    public struct Choice: Sendable, Equatable {
        public var language: String
        public var unknown: String?
    }

    /// ``forCommandLine(explicit:environment:available:)``, also naming an explicit choice
    /// that is not available (the POSIX variables name the system's language, which may
    /// well be one we lack: no line for those).
    public static func choice(explicit: String?, environment: [String: String], available: [String] = available) -> Choice {
        let language = forCommandLine(explicit: explicit, environment: environment, available: available)
        for tag in [explicit, environment["PULSE_LANG"]].compactMap({ $0 }) where !tag.isEmpty {
            if match(tag, in: available) == nil { return Choice(language: language, unknown: tag) }
            break
        }
        return Choice(language: language, unknown: nil)
    }

    /// The command line's language: `--lang`, then `PULSE_LANG`, then the POSIX variables
    /// in their order of precedence (`LANGUAGE`, a colon-separated list; `LC_ALL`;
    /// `LC_MESSAGES`; `LANG`), the first that names an available language; else the default.
    /// `C` and `POSIX` name no language. Foundation on Linux ignores these variables, so
    /// they are read here.
    public static func forCommandLine(explicit: String?, environment: [String: String], available: [String] = available) -> String {
        var wanted: [String] = []
        if let explicit { wanted.append(explicit) }
        if let pulse = environment["PULSE_LANG"] { wanted.append(pulse) }
        if let list = environment["LANGUAGE"] { wanted += list.split(separator: ":").map(String.init) }
        for key in ["LC_ALL", "LC_MESSAGES", "LANG"] {
            if let value = environment[key] { wanted.append(value) }
        }
        for tag in wanted { if let language = match(tag, in: available) { return language } }
        return available[0]
    }

    /// The page's language from an `Accept-Language` header: the available language of the
    /// highest weight (`q`, default 1; `q=0` refuses), the header's order breaking ties.
    public static func forAcceptLanguage(_ header: String?, available: [String] = available) -> String {
        guard let header else { return available[0] }
        var best: (weight: Double, index: Int, language: String)?
        for (index, part) in header.split(separator: ",").prefix(32).enumerated() {
            let pieces = part.split(separator: ";").map { String($0).trimmed }
            guard let tag = pieces.first, !tag.isEmpty else { continue }
            var weight = 1.0
            for parameter in pieces.dropFirst() where parameter.hasPrefix("q=") {
                weight = Double(parameter.dropFirst(2)) ?? 0
            }
            guard weight > 0, let language = match(tag, in: available) else { continue }
            if best == nil || weight > best!.weight { best = (weight, index, language) }
        }
        return best?.language ?? available[0]
    }

    /// `pl_PL.UTF-8`, `pl-PL`, `PL` → `pl` when available; nil for `C`, `POSIX`, `*` or an
    /// unavailable language.
    static func match(_ tag: String, in available: [String]) -> String? {
        let base = tag.split(whereSeparator: { "_-.@".contains($0) }).first.map { $0.lowercased() } ?? ""
        guard base != "c", base != "posix", !base.isEmpty else { return nil }
        return available.contains(base) ? base : nil
    }
}
