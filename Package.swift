// swift-tools-version:6.0
// FlowStack: a navigation-state server. See README.md and ../shared/DESIGN.md for the layout.
import PackageDescription

let package = Package(
    name: "FlowStack",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "flowstack", targets: ["flowstack"]),
        // What an app adds: the engine in the app, and the protocol at the edge. No server C library.
        .library(name: "FlowStackClient", targets: ["FlowStackClient"]),
        .executable(name: "flowstack-tap", targets: ["flowstack-tap"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
    ],
    targets: [
        // libmicrohttpd, found through pkg-config; the shim wraps its variadic calls.
        .systemLibrary(
            name: "CMicroHTTPD",
            pkgConfig: "libmicrohttpd",
            providers: [.apt(["libmicrohttpd-dev"])]
        ),
        // zlib (Debian zlib1g-dev), for gzip-compressed answers.
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]
        ),
        // Graphviz's layout library (Debian libgraphviz-dev), for the SVG flow graphs.
        .systemLibrary(
            name: "CGraphviz",
            pkgConfig: "libgvc",
            providers: [.apt(["libgraphviz-dev"])]
        ),
        // libpq (Debian libpq-dev), for the PostgreSQL store.
        .systemLibrary(
            name: "CPostgres",
            pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"])]
        ),
        // Generates Swift sources that embed migrations/, flows/ and openapi.yaml in the binary.
        .executableTarget(name: "embed-resources", path: "Sources/embed-resources"),
        .plugin(
            name: "EmbedResources",
            capability: .buildTool(),
            dependencies: ["embed-resources"]
        ),
        // A pthread mutex for locks every request takes (Swift's Mutex convoys on Linux).
        .target(name: "Locking"),
        .target(name: "HTTPServer", dependencies: ["CMicroHTTPD", "CZlib", "Locking"]),
        // Pure: JSON values, a strict parser with limits, a fast writer. Below every other module.
        // libm on Linux: an app or tool that links JSON without Foundation still needs round/floor.
        .target(name: "JSON", linkerSettings: [.linkedLibrary("m", .when(platforms: [.linux]))]),
        // Pure: GrowthBook-compatible bucketing, targeting, OpenFeature-shaped flag evaluation.
        .target(name: "FeatureFlags", dependencies: ["JSON"]),
        // Pure: experiment statistics (gbstats' t-test, Bayesian test and SRM check) and the
        // distributions under them. No I/O.
        .target(name: "ExperimentStats", dependencies: ["JSON"]),
        // Pure: the flow-controller model, definitions, the delegate chain. No I/O.
        .target(name: "FlowEngine", dependencies: ["JSON"]),
        // Pure: flow tests — scenarios of actions and what must follow, run on a catalog with the engine.
        .target(name: "FlowScenarios", dependencies: ["FlowEngine", "JSON"]),
        // Flow graphs: screens, actions and flows as DOT, Mermaid, or SVG laid out by Graphviz.
        .target(name: "FlowGraph", dependencies: ["FlowEngine", "JSON", "CGraphviz"]),
        // What the server needs from storage: the protocol, records, errors, migrations. No database.
        .target(name: "FlowStore", dependencies: ["Locking"], plugins: ["EmbedResources"]),
        // FlowStore on SQLite through GRDB: the embedded default.
        .target(name: "SQLiteStore", dependencies: ["FlowStore", "Locking", .product(name: "GRDB", package: "GRDB.swift")]),
        // FlowStore on PostgreSQL through libpq: several nodes over one database.
        .target(name: "PostgresStore", dependencies: ["FlowStore", "Locking", "CPostgres"]),
        .target(
            name: "FlowServer",
            dependencies: [
                "HTTPServer",
                "JSON",
                "FlowEngine",
                "FlowScenarios",
                "FeatureFlags",
                "ExperimentStats",
                "FlowGraph",
                "FlowStore",
                "Locking",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            plugins: ["EmbedResources"]
        ),
        .executableTarget(
            name: "flowstack",
            dependencies: [
                "FlowServer",
                "FlowEngine",
                "FlowScenarios",
                "FlowGraph",
                "ExperimentStats",
                "JSON",
                "FlowStore",
                "SQLiteStore",
                "PostgresStore",
                "HTTPServer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The Swift client an app adds: sessions, taps predicted by the local engine, the offline
        // queue, live events, navigation plans. Foundation's networking only.
        .target(name: "FlowStackClient", dependencies: ["FlowEngine", "JSON"], exclude: ["Apple/README.md"]),
        // A terminal client: the sample app's phone drawn as text, a key per action.
        .executableTarget(name: "flowstack-tap", dependencies: ["FlowStackClient"]),
        // Test support: one request-sending protocol, in-process or through a real socket.
        .target(name: "HTTPTestClient", dependencies: ["HTTPServer"], path: "Tests/HTTPTestClient"),
        .testTarget(name: "HTTPServerTests", dependencies: ["HTTPServer", "HTTPTestClient"]),
        .target(name: "TestSupport", path: "Tests/TestSupport"),
        // Test support: a store of the kind the run asks for (SQLite, or a throwaway PostgreSQL).
        .target(name: "StoreTestSupport", dependencies: ["FlowStore", "SQLiteStore", "PostgresStore", "TestSupport"], path: "Tests/StoreTestSupport"),
        .testTarget(name: "LockingTests", dependencies: ["Locking"]),
        .testTarget(name: "JSONTests", dependencies: ["JSON", "TestSupport"]),
        .testTarget(name: "FeatureFlagsTests", dependencies: ["FeatureFlags", "JSON"]),
        .testTarget(name: "ExperimentStatsTests", dependencies: ["ExperimentStats", "JSON"]),
        .testTarget(name: "FlowEngineTests", dependencies: ["FlowEngine", "JSON", "TestSupport"]),
        .testTarget(name: "FlowScenariosTests", dependencies: ["FlowScenarios", "FlowEngine", "JSON"]),
        .testTarget(name: "FlowGraphTests", dependencies: ["FlowGraph", "FlowEngine", "JSON"]),
        .testTarget(name: "FlowStoreTests", dependencies: ["FlowStore", "SQLiteStore", "PostgresStore", "StoreTestSupport", .product(name: "GRDB", package: "GRDB.swift")]),
        // The client against a real flowstack process on a loopback port (the binary this build made).
        .testTarget(name: "FlowStackClientTests", dependencies: ["FlowStackClient", "FlowEngine", "JSON", "TestSupport"]),
        .testTarget(name: "FlowServerTests", dependencies: ["FlowServer", "FlowEngine", "FlowScenarios", "ExperimentStats", "JSON", "HTTPServer", "FlowStore", "SQLiteStore", "HTTPTestClient", "StoreTestSupport", "TestSupport", .product(name: "GRDB", package: "GRDB.swift"),
                                                      .product(name: "Crypto", package: "swift-crypto")]),
    ]
)
