import CQREncode

#if canImport(Glibc)
import Glibc
#endif

/// A QR code drawn by the agent (issue 42: the phone's pairing link, shown on the computer's
/// page), from libqrencode's module matrix, as SVG — no script and no image library in the
/// page. Error correction M (15 %: a screen photographed at an angle); bytes mode, printable
/// ASCII only (a URL as it is); the version is the smallest that holds the text.
public struct QRCode: Sendable, Equatable {
    /// Modules per side (21 for version 1, 4 more per version).
    public let size: Int
    /// Row by row, true where the module is dark.
    public let modules: [Bool]

    /// The longest text taken (a pairing link is about 100 bytes; version 40-M holds 2331).
    public static let maxBytes = 1024

    public enum Failure: Error, Equatable {
        case empty
        case tooLong(Int)
        /// Only printable ASCII (a URL, percent-encoded): without an ECI header a scanner
        /// guesses other bytes' encoding (zbar reads UTF-8 as Shift-JIS), so none are written.
        case notASCII
        case encoder(Int32)
    }

    public init(_ text: String) throws {
        let bytes = text.utf8.count
        guard bytes > 0 else { throw Failure.empty }
        guard bytes <= Self.maxBytes else { throw Failure.tooLong(bytes) }
        guard text.utf8.allSatisfy({ (0x20..<0x7F).contains($0) }) else { throw Failure.notASCII }
        // The C object is ours from here to the end of this scope.
        guard let symbol = QRcode_encodeString8bit(text, 0, QR_ECLEVEL_M) else { throw Failure.encoder(errno) }
        defer { QRcode_free(symbol) }
        let width = Int(symbol.pointee.width)
        let data = UnsafeBufferPointer(start: symbol.pointee.data, count: width * width)
        size = width
        modules = data.map { $0 & 1 == 1 } // bit 0: dark (the other bits say what the module is)
    }

    public func isDark(row: Int, column: Int) -> Bool { modules[row * size + column] }

    /// The symbol as an SVG image: one path of dark runs, a white quiet zone of `quietZone`
    /// modules (the standard's 4), `scale` pixels per module, crisp edges. (Its accessible
    /// name is the page's: the `<img>` showing it has the alt text.)
    public func svg(scale: Int = 6, quietZone: Int = 4) -> String {
        let side = size + 2 * quietZone
        var path = ""
        for row in 0..<size {
            var column = 0
            while column < size {
                guard isDark(row: row, column: column) else {
                    column += 1
                    continue
                }
                let start = column
                while column < size && isDark(row: row, column: column) { column += 1 }
                path += "M\(start + quietZone) \(row + quietZone)h\(column - start)v1h-\(column - start)z"
            }
        }
        return """
            <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 \(side) \(side)" width="\(side * scale)" height="\(side * scale)" \
            shape-rendering="crispEdges"><rect width="\(side)" height="\(side)" fill="#fff"/><path fill="#000" d="\(path)"/></svg>
            """
    }
}
