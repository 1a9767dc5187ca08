// swift-tools-version:6.0
// FlowStack: a navigation-state server. README.md says what each module is (Layout) and how they depend on each other.
import PackageDescription

// The app-side package (clients/swift): the engine, JSON and the client, by path.
let json = Target.Dependency.product(name: "JSON", package: "swift")
let engine = Target.Dependency.product(name: "FlowEngine", package: "swift")
let client = Target.Dependency.product(name: "FlowStackClient", package: "swift")

let package = Package(
    name: "FlowStack",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "flowstack", targets: ["flowstack"]),
        .executable(name: "flowstack-tap", targets: ["flowstack-tap"]),
    ],
    dependencies: [
        // The engine, JSON and the client live in a package of their own, with no dependency, so
        // an app adds them without resolving the server's packages (clients/swift/README.md).
        .package(path: "clients/swift"),
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
        // jemalloc (Debian libjemalloc-dev): linked into the server executable only, where it
        // replaces glibc's malloc for the whole process (Sources/flowstack/Allocator.swift says why).
        .systemLibrary(
            name: "CJemalloc",
            pkgConfig: "jemalloc",
            providers: [.apt(["libjemalloc-dev"])]
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
        // Pure: GrowthBook-compatible bucketing, targeting, OpenFeature-shaped flag evaluation.
        .target(name: "FeatureFlags", dependencies: [json]),
        // Pure: experiment statistics (gbstats' t-test, Bayesian test and SRM check) and the
        // distributions under them. No I/O.
        .target(name: "ExperimentStats", dependencies: [json]),
        // Pure: flow tests — scenarios of actions and what must follow, run on a catalog with the engine.
        .target(name: "FlowScenarios", dependencies: [engine, json]),
        // Pure: the engine conformance suite — case sources run into cases, the runner protocol,
        // coverage. No I/O, no database: every port's runner is checked against its answers.
        .target(name: "EngineSuite", dependencies: [engine, json, "FeatureFlags"]),
        // Flow graphs: screens, actions and flows as DOT, Mermaid, or SVG laid out by Graphviz.
        .target(name: "FlowGraph", dependencies: [engine, json, "CGraphviz"]),
        // What the server needs from storage: the protocol, records, errors, migrations. No database.
        .target(name: "FlowStore", dependencies: ["Locking"], plugins: ["EmbedResources"]),
        // FlowStore on SQLite through GRDB: the embedded default.
        .target(name: "SQLiteStore", dependencies: [
            "FlowStore", "Locking", json, .product(name: "GRDB", package: "GRDB.swift"), .product(name: "GRDBSQLite", package: "GRDB.swift"),
        ]),
        // FlowStore on PostgreSQL through libpq: several nodes over one database.
        .target(name: "PostgresStore", dependencies: ["FlowStore", "Locking", "CPostgres"]),
        .target(
            name: "FlowServer",
            dependencies: [
                "HTTPServer",
                json,
                engine,
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
                engine,
                "EngineSuite",
                "FlowScenarios",
                "FlowGraph",
                "ExperimentStats",
                json,
                "FlowStore",
                "SQLiteStore",
                "PostgresStore",
                "HTTPServer",
                "CJemalloc",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // A terminal client: the sample app's phone drawn as text, a key per action.
        .executableTarget(name: "flowstack-tap", dependencies: [client]),
        // Test support: one request-sending protocol, in-process or through a real socket.
        .target(name: "HTTPTestClient", dependencies: ["HTTPServer"], path: "Tests/HTTPTestClient"),
        .testTarget(name: "HTTPServerTests", dependencies: ["HTTPServer", "HTTPTestClient", "TestSupport"]),
        .target(name: "TestSupport", path: "Tests/TestSupport"),
        // Test support: a store of the kind the run asks for (SQLite, or a throwaway PostgreSQL).
        .target(name: "StoreTestSupport", dependencies: ["FlowStore", "SQLiteStore", "PostgresStore", "TestSupport"], path: "Tests/StoreTestSupport"),
        .testTarget(name: "LockingTests", dependencies: ["Locking"]),
        .testTarget(name: "JSONTests", dependencies: [json, "TestSupport"]),
        .testTarget(name: "FeatureFlagsTests", dependencies: ["FeatureFlags", json]),
        .testTarget(name: "ExperimentStatsTests", dependencies: ["ExperimentStats", json]),
        .testTarget(name: "FlowEngineTests", dependencies: [engine, json, "TestSupport"]),
        .testTarget(name: "EngineSuiteTests", dependencies: ["EngineSuite", engine, json]),
        .testTarget(name: "FlowScenariosTests", dependencies: ["FlowScenarios", engine, json]),
        .testTarget(name: "FlowGraphTests", dependencies: ["FlowGraph", engine, json]),
        .testTarget(name: "FlowStoreTests", dependencies: ["FlowStore", "SQLiteStore", "PostgresStore", "StoreTestSupport", "TestSupport", .product(name: "GRDB", package: "GRDB.swift")]),
        // The client against a real flowstack process on a loopback port (the binary this build made).
        .testTarget(name: "FlowStackClientTests", dependencies: [client, engine, json, "TestSupport",
            .product(name: "FlowStackUIKit", package: "swift"), .product(name: "FlowStackSwiftUI", package: "swift")]),
        .testTarget(name: "FlowServerTests", dependencies: ["FlowServer", engine, "EngineSuite", "FlowScenarios", "ExperimentStats", json, "HTTPServer", "FlowStore", "SQLiteStore", "PostgresStore", "HTTPTestClient", "StoreTestSupport", "TestSupport", .product(name: "GRDB", package: "GRDB.swift"),
                                                      .product(name: "Crypto", package: "swift-crypto")]),
    ]
)
