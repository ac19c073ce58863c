import ArgumentParser
import FoundationEssentials
import PeerSync

/// `pulse-peer language`: which language this computer's person reads (docs/LANGUAGES.md).
struct LanguageCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "language",
        abstract: "The language of the page and the notifications: en, pl, de, nl (or auto).",
        discussion: """
            This computer's choice wins over its member's, which wins over the browser's language (the
            page) or the agent's environment (notifications). The command line itself follows --lang,
            then $PULSE_LANG, $LANGUAGE, $LC_ALL, $LC_MESSAGES, $LANG. Examples:
              pulse-peer language                  show the choices
              pulse-peer language pl               this computer reads Polish
              pulse-peer language nl --member      this computer's member reads Dutch, on every computer
              pulse-peer language auto             this computer follows its member, else the browser
            """)
    @OptionGroup var options: HomeOptions
    @Argument(help: "A language (en, pl, de, nl, or a home's own), or auto.") var language: String?
    @Flag(help: "Choose for this computer's member (replicated to every computer), not this computer.") var member = false
    @Flag(help: "Print JSON.") var json = false

    func run() throws {
        let choice: LanguageChoice
        if let language {
            let value = ["auto", "automatic", "-"].contains(language.lowercased()) ? nil : language
            choice = try options.write { try $0.setLanguage(scope: member ? "member" : "machine", language: value) }
        } else {
            choice = try options.read { try $0.languageChoice() }
        }
        if json { return try Output.json(choice) }
        func name(_ language: String?) -> String {
            guard let language else { return say("cli.language.automatic") }
            return Languages.ownNames[language].map { "\($0) (\(language))" } ?? language
        }
        print(say("cli.language.machine", ["language": .string(name(choice.machine))]))
        if let memberName = choice.memberName {
            print(say("cli.language.member", ["member": .string(memberName), "language": .string(name(choice.member))]))
        }
        print(say("cli.language.available", ["languages": JSONValue(choice.available.map { name($0) })]))
    }
}
