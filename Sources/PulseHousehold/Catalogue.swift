import FoundationEssentials
import PulseModel

/// One thing parents can pick for their kids: a rule to keep, a chore to do, or a reward
/// to spend peanuts on.
public struct CatalogueItem: Sendable, Codable, Equatable {
    public enum Kind: String, Sendable, Codable, CaseIterable { case rule, chore, reward }
    /// The catalogue's id (`rule_001`), or `own-…` for a family's own item.
    public let id: String
    public let kind: Kind
    /// `security`, `respect` or `fun` (shown as Security, Respect & Boundaries, House & Coziness).
    public let category: String
    public let title: String
    public let peanuts: Int
    /// Picked by an adult: what the kids see.
    public var selected: Bool
    /// Added by the family, not shipped with the catalogue.
    public var own: Bool
    /// The message of the title in every language (`catalogue.<id>`) while the title is the
    /// built-in one: each reader sees it in their language. Nil once a family gave the item
    /// its own words (an own item, `HOME/catalogue.json`): then their text wins everywhere.
    public var titleKey: String? = nil
    /// A chore taking turns among kids (issue 58): the kids in turn order, and today's turn and
    /// the next three (``KidTurn``); nil when it does not.
    public var rotation: [ChorePerson]? = nil
    public var turns: [KidTurn]? = nil
}

/// The catalogue shipped with pulse-peer (`Resources/catalogue.json`, embedded in the
/// binary), or the family's own file `HOME/catalogue.json` when there is one (to
/// translate it, say). Validated whenever it is loaded; a bad file is an error that names
/// the file and the problem, and changes nothing.
public struct Catalogue: Sendable, Equatable {
    public static let categories = ["security": "Security", "respect": "Respect & Boundaries", "fun": "House & Coziness"]
    public static let peanutRange = 1...20
    public let items: [CatalogueItem]

    private struct File: Decodable {
        struct Category: Decodable {
            let id: String
            let title: String?
            let items: [Item]
        }
        struct Item: Decodable {
            let id: String
            let kind: String
            let title: String
            let peanuts: Int
        }
        let version: Int
        let categories: [Category]
    }

    /// The catalogue in the binary.
    public static func builtIn() throws -> Catalogue { try builtInParsed.get() }

    /// The message key of an item's title when `title` is the built-in title of `id`.
    public static func titleKey(id: String?, title: String) -> String? {
        guard let id, let builtIn = try? builtInParsed.get(), builtIn.titles[id] == title else { return nil }
        return "catalogue.\(id)"
    }

    /// The built-in titles by item id.
    var titles: [String: String] { Dictionary(items.map { ($0.id, $0.title) }, uniquingKeysWith: { first, _ in first }) }

    /// Parsed once, at first use: it cannot change while the program runs, and the agent
    /// checks the catalogue at each status call (the JSON decoding was 4 % of a catching-up
    /// agent whose status was asked for every few milliseconds).
    private static let builtInParsed = Result { try parse(Data(PackageResources.catalogue_json), source: "the built-in catalogue") }

    /// `HOME/catalogue.json` when present, else the built-in one.
    public static func load(home: HouseholdHome) throws -> Catalogue {
        let url = home.directory.appendingPathComponent("catalogue.json")
        guard let data = try? Data(contentsOf: url) else {
            if FileManager.default.fileExists(atPath: url.path) {
                throw HouseholdError.refuse(.catalogueUnreadable, ["path": .string(url.path)])
            }
            return try builtIn()
        }
        return try parse(data, source: "the catalogue file \(url.path)")
    }

    /// Decodes and checks a catalogue: version 1, known categories, every item with a
    /// unique id (`[a-z0-9_]`, 1–40 characters, not `own-…`), a known kind, a title that
    /// is a valid name, and 1–20 peanuts.
    public static func parse(_ data: Data, source: String) throws -> Catalogue {
        func bad(_ problem: String) -> HouseholdError { .refuse(.catalogueInvalid, ["source": .string(source), "problem": .string(problem)]) }
        let file: File
        do {
            file = try JSONDecoder().decode(File.self, from: data)
        } catch let error as DecodingError {
            throw bad(Self.describe(error))
        } catch {
            throw bad("not JSON")
        }
        guard file.version == 1 else { throw bad("version \(file.version) (this pulse-peer reads version 1)") }
        var items: [CatalogueItem] = []
        var seen = Set<String>()
        for category in file.categories {
            guard categories[category.id] != nil else {
                throw bad("unknown category \(category.id.debugDescription) (use security, respect or fun)")
            }
            for item in category.items {
                let where_ = "item \(item.id.debugDescription)"
                guard (1...40).contains(item.id.count), !item.id.hasPrefix("own"),
                    item.id.unicodeScalars.allSatisfy({ ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "_" })
                else {
                    throw bad("\(where_): an id is 1–40 of a–z, 0–9 and _ (and does not start with \"own\")")
                }
                guard seen.insert(item.id).inserted else { throw bad("\(where_) appears twice") }
                guard let kind = CatalogueItem.Kind(rawValue: item.kind) else {
                    throw bad("\(where_): unknown kind \(item.kind.debugDescription) (use rule, chore or reward)")
                }
                guard peanutRange.contains(item.peanuts) else { throw bad("\(where_): peanuts must be 1–20, not \(item.peanuts)") }
                let title: String
                do { title = try Validation.name(item.title, what: "title", max: 200) } catch { throw bad("\(where_): \(error)") }
                items.append(
                    CatalogueItem(
                        id: item.id, kind: kind, category: category.id, title: title, peanuts: item.peanuts,
                        selected: false, own: false))
            }
        }
        guard !items.isEmpty else { throw bad("it has no items") }
        return Catalogue(items: items)
    }

    private static func describe(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context) -> String {
            let keys = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
            return keys.isEmpty ? "" : " at \(keys.hasPrefix(".") ? String(keys.dropFirst()) : keys)"
        }
        switch error {
        case let .keyNotFound(key, context): return "missing \(key.stringValue.debugDescription)\(path(context))"
        case let .typeMismatch(_, context), let .valueNotFound(_, context): return "wrong type\(path(context))"
        case let .dataCorrupted(context): return context.codingPath.isEmpty ? "not JSON" : "bad value\(path(context))"
        @unknown default: return "\(error)"
        }
    }
}
