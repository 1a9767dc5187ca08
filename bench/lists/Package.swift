// swift-tools-version:6.0
// The cost of lists on the server: see main.swift and BENCHMARKS.md ("Issue 37: lists as data").
// A package of its own, so building it builds only JSON and the engine.
import PackageDescription

let package = Package(
    name: "ListsBench",
    dependencies: [.package(name: "FlowStackSwift", path: "../../clients/swift")],
    targets: [
        .executableTarget(
            name: "lists-bench",
            dependencies: [.product(name: "FlowEngine", package: "FlowStackSwift"), .product(name: "JSON", package: "FlowStackSwift")]),
    ]
)
