// Support: what every fuzz target shares — the repo's sample files, the server's body limits, invariant checks.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

import JSON

/// The checkout this file was compiled from: `scripts/fuzz.sh` passes absolute source paths,
/// so `#filePath` is `<repo>/fuzz/Support.swift` and the targets read `flows/` and `flags/`
/// from the repo, not from wherever they are run.
let repositoryRoot: String = {
    var path = #filePath
    for _ in 0..<2 {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        path = String(path[..<slash])
    }
    return path.isEmpty ? "/" : path
}()

/// The limits the server parses request bodies with (`BodyLimits` in FlowServer): depth 32,
/// strings up to 64 KiB. The body size itself is bounded by libFuzzer's `-max_len`.
let bodyLimits = JSONParser.Limits(maxDepth: 32, maxStringLength: 64 * 1024, maxInputSize: Int.max)

/// The bytes of a file under the repository, or an exit with a message when it cannot be read:
/// a target without its sample files would fuzz nothing useful.
func repositoryFile(_ relativePath: String) -> [UInt8] {
    let path = repositoryRoot + "/" + relativePath
    guard let file = fopen(path, "rb") else {
        fail("cannot read \(path); build the fuzz targets from the repository with scripts/fuzz.sh")
    }
    defer { fclose(file) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 4096)
    while true {
        let count = fread(&chunk, 1, chunk.count, file)
        if count <= 0 { break }
        bytes += chunk[0..<count]
    }
    return bytes
}

/// The sample app's four flows, as `FlowCatalog.parse` takes them.
let sampleDocuments: [(name: String, bytes: [UInt8])] = ["app", "onboarding", "home", "modal", "login", "checkout", "address", "paywall"].map {
    (name: $0, bytes: repositoryFile("flows/\($0).json"))
}

/// Writes a line to standard error, where libFuzzer reports too.
func printError(_ line: String) {
    var text = line + "\n"
    text.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
}

/// Stops the process with `message`; for set-up problems, not for findings.
func fail(_ message: String) -> Never {
    printError("fuzz: \(message)")
    exit(2)
}

/// An invariant of the code under test; a violation is a finding, so it traps and libFuzzer
/// saves the input that caused it.
func require(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition {
        printError("fuzz: invariant broken: \(message())")
        fatalError("invariant broken")
    }
}

/// Writing a parsed value and parsing the text again gives the same value.
func requireWriterRoundTrip(_ value: JSONValue) {
    let text = value.jsonText
    do throws(JSONParseError) {
        let again = try JSONParser.parse(text, limits: JSONParser.Limits(maxDepth: JSONParser.Limits.depthCeiling))
        require(again == value, "\(value.abbreviatedJSON()) was written as \(text.prefix(200)), which reads back as \(again.abbreviatedJSON())")
    } catch {
        require(false, "\(value.abbreviatedJSON()) was written as \(text.prefix(200)), which does not parse: \(error)")
    }
}

/// Splits an input into request bodies at NUL bytes, which JSON never contains unescaped: one
/// body is exactly what a client can post, several are a session's sequence of posts.
func requestBodies(_ data: UnsafePointer<UInt8>, _ size: Int, maxCount: Int) -> [ArraySlice<UInt8>] {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    return Array(bytes.split(separator: 0, maxSplits: maxCount - 1, omittingEmptySubsequences: false).prefix(maxCount))
}
