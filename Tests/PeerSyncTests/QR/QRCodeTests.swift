import Foundation
import Testing
@testable import PulseQR

/// QR codes as the agent draws them (issue 42): the symbol's structure, and the SVG rendered
/// (`rsvg-convert`) and decoded back (`zbarimg`, Debian's zbar-tools) to the very text.
@Suite struct QRCodeTests {
    static let tools = ["/usr/bin/rsvg-convert", "/usr/bin/zbarimg"]
    static var toolsProblem: String? {
        let missing = tools.filter { !FileManager.default.isExecutableFile(atPath: $0) }
        return missing.isEmpty ? nil : "missing \(missing.joined(separator: ", ")): `bash scripts/setup.sh --tests` installs them"
    }
    static var canDecode: Bool { toolsProblem == nil || ProcessInfo.processInfo.environment["CI"] != nil }

    @Test func theSymbolHasItsFinderPatternsAndTheSmallestVersionThatHoldsTheText() throws {
        let short = try QRCode("https://anna.local:47655/pair#t=abc")
        #expect(short.size == 25 || short.size == 29) // version 2 or 3 at level M
        let long = try QRCode(String(repeating: "x", count: 500))
        #expect(long.size > short.size && (long.size - 17) % 4 == 0)
        for code in [short, long] {
            // The three finder patterns: a dark 7×7 ring with a dark 3×3 centre, at three corners.
            for (top, left) in [(0, 0), (0, code.size - 7), (code.size - 7, 0)] {
                for i in 0..<7 {
                    #expect(code.isDark(row: top, column: left + i) && code.isDark(row: top + 6, column: left + i))
                    #expect(code.isDark(row: top + i, column: left) && code.isDark(row: top + i, column: left + 6))
                }
                #expect(!code.isDark(row: top + 1, column: left + 1) && code.isDark(row: top + 3, column: left + 3))
            }
        }
    }

    @Test func emptyOversizedOrNonASCIITextIsRefused() {
        #expect(throws: QRCode.Failure.empty) { try QRCode("") }
        #expect(throws: QRCode.Failure.tooLong(2000)) { try QRCode(String(repeating: "a", count: 2000)) }
        #expect(throws: QRCode.Failure.notASCII) { try QRCode("https://x.local/?name=Zoë") }
        #expect(throws: QRCode.Failure.notASCII) { try QRCode("line\nbreak") }
    }

    @Test func theSVGHasAQuietZoneAndCrispModules() throws {
        let code = try QRCode("https://anna.local/")
        let svg = code.svg(scale: 5)
        let side = code.size + 8
        #expect(svg.hasPrefix("<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 \(side) \(side)\" width=\"\(side * 5)\""))
        #expect(svg.contains("shape-rendering=\"crispEdges\"") && svg.contains("M4 4h7v1h-7z")) // the top-left finder's first row
        #expect(!svg.contains("<script") && !svg.contains("style="))
    }

    @Test(.enabled(if: canDecode, "needs rsvg-convert and zbarimg (scripts/setup.sh --tests)"))
    func theSVGDecodesBackToTheText() throws {
        if let problem = Self.toolsProblem { Issue.record("\(problem)"); return }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("qr-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        for text in [
            "https://study-desktop.local:47655/pair#t=Zm9vYmFyLWJhei0xMjM0NTY3ODkw", "https://192.168.1.20:47655/ca.mobileconfig",
            "https://x.local/?name=Zo%C3%AB&a=<ok>",
        ] {
            let svg = directory.appendingPathComponent("code.svg"), png = directory.appendingPathComponent("code.png")
            try Data(try QRCode(text).svg(scale: 4).utf8).write(to: svg)
            try run(["/usr/bin/rsvg-convert", "-o", png.path, svg.path])
            let decoded = try run(["/usr/bin/zbarimg", "--raw", "-q", png.path])
            #expect(decoded.trimmingCharacters(in: .newlines) == text)
        }
    }

    @discardableResult
    func run(_ command: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: command[0])
        process.arguments = Array(command.dropFirst())
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(command)")
        return String(decoding: data, as: UTF8.self)
    }
}
