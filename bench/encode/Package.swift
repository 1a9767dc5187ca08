// swift-tools-version:6.0
// A fixed workload over the engine's encoders, for callgrind: see main.swift and BENCHMARKS.md
// ("Issue 35: encode less"). A package of its own, so building it builds only JSON and the engine.
import PackageDescription

let package = Package(
    name: "EncodeBench",
    dependencies: [.package(name: "FlowStackSwift", path: "../../clients/swift")],
    targets: [
        .executableTarget(
            name: "encode-bench",
            dependencies: [.product(name: "FlowEngine", package: "FlowStackSwift"), .product(name: "JSON", package: "FlowStackSwift")]),
    ]
)
