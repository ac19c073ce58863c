import Crypto
import FoundationEssentials
import PeerSync

/// The page's files, embedded in the binary (nothing is loaded from elsewhere).
enum WebAssets {
    /// The page as served: `index.html` with a `modulepreload` link for every module `main.js`
    /// imports statically, directly or through another (``staticImports(of:)``), so that the
    /// browser asks for them all at once instead of level by level as it reads each one. The
    /// parts only the computer's page imports, on demand (`import("./parents.js")`), are not
    /// among them. Derived from the files: no list to keep (a hand-kept one had missed the
    /// two newest modules: issue 54).
    static let indexHTML: [UInt8] = {
        let script = "<script type=\"module\" src=\"/main.js\"></script>\n"
        let links = staticImports(of: "/main.js").sorted().map { "<link rel=\"modulepreload\" href=\"\($0)\">\n" }.joined()
        let text = String(decoding: PackageResources.index_html, as: UTF8.self)
        precondition(text.contains(script), "index.html loads /main.js as a module")
        return Array(text.replacing(script, with: script + links, maxReplacements: 1).utf8)
    }()

    /// The phone app's document (issue 54): ``indexHTML`` without the computer's own parts —
    /// every element whose class names `computer-only`, with all it holds (half the document's
    /// bytes: the profile, categories, repeating tasks, settings, computers, phones, apps,
    /// backup, parents' mode) — and its body marked `phone` from the start. The phone never
    /// shows them (and never loads their modules), and a fresh renderer reads, parses and styles
    /// what it is given: the phone's warm load is mostly that. Made when a phone first asks.
    static let phoneIndexHTML: [UInt8] = {
        let text = withoutComputerOnly(String(decoding: indexHTML, as: UTF8.self))
        precondition(text.contains("<body>\n"), "index.html has a plain <body>")
        return Array(text.replacing("<body>\n", with: "<body class=\"phone\">\n", maxReplacements: 1).utf8)
    }()

    /// `html` without the elements whose `class` names `computer-only` (each with its content,
    /// up to its own end tag: the page writes no such void element).
    static func withoutComputerOnly(_ html: String) -> String {
        var kept = ""
        var rest = html[...]
        while let start = rest.firstMatch(of: /<([a-z][a-z0-9]*)\b[^>]*\bclass="[^"]*\bcomputer-only\b[^"]*"[^>]*>/) {
            kept += rest[..<start.range.lowerBound]
            let tag = String(start.output.1)
            var depth = 1
            var end = start.range.upperBound
            while depth > 0 {
                guard let next = rest[end...].firstMatch(of: /<(\/?)([a-z][a-z0-9]*)\b[^>]*>/) else {
                    preconditionFailure("index.html: no end tag for a computer-only <\(tag)>")
                }
                end = next.range.upperBound
                guard next.output.2 == tag else { continue }
                depth += next.output.1.isEmpty ? 1 : -1
            }
            rest = rest[end...]
            // The line it stood on goes with it, when it was alone there.
            let indent = kept.reversed().prefix { $0 == " " }.count
            if kept.dropLast(indent).last == "\n", rest.first == "\n" {
                kept.removeLast(indent)
                rest = rest.dropFirst()
            }
        }
        return kept + rest
    }

    /// The modules `path` imports statically (`import … from "./x.js"`, `import "./x.js"`, one
    /// a line, as the page writes them), and the modules those import, by path; itself left out.
    static func staticImports(of path: String) -> Set<String> {
        var found: Set<String> = [], waiting = [path]
        while let next = waiting.popLast() {
            guard let source = modules[next] else { continue }
            for line in String(decoding: source, as: UTF8.self).split(separator: "\n") where line.hasPrefix("import ") {
                guard let specifier = line.matches(of: /"\.\/([A-Za-z0-9_-]+\.js)"/).last else { continue }
                let imported = "/" + specifier.output.1
                if found.insert(imported).inserted { waiting.append(imported) }
            }
        }
        found.remove(path)
        return found
    }
    /// The page's ES modules by path (no build step: served as written): every `.js` file of
    /// the `Resources` folder but the service worker, from the table the PageFiles plugin
    /// writes at build time (no list to keep: a module added to the folder is served, cached by
    /// the phone app and, when `main.js` imports it, preloaded).
    static let modules: [String: [UInt8]] = PageFiles.all.filter { $0.key.hasSuffix(".js") && $0.key != "/sw.js" }
    static var appCSS: [UInt8] { PackageResources.app_css }

    /// The service worker, its cache named by the version of the page's files (the first 12 hex
    /// digits of their SHA-256): an agent with other files serves another worker, which the
    /// browser installs, and the phone app takes the new files. The modules it caches are
    /// ``modules``' paths, written in place of its placeholder.
    static let serviceWorker: [UInt8] = {
        var hash = SHA256()
        for file in [PackageResources.index_html, PackageResources.app_css, PackageResources.icon_svg, PackageResources.manifest_webmanifest]
            + modules.keys.sorted().map({ modules[$0]! }) + [PackageResources.sw_js]
        {
            hash.update(data: file)
        }
        let version = hash.finalize().prefix(6).map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
        let text = String(decoding: PackageResources.sw_js, as: UTF8.self)
        let paths = "[" + modules.keys.sorted().map { "\"\($0)\"" }.joined(separator: ", ") + "]"
        return Array(
            text.replacing("\"house-pulse-version\"", with: "\"house-pulse-\(version)\"")
                .replacing("[\"/house-pulse-modules.js\"]", with: paths).utf8)
    }()
    static var iconSVG: [UInt8] { PackageResources.icon_svg }
}
