// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "pulse-peer",
    platforms: [.macOS(.v14)],
    products: [
        .library(name: "PeerSync", targets: ["PeerSync"]),
        .executable(name: "pulse-peer", targets: ["pulse-peer"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "4.0.0"),
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
            ]
        ),
        .executableTarget(
            name: "pulse-peer",
            dependencies: [
                "PeerSync",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .testTarget(
            name: "PeerSyncTests",
            dependencies: ["PeerSync"]
        ),
        .testTarget(
            name: "TwoPeerTests",
            dependencies: ["PeerSync", "pulse-peer"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
