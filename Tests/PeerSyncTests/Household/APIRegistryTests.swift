import Foundation
import Testing
@testable import PulseModel
@testable import PulseStore
@testable import PulseHousehold

/// The local API's one registry (issue 55): every method declared once, each audience allowed
/// exactly what its declaration says, docs/API.md's table the registry's, and a method that
/// says it only reads changing nothing.
@Suite struct APIRegistryTests {
    static let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
    static let outside: [APIAudience] = [.control, .page, .phone]

    /// Every call by every audience: allowed exactly where the registry says (anything but
    /// `unknown_method`), refused as an unknown method elsewhere, changing nothing.
    @Test func everyAudienceMayCallExactlyTheMethodsItsDeclarationsAllow() throws {
        let dir = try TemporaryDirectory()
        let h = try Household.create(HouseholdHome(directory: dir.url.appendingPathComponent("a")), name: nil, members: [])
        for method in HouseholdAPI.registry.methods {
            for audience in APIAudience.allCases {
                let caller = audience == .phone ? APICaller.phone(member: nil) : APICaller(audience: audience, phoneMember: nil)
                let before = try Self.changes(h)
                var refusal: Refusal?
                do { _ = try HouseholdAPI.call(method.name, [:], on: h, as: caller) } catch { refusal = Refusal(error) }
                let allowed = audience == .agent || method.audiences.contains(audience)
                #expect((refusal?.code == .unknownMethod) == !allowed, "\(method.name) by \(audience)")
                if !allowed {
                    #expect(try Self.changes(h) == before, "a refused \(method.name) by \(audience) changed nothing")
                    #expect(refusal?.params["methods"] == JSONValue(HouseholdAPI.registry.names(for: audience)))
                }
            }
        }
        // The lists by audience are the declarations', and the agent's plumbing is on none.
        for audience in Self.outside {
            #expect(HouseholdAPI.registry.names(for: audience) == HouseholdAPI.registry.methods.filter { $0.audiences.contains(audience) }.map(\.name).sorted())
        }
        let plumbing = HouseholdAPI.registry.methods.filter(\.audiences.isEmpty).map(\.name).sorted()
        #expect(
            plumbing == [
                "ca.grant", "ca.publish", "ca.request", "phone.add", "phone.get", "phone.renew", "phone.roaming", "phone.service.set",
            ])
        #expect(HouseholdAPI.methods == HouseholdAPI.registry.names(for: .control))
        #expect(HouseholdAPI.registry.names(for: .agent).count == HouseholdAPI.registry.methods.count)
    }

    /// How many rows this household's database connection has changed since it opened.
    static func changes(_ h: Household) throws -> Int64 { try h.store.connection.scalarInt("SELECT total_changes()") ?? -1 }

    /// The recorded script's calls, and every method bare, of methods declared as only reading
    /// change not one row of the database (so the agent is right not to look for writes to push after them).
    @Test func aMethodDeclaredAsOnlyReadingChangesNothing() throws {
        let dir = try TemporaryDirectory()
        let h = try Household.create(HouseholdHome(directory: dir.url.appendingPathComponent("a")), name: nil, members: [])
        var last: [String: JSONValue] = [:]
        var readsChecked = Set<String>()
        // The recorded script, then every method of the registry bare (one added since is called too).
        let bare = HouseholdAPI.registry.methods.map { APIGoldenTests.Call(method: $0.name, params: [:]) }
        for call in APIGoldenTests.script + bare {
            guard let method = HouseholdAPI.registry[call.method] else { continue }
            let params = call.params.mapValues { APIGoldenTests.resolve($0, in: last) }
            let before = try Self.changes(h)
            let vector = try h.store.versionVector()
            let result = try? HouseholdAPI.call(call.method, params, on: h, as: .agent)
            if let result { last[call.method] = result }
            if !method.writes {
                readsChecked.insert(call.method)
                #expect(try Self.changes(h) == before, "\(call.method) \(params) wrote a row")
                #expect(try h.store.versionVector() == vector, "\(call.method) made a change")
            }
        }
        let reads = Set(HouseholdAPI.registry.methods.filter { !$0.writes }.map(\.name))
        #expect(readsChecked == reads, "every reading method was called: \(reads.subtracting(readsChecked))")
    }

    /// `grep` finds each method's name in one declaration: `.read("name"` or `.write("name"`
    /// occurs once in the sources, and every declaration is in the registry.
    @Test func eachMethodIsDeclaredOnceAndEveryDeclarationIsRegistered() throws {
        var declared: [String: [String]] = [:]
        let pattern = try Regex(#"\.(read|write)\("([a-zA-Z.]+)""#)
        let root = Self.sources.appendingPathComponent("Sources")
        for case let file as String in FileManager.default.enumerator(atPath: root.path) ?? NSEnumerator() where file.hasSuffix(".swift") {
            let text = try String(contentsOf: root.appendingPathComponent(file), encoding: .utf8)
            for match in text.matches(of: pattern) {
                guard let name = match.output[2].substring.map(String.init) else { continue }
                declared[name, default: []].append(file)
            }
        }
        for (name, files) in declared.sorted(by: { $0.key < $1.key }) {
            #expect(files.count == 1, "\(name) is declared in \(files)")
        }
        let registered = Set(HouseholdAPI.registry.methods.map(\.name))
        #expect(Set(declared.keys).subtracting(["next.note.add", "next.shop.brand"]) == registered.subtracting(["next.note.add", "next.shop.brand"]))
    }

    /// docs/API.md's table of methods is the registry's: each public method in it once, with
    /// who may call it; the agent's plumbing in its own table.
    @Test func theDocumentationsTablesAreTheRegistrys() throws {
        let docs = try String(contentsOf: Self.sources.appendingPathComponent("docs/API.md"), encoding: .utf8)
        #expect(Self.documentationProblems(docs, HouseholdAPI.registry) == [])
    }

    /// A method added to a registry answers its audiences, is on their lists, and the
    /// documentation's check names it until docs/API.md has a row for it.
    @Test func aNewMethodIsDispatchedListedAndAskedForInTheDocumentation() throws {
        let echo = APIMethod.read("test.echo", for: APIMethod.everyone) { a, _ in try a.string("text") }
        let registry = APIRegistry(HouseholdAPI.registry.methods + [echo])
        let dir = try TemporaryDirectory()
        let h = try Household.create(HouseholdHome(directory: dir.url.appendingPathComponent("a")), name: nil, members: [])
        for audience in Self.outside {
            let caller = audience == .phone ? APICaller.phone(member: nil) : APICaller(audience: audience, phoneMember: nil)
            #expect(try registry.call("test.echo", ["text": "hi"], on: h, as: caller) == "hi")
            #expect(registry.names(for: audience).contains("test.echo"))
        }
        let docs = try String(contentsOf: Self.sources.appendingPathComponent("docs/API.md"), encoding: .utf8)
        #expect(Self.documentationProblems(docs, registry) == ["test.echo: not in docs/API.md's tables"])
        #expect(!HouseholdAPI.registry.names(for: .control).contains("test.echo"))
    }

    /// What docs/API.md's two tables (`## Methods`, whose `who` column says `all` for every
    /// audience and `computer` for the control socket and the computer's page only; and
    /// `### The agent's own methods`) say otherwise than `registry`.
    static func documentationProblems(_ docs: String, _ registry: APIRegistry) -> [String] {
        var documented: [String: String] = [:]
        var problems: [String] = []
        var section = ""
        for line in docs.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("#") { section = String(line) }
            guard line.hasPrefix("| `"), section == "## Methods" || section == "### The agent's own methods" else { continue }
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            let who = section == "## Methods" ? cells[1] : "agent"
            for name in cells[0].split(separator: "/").map({ $0.trimmingCharacters(in: CharacterSet(charactersIn: " `")) }) {
                if documented.updateValue(who, forKey: name) != nil { problems.append("\(name): documented twice") }
            }
        }
        for method in registry.methods where !method.name.hasPrefix("next.") {
            let who: String
            switch method.audiences {
            case APIMethod.everyone: who = "all"
            case APIMethod.computer: who = "computer"
            case APIMethod.plumbing: who = "agent"
            default: who = method.audiences.map(\.rawValue).sorted().joined(separator: ", ")
            }
            guard let said = documented.removeValue(forKey: method.name) else {
                problems.append("\(method.name): not in docs/API.md's tables")
                continue
            }
            if said != who { problems.append("\(method.name): docs say \(said), the registry \(who)") }
        }
        problems += documented.keys.sorted().map { "\($0): documented, not a method" }
        return problems
    }
}
