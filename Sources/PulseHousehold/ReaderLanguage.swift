import FoundationEssentials
import PulseModel
import PulseStore

/// Which language this computer's person reads, as chosen in the household: the member's
/// choice (replicated: it follows them to every computer), and this computer's own
/// (local `meta`, never replicated), which wins. Neither set: automatic (the browser's
/// `Accept-Language` for the page, the environment for the agent's notifications).
public struct LanguageChoice: Sendable, Codable, Equatable {
    /// This computer's choice.
    public var machine: String?
    /// The choice of this computer's member.
    public var member: String?
    /// This computer's member (nil: it belongs to no member yet).
    public var memberName: String?
    /// The languages this household can read.
    public var available: [String]

    public init(machine: String? = nil, member: String? = nil, memberName: String? = nil, available: [String]) {
        self.machine = machine
        self.member = member
        self.memberName = memberName
        self.available = available
    }

    /// The language chosen here, if any: this computer's, else its member's.
    public var chosen: String? { machine ?? member }
}

extension Household {
    static let machineLanguageKey = "language"

    public func languageChoice() throws -> LanguageChoice {
        let available = MessageCatalogue.languages(home: home)
        let me = try currentMemberID().flatMap { id in try members().first { $0.id == id } }
        let machine = try store.meta(Self.machineLanguageKey)?.textValue
        return LanguageChoice(
            machine: machine.flatMap { available.contains($0) ? $0 : nil },
            member: me?.language.flatMap { available.contains($0) ? $0 : nil },
            memberName: me?.name, available: available)
    }

    /// Chooses the language of this computer (`scope` "machine") or of this computer's
    /// member ("member", replicated); nil or "" goes back to automatic.
    public func setLanguage(scope: String, language: String?) throws -> LanguageChoice {
        let available = MessageCatalogue.languages(home: home)
        let language = language.flatMap { $0.isEmpty ? nil : $0.lowercased() }
        if let language, !available.contains(language) {
            throw HouseholdError.refuse(.unknownLanguage, ["language": .string(language), "available": JSONValue(available)])
        }
        switch scope {
        case "machine":
            if let language { try store.setMeta(Self.machineLanguageKey, .text(language)) } else { try store.removeMeta(Self.machineLanguageKey) }
        case "member":
            guard let member = try currentMemberID() else {
                throw HouseholdError.refuse(.noMemberForMachine, ["asked": "me"])
            }
            try store.write(member: memberID) { try $0.put(.member, member, ["language": language.map { .text($0) } ?? .null]) }
        default:
            throw HouseholdError.refuse(.wrongType, ["key": "scope", "type": "scope"])
        }
        return try languageChoice()
    }
}
