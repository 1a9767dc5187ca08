// swift-tools-version:6.0
// FlowStack for apps: the engine, JSON and the client, with no package dependency, so an app that
// adds it resolves nothing else. The server's package (../../Package.swift) builds on these
// targets by path. See README.md beside this file.
import PackageDescription

let package = Package(
    name: "FlowStackSwift",
    // The newest API the core uses is Duration and Task.sleep(for:), and NSLock.withLock (iOS 16,
    // macOS 13, tvOS 16, watchOS 9); anything newer is behind @available.
    platforms: [.iOS(.v16), .macOS(.v13), .tvOS(.v16), .watchOS(.v9), .visionOS(.v1)],
    products: [
        // What an app adds: the engine in the app, and the protocol at the edge.
        .library(name: "FlowStackClient", targets: ["FlowStackClient"]),
        // Thin Apple renderers over NavigationPlan, each a product of its own, so an app that
        // draws itself depends on the core alone. Empty on platforms without UIKit or SwiftUI.
        .library(name: "FlowStackUIKit", targets: ["FlowStackUIKit"]),
        .library(name: "FlowStackSwiftUI", targets: ["FlowStackSwiftUI"]),
        // The pure engine and JSON, for the server and for tools.
        .library(name: "FlowEngine", targets: ["FlowEngine"]),
        .library(name: "JSON", targets: ["JSON"]),
    ],
    targets: [
        // Pure: JSON values, a strict parser with limits, a fast writer. Below every other module.
        // libm on Linux: an app or tool that links JSON without Foundation still needs round/floor.
        .target(name: "JSON", linkerSettings: [.linkedLibrary("m", .when(platforms: [.linux]))]),
        // Pure: the flow-controller model, definitions, the delegate chain. No I/O.
        .target(name: "FlowEngine", dependencies: ["JSON"]),
        // The Swift client an app adds: sessions, taps predicted by the local engine, the offline
        // queue, live events, navigation plans. Foundation's networking only.
        .target(name: "FlowStackClient", dependencies: ["FlowEngine", "JSON"]),
        .target(name: "FlowStackUIKit", dependencies: ["FlowStackClient"]),
        .target(name: "FlowStackSwiftUI", dependencies: ["FlowStackClient"]),
    ]
)
