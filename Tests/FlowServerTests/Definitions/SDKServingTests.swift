// The JavaScript client served under /sdk/: every module of clients/js/src/ through a real socket,
// as a browser imports them, with every relative import resolving to another served module.
import FlowServer
import Foundation
import HTTPServer
import HTTPTestClient
import Testing

struct SDKServingTests {
    /// The package's modules, by their path under clients/js/src/ (`index.js`, `engine/engine.js`).
    static func repositoryModules() throws -> Set<String> {
        let source = Repository.root.appending(path: "clients/js/src")
        var modules: Set<String> = []
        for folder in ["", "engine", "client"] {
            let directory = folder.isEmpty ? source : source.appending(path: folder)
            for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) where name.hasSuffix(".js") {
                modules.insert(folder.isEmpty ? name : "\(folder)/\(name)")
            }
        }
        return modules
    }

    /// The specifiers a module imports or re-exports (`import … from '…'`, `export … from '…'`,
    /// `import '…'`), leaving out those in comments (the doc comments show `@flowstack/client/engine`).
    static func imports(of text: String) -> [String] {
        var found: [String] = []
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        for line in lines {
            let trimmed = line.drop { $0 == " " }
            if trimmed.hasPrefix("//") || trimmed.hasPrefix("*") || trimmed.hasPrefix("/*") { continue }
            for marker in ["from '", "import '", "from \"", "import \""] {
                var rest = Substring(line)
                while let range = rest.range(of: marker) {
                    let quote = marker.last!
                    let after = rest[range.upperBound...]
                    guard let end = after.firstIndex(of: quote) else { break }
                    found.append(String(after[..<end]))
                    rest = after[after.index(after: end)...]
                }
            }
        }
        return found
    }

    /// `specifier` resolved against the module at `path` (both under /sdk/), as a browser resolves a
    /// relative URL; nil for a bare specifier (which a browser cannot load without an import map).
    static func resolve(_ specifier: String, from path: String) -> String? {
        guard specifier.hasPrefix("./") || specifier.hasPrefix("../") else { return nil }
        var parts = path.split(separator: "/").dropLast().map(String.init)
        for part in specifier.split(separator: "/") {
            switch part {
            case ".": continue
            case "..": if !parts.isEmpty { parts.removeLast() }
            default: parts.append(String(part))
            }
        }
        return parts.joined(separator: "/")
    }

    /// Each module of the repository is served at /sdk/<its path> through a socket, as JavaScript
    /// with a tag that revalidates to a 304, and its imports name modules that are served too: from
    /// /sdk/index.js down, a browser loads the whole package with no import map and no build.
    @Test func everyModuleIsServedAndItsImportsResolve() throws {
        let modules = try Self.repositoryModules()
        #expect(modules.contains("index.js") && modules.contains("engine/engine.js") && modules.contains("client/flow-session.js"))
        #expect(Set(Application.sdkFileNames) == modules, "served \(Application.sdkFileNames), the repository has \(modules.sorted())")
        let test = try TestApp()
        try test.withLiveServer { sender in
            var reached: Set<String> = []
            var waiting = ["index.js"]
            while let path = waiting.popLast() {
                guard reached.insert(path).inserted else { continue }
                let answer = try sender.send("GET", "/sdk/\(path)")
                #expect(answer.status == 200, "GET /sdk/\(path) answered \(answer.status)")
                guard answer.status == 200 else { continue }
                #expect(answer.headers["Content-Type"] == "text/javascript; charset=utf-8", "\(path)")
                #expect(answer.headers["Cache-Control"] == "no-cache", "\(path)")
                let onDisk = try String(contentsOf: Repository.root.appending(path: "clients/js/src/\(path)"), encoding: .utf8)
                #expect(answer.text == onDisk, "/sdk/\(path) is not the repository's file")
                let tag = try #require(answer.headers["ETag"], "\(path) has no ETag")
                #expect(try sender.send("GET", "/sdk/\(path)", headers: [("If-None-Match", tag)]).status == 304, "\(path)")
                for specifier in Self.imports(of: answer.text) {
                    let target = Self.resolve(specifier, from: path)
                    #expect(target.map(modules.contains) == true, "\(path) imports \(specifier), which is no served module")
                    if let target { waiting.append(target) }
                }
            }
            // A module the index does not reach (none today) is still served, as the list says.
            for path in modules.subtracting(reached) {
                #expect(try sender.send("GET", "/sdk/\(path)").status == 200, "\(path)")
            }
            #expect(reached.count > 30, "from /sdk/index.js: \(reached.sorted())")
            for missing in ["/sdk/nothing.js", "/sdk/engine/index.ts", "/sdk/..%2Fopenapi.yaml", "/sdk/engine/..%2Findex.js",
                            "/sdk/client/engine.js", "/sdk/types/index.d.ts"] {
                #expect(try sender.send("GET", missing).status == 404, "\(missing)")
            }
        }
    }

    /// The import reader sees multi-line imports and re-exports and skips comments; relative
    /// specifiers resolve across folders.
    @Test func importsAreReadAndResolved() {
        let text = """
        // import { x } from '@flowstack/client/engine';
         * import * as engine from '@flowstack/client/engine';
        import {
          a, b,
        } from './tree.js';
        export * from "./engine/index.js";
        export { c } from '../client/json.js';
        """
        #expect(Self.imports(of: text) == ["./tree.js", "./engine/index.js", "../client/json.js"])
        #expect(Self.resolve("./tree.js", from: "engine/engine.js") == "engine/tree.js")
        #expect(Self.resolve("./engine/index.js", from: "index.js") == "engine/index.js")
        #expect(Self.resolve("../client/json.js", from: "engine/engine.js") == "client/json.js")
        #expect(Self.resolve("@flowstack/client/engine", from: "index.js") == nil)
    }
}
