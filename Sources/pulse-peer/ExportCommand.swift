import ArgumentParser
import PeerSync

struct Export: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the whole household canonically (sorted keys and rows).",
        discussion: "Two machines that have converged print byte-identical output."
    )

    @OptionGroup var options: HomeOptions

    @Flag(name: .long, help: "JSON output (the only export format; accepted for scripts that ask for it).")
    var json = false

    func run() throws {
        let household = try options.openHousehold()
        do {
            print(try household.canonicalExport(), terminator: "")
        } catch {
            throw CLIError(error)
        }
    }
}
