// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "pulse-peer",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "PeerSync", targets: ["PeerSync"]),
        .executable(name: "pulse-peer", targets: ["pulse-peer"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "4.0.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.80.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.30.0"),
        .package(url: "https://github.com/apple/swift-certificates", from: "1.10.0"),
        .package(url: "https://github.com/apple/swift-asn1", from: "1.3.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.6.0"),
    ],
    targets: [
        // Thin system-library shims: module map + header, nothing else.
        .systemLibrary(
            name: "CSQLite",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        .systemLibrary(
            name: "CAvahi",
            pkgConfig: "avahi-client",
            providers: [.apt(["libavahi-client-dev"])]
        ),
        .target(
            name: "PeerSync",
            dependencies: [
                "CSQLite",
                "CAvahi",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .executableTarget(
            name: "pulse-peer",
            dependencies: [
                "PeerSync",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // Benchmarks (docs/PERFORMANCE.md): `scripts/bench.sh`.
        .executableTarget(
            name: "pulse-bench",
            dependencies: [
                "PeerSync",
                "CSQLite",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "PeerSyncTests",
            dependencies: [
                "PeerSync",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOTestUtils", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "TwoPeerTests",
            dependencies: ["PeerSync", "pulse-peer"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
