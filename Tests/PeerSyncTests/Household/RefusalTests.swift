import FoundationEssentials
import Testing
@testable import PulseHousehold
import PeerSync

/// Refusals are codes and parameters; sentences come from the message catalogue, formatted
/// by one grammar that the page's `messages.js` shares (Tests/page/format-cases.json).
struct RefusalTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    struct Fixtures: Decodable {
        struct Case: Decodable { let template: String; let params: [String: JSONValue]; let expected: String }
        let messages: [String: String]
        let cases: [Case]
    }

    @Test func theAgentFormatsEverySharedCaseAsThePageDoes() throws {
        let data = try Data(contentsOf: Self.repository.appendingPathComponent("Tests/page/format-cases.json"))
        let fixtures = try JSONDecoder().decode(Fixtures.self, from: data)
        let catalogue = MessageCatalogue(language: "en", messages: fixtures.messages)
        for item in fixtures.cases {
            #expect(catalogue.format(item.template, item.params) == item.expected, "\(item.template)")
        }
    }

    @Test(arguments: ["en", "de", "nl", "pl"]) func thePluralRuleIsCLDRsForEveryWholeNumberTo1000(language: String) throws {
        struct Table: Decodable { let categories: [String: String] }
        let data = try Data(contentsOf: Self.repository.appendingPathComponent("Tests/page/plural-cldr.json"))
        let expected = try #require(try JSONDecoder().decode(Table.self, from: data).categories[language]).split(separator: " ")
        #expect(expected.count == 1001)
        for (n, category) in expected.enumerated() {
            #expect(MessageCatalogue.pluralCategory(Int64(n), language: language) == category, "\(language) \(n)")
        }
    }

    @Test func polishCountsPeanutsAsAPoleDoes() {
        let polish = MessageCatalogue(
            language: "pl", messages: ["peanuts": "{n, plural, one {# orzeszek} few {# orzeszki} many {# orzeszków} other {# orzeszka}}"])
        let said = [1, 2, 5, 22, 25, 112].map { polish.text("peanuts", ["n": JSONValue($0)]) }
        #expect(said == ["1 orzeszek", "2 orzeszki", "5 orzeszków", "22 orzeszki", "25 orzeszków", "112 orzeszków"])
    }

    @Test func everyCodeHasAnEnglishSentenceAndAnEntryInTheAPIDocument() throws {
        let api = try String(contentsOf: Self.repository.appendingPathComponent("docs/API.md"), encoding: .utf8)
        for code in Refusal.Code.allCases {
            #expect(MessageCatalogue.english.has("refusal.\(code.rawValue)"), "no English message for \(code.rawValue)")
            #expect(api.contains("| `\(code.rawValue)` |"), "docs/API.md does not list \(code.rawValue)")
        }
        // And no message for a code that does not exist (a typo would never be shown).
        let codes = Set(Refusal.Code.allCases.map(\.rawValue))
        for key in MessageCatalogue.english.keys where key.hasPrefix("refusal.") {
            let code = key.dropFirst("refusal.".count).replacing(".cli", with: "")
            #expect(codes.contains(String(code)), "\(key) names no code")
        }
    }

    @Test func theCommandLineSaysMoreWhereItHasItsOwnWay() {
        let focus = Refusal(.focusRule, ["limit": 3, "active": 3, "titles": ["Dishes", "Laundry", "Vacuum"]])
        #expect(focus.message() == "focus rule: at most 3 active tasks, and there are 3 active (Dishes, Laundry, Vacuum). Finish or delete one first.")
        #expect(
            focus.cliMessage() == "focus rule: at most 3 active tasks, and there are 3 (Dishes, Laundry, Vacuum). Finish or delete one first, or pass --force.")
        #expect(HouseholdError.refused(focus).description == focus.cliMessage())
        // A code without a command-line wording says the same everywhere.
        let locked = Refusal(.pinLocked, ["retryAfterSeconds": 20])
        #expect(locked.message() == "too many wrong attempts: try again in 20 s" && locked.cliMessage() == locked.message())
    }

    @Test func anErrorThatIsNoRuleIsFailedWithItsOwnWords() {
        struct DiskFull: Error, CustomStringConvertible { var description: String { "database or disk is full" } }
        let refusal = Refusal(DiskFull())
        #expect(refusal.code == .failed && refusal.params["detail"] == "database or disk is full")
        #expect(Refusal(HouseholdError.io("cannot write")).code == .storage)
        #expect(Refusal(HouseholdError.notInitialized("/x")).code == .noHousehold)
    }

    @Test func anAnswerOfAnEarlierReleaseWithASentenceIsStillUnderstood() throws {
        let old = try JSONDecoder().decode(ControlResponse.self, from: Data(#"{"ok":false,"error":"no item \"x\" in the shopping list"}"#.utf8))
        #expect(old.error?.code == "failed" && old.error?.message == "no item \"x\" in the shopping list")
        let new = try JSONDecoder().decode(ControlResponse.self, from: JSONEncoder().encode(ControlResponse.refused(.pinRequired)))
        #expect(new.error?.code == "pin_required" && !new.ok)
    }

    @Test func aBodyFromTheAPIIsRenderedByItsCodeAndAnUnknownCodeByItsMessage() {
        let body = ErrorBody(code: "focus_rule", params: ["limit": 3, "active": 1, "titles": ["A"]], message: "whatever")
        #expect(Refusal.cliMessage(of: body).hasSuffix("or pass --force."))
        #expect(Refusal.cliMessage(of: ErrorBody(code: "from_a_newer_agent", message: "a newer sentence")) == "a newer sentence")
    }
}
