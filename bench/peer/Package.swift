// swift-tools-version:6.0
// The yardstick of bench/: a Hummingbird 2 server answering a fixed hello-world JSON and doing
// no other work. Its own package, so FlowStack's build never depends on Hummingbird.
import PackageDescription

let package = Package(
    name: "HelloPeer",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
    ],
    targets: [
        .executableTarget(
            name: "HelloPeer",
            dependencies: [.product(name: "Hummingbird", package: "hummingbird")]
        ),
    ]
)
