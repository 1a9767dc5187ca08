// swift-tools-version:6.0
// The yardsticks of bench/: a Hummingbird 2 server answering a fixed hello-world JSON and doing
// no other work, and on the same server the durable write a team would write with Hummingbird
// and GRDB (an action appended to a SQLite log in one transaction). Its own package, so
// FlowStack's build never depends on Hummingbird.
import PackageDescription

let package = Package(
    name: "HelloPeer",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
    ],
    targets: [
        .executableTarget(
            name: "HelloPeer",
            dependencies: [
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
    ]
)
