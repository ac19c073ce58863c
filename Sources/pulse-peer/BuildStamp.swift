/// What this binary is: its release and the commit it was built from (`pulse-peer --version`).
/// `scripts/package-deb.sh` writes the commit into its own copy of this file before it builds
/// a package; a developer's build says it recorded none. The release is the package's version.
enum BuildStamp {
    static let version = "0.10.0"
    static let commit: String? = nil

    static var description: String {
        "pulse-peer \(version) (" + (commit.map { "commit \($0)" } ?? "a development build: no commit recorded") + ")"
    }
}
