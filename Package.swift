// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "pulse-peer",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "PeerSync", targets: ["PeerSync"]),
        .executable(name: "pulse-peer", targets: ["pulse-peer"]),
    ],
    // Exact versions: a release's package is built from the same dependency set every time
    // (Package.resolved is not committed here: the mirror's commit ids are not upstream's). The
    // whole set, theirs included, is docs/dependencies.tsv, which scripts/package-deb.sh checks
    // the build against and ships in the package (docs/RELEASING.md: updating one).
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", exact: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", exact: "1.16.2"),
        .package(url: "https://github.com/apple/swift-crypto", exact: "4.5.2"),
        .package(url: "https://github.com/apple/swift-nio", exact: "2.101.3"),
        .package(url: "https://github.com/apple/swift-nio-ssl", exact: "2.37.6"),
        .package(url: "https://github.com/apple/swift-certificates", exact: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1", exact: "1.7.4"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", exact: "2.13.0"),
    ],
    targets: [
        // Thin system-library shims: module map + header, nothing else.
        .systemLibrary(
            name: "CSQLite",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        .systemLibrary(
            name: "CDBus",
            pkgConfig: "dbus-1",
            providers: [.apt(["libdbus-1-dev"])]
        ),
        .systemLibrary(
            name: "CAvahi",
            pkgConfig: "avahi-client",
            providers: [.apt(["libavahi-client-dev"])]
        ),
        .systemLibrary(
            name: "CQREncode",
            pkgConfig: "libqrencode",
            providers: [.apt(["libqrencode-dev"])]
        ),
        // One target per layer; each depends only downward (docs/ARCHITECTURE.md).
        // Model: values and pure rules, nothing of ours below it.
        .target(name: "PulseModel"),
        // System: starting another program (one way: a clean signal mask, always reaped).
        .target(name: "PulseSystem"),
        // Store: SQLite, migrations, the replicated store (knows Model, never the network).
        .target(name: "PulseStore", dependencies: ["PulseModel", "CSQLite"]),
        // Identity: the machine's key pair and atomic file writes.
        .target(
            name: "PulseIdentity",
            dependencies: [
                "PulseModel",
                .product(name: "Crypto", package: "swift-crypto"),
            ]),
        // Household: the family's rules on top of the store (one implementation for the
        // CLI and the local API).
        // CryptoExtras: scrypt for the kids' PIN (docs/ARCHITECTURE.md, dependencies).
        .target(
            name: "PulseHousehold",
            dependencies: [
                "PulseModel", "PulseStore", "PulseIdentity",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ],
            resources: [
                .embedInCode("Resources/catalogue.json"), .embedInCode("Resources/messages-en.json"),
                .embedInCode("Resources/messages-pl.json"), .embedInCode("Resources/messages-de.json"),
                .embedInCode("Resources/messages-nl.json"),
            ]),
        // Protocol: messages, codec, framing, the session state machine (a leaf over Model).
        .target(
            name: "PulseProtocol",
            dependencies: [
                "PulseModel",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]),
        // Transport: NIO listener and dialer, TLS 1.3 from the machine keys.
        .target(
            name: "PulseTransport",
            dependencies: [
                "PulseModel", "PulseProtocol", "PulseIdentity",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]),
        // CA: the household's certificate authority for the phones' HTTPS (name-constrained
        // X.509 from swift-certificates; issue 42, docs/decisions/0014).
        .target(
            name: "PulseCA",
            dependencies: [
                "PulseModel", "PulseIdentity",
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]),
        // CalDAV's formats (iCalendar, WebDAV's XML), read bounded: a leaf (issue 59, decision 0024).
        .target(name: "PulseCalendar"),
        // CalDAV (issue 59): requests read, filters, and the service, on the agent's public face
        // (LocalAPI) as the page is; the phones' listener serves it.
        .target(
            name: "PulseCalDAV",
            dependencies: [
                "PulseCalendar", "PeerSync",
                .product(name: "Crypto", package: "swift-crypto"),
            ]),
        // QR: QR codes as SVG from libqrencode (the only target that sees CQREncode; issue 42).
        .target(name: "PulseQR", dependencies: ["CQREncode"]),
        // Discovery: mDNS through Avahi (the only target that sees CAvahi).
        .target(
            name: "PulseDiscovery",
            dependencies: [
                "PulseModel", "CAvahi",
                .product(name: "Crypto", package: "swift-crypto"),
            ]),
        // Notifications: which events notify, batching (pure), and delivery through the
        // desktop notification service (the only target that sees CDBus) or a hook command.
        .target(name: "PulseNotify", dependencies: ["PulseHousehold", "PulseSystem", "CDBus"]),
        // The agent and the public face: sees every layer; the CLI imports only this.
        .target(
            name: "PeerSync",
            dependencies: [
                "PulseModel", "PulseStore", "PulseIdentity", "PulseHousehold",
                "PulseProtocol", "PulseTransport", "PulseDiscovery", "PulseNotify", "PulseSystem",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // The web page: HTTP from NIOHTTP1 over the agent's public face (LocalAPI), like
        // the CLI; its HTML, CSS and JS embedded in the binary. Also the phones' HTTPS
        // listener on the home network (the household CA, QR codes).
        .target(
            name: "PulseWeb",
            dependencies: [
                "PeerSync", "PulseCA", "PulseQR", "PulseCalDAV",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                // The phones' listener: HTTPS with the household CA's certificates (issue 42).
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "X509", package: "swift-certificates"),
            ],
            // Tells `node --test` (Tests/page) that the modules are ES modules; not served.
            exclude: ["Resources/package.json"],
            // The page's files (docs/ARCHITECTURE.md, "The page"), each embedded as its own
            // symbol; the PageFiles plugin writes the one table of them (`PageFiles.all`), so a
            // file added to the folder needs no list (issue 55).
            resources: [.embedInCode("Resources")],
            plugins: ["PageFiles"]
        ),
        // The PageFiles build plugin and its tool: PulseWeb's table of its embedded files.
        .plugin(name: "PageFiles", capability: .buildTool(), dependencies: ["page-files-table"]),
        .executableTarget(name: "page-files-table"),
        .executableTarget(
            name: "pulse-peer",
            dependencies: [
                "PeerSync", "PulseWeb",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                // `run` bootstraps the logger and runs the agent in a service group.
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // Benchmarks (docs/PERFORMANCE.md): `scripts/bench.sh`.
        .executableTarget(
            name: "pulse-bench",
            dependencies: [
                "PeerSync",
                "PulseModel",
                "PulseStore",
                "CSQLite",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "PeerSyncTests",
            dependencies: [
                "PeerSync", "PulseModel", "PulseStore", "PulseIdentity", "PulseHousehold",
                "PulseProtocol", "PulseTransport", "PulseDiscovery", "PulseNotify", "PulseWeb", "PulseCA", "PulseQR",
                "PulseCalendar", "PulseCalDAV",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOTestUtils", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "TwoPeerTests",
            dependencies: [
                "PeerSync", "PulseStore", "PulseProtocol", "PulseDiscovery", "PulseNotify", "pulse-peer",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
