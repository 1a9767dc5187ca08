// gzip for answers that ask for it: Accept-Encoding negotiation, zlib, and ETags per coding.
import CZlib
import Locking

/// Chooses and applies the content coding of an answer (RFC 9110 §8.4, §12.5.3).
///
/// A body of a compressible type (JSON, problem documents, YAML, text, JavaScript, CSS, HTML,
/// SVG) at or above `threshold` bytes is sent gzip-compressed when the request's
/// `Accept-Encoding` accepts gzip with a q-value above 0 (by name, or by `*` when gzip is not
/// named), and when compression makes it smaller. Such answers say `Vary: Accept-Encoding`
/// whether compressed or not, since they could have been. Streams (Server-Sent Events) are
/// never compressed: each event must reach the client when written.
///
/// A compressed answer is another representation, so its strong `ETag` differs: `"x"` becomes
/// `"x-gz"`. A request's `If-None-Match` and `If-Match` tags lose that suffix before a handler
/// sees them (`strippingCodedTags`), so a handler compares with its own tags and either
/// variant revalidates (304) or matches.
///
/// ```swift
/// ContentCoding.acceptsGzip("gzip;q=0.5, identity")   // true
/// ContentCoding.acceptsGzip("*;q=1, gzip;q=0")        // false
/// ```
public enum ContentCoding {
    /// The ETag suffix of a gzip-compressed representation.
    public static let gzipTagSuffix = "-gz"

    /// Whether an `Accept-Encoding` header (all its fields joined with commas) accepts gzip.
    /// No header accepts nothing but identity here: RFC 9110 allows any coding then, but a
    /// client that did not ask may not decode it.
    public static func acceptsGzip(_ header: String?) -> Bool {
        guard var header else { return false }
        // What browsers and HTTP libraries send ("gzip, deflate, br") has no weights and no
        // wildcard: gzip is accepted when it is named, read in place without a copy.
        let named = header.withUTF8 { bytes -> Bool? in
            var found = false
            for element in bytes.split(separator: UInt8(ascii: ",")) {
                if element.contains(where: { $0 == UInt8(ascii: ";") || $0 == UInt8(ascii: "*") }) { return nil }
                let coding = trimmed(UnsafeBufferPointer(rebasing: element))
                if equalsIgnoringCase(coding, "gzip") || equalsIgnoringCase(coding, "x-gzip") { found = true }
            }
            return found
        }
        return named ?? acceptsGzipWeighing(header)
    }

    /// `acceptsGzip` for any header: q-values and the wildcard weighed (RFC 9110 §12.5.3).
    static func acceptsGzipWeighing(_ header: String) -> Bool {
        var named: Double?
        var wildcard: Double?
        for element in header.split(separator: ",") {
            let parts = element.split(separator: ";")
            guard let first = parts.first else { continue }
            let coding = first.trimmingSpaces.lowercased()
            var quality = 1.0
            for parameter in parts.dropFirst() {
                let pair = parameter.split(separator: "=", maxSplits: 1)
                guard pair.count == 2, pair[0].trimmingSpaces.lowercased() == "q" else { continue }
                // A malformed weight is read as "not acceptable": never compress on a guess.
                quality = Self.quality(pair[1].trimmingSpaces) ?? 0
            }
            switch coding {
            case "gzip", "x-gzip": named = max(named ?? 0, quality)
            case "*": wildcard = quality
            default: break
            }
        }
        if let named { return named > 0 }
        return (wildcard ?? 0) > 0
    }

    /// A q-value (RFC 9110 §12.4.2): 0 to 1 with at most three decimals; nil when malformed.
    static func quality(_ text: String) -> Double? {
        guard let value = Double(text), value >= 0, value <= 1, text.utf8.count <= 5,
              text.utf8.allSatisfy({ ($0 >= 48 && $0 <= 57) || $0 == UInt8(ascii: ".") }) else { return nil }
        return value
    }

    /// Whether a content type is worth compressing (text-like); event streams are not.
    /// Every answer asks it, so it reads the bytes in place: the media type (before any `;`,
    /// without surrounding spaces) compared ASCII-case-insensitively, nothing allocated.
    public static func isCompressible(_ contentType: String) -> Bool {
        var contentType = contentType
        return contentType.withUTF8 { bytes in
            let type = trimmed(UnsafeBufferPointer(rebasing: bytes[..<(bytes.firstIndex(of: UInt8(ascii: ";")) ?? bytes.endIndex)]))
            if equalsIgnoringCase(type, "text/event-stream") { return false }
            if hasPrefixIgnoringCase(type, "text/") { return true }
            return equalsIgnoringCase(type, "application/json") || hasSuffixIgnoringCase(type, "+json")
                || equalsIgnoringCase(type, "application/yaml") || equalsIgnoringCase(type, "application/javascript")
                || equalsIgnoringCase(type, "image/svg+xml")
        }
    }

    /// `bytes` without the spaces and tabs around them.
    private static func trimmed(_ bytes: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8> {
        var start = bytes.startIndex
        var end = bytes.endIndex
        while start < end, bytes[start] == UInt8(ascii: " ") || bytes[start] == UInt8(ascii: "\t") { start += 1 }
        while end > start, bytes[end - 1] == UInt8(ascii: " ") || bytes[end - 1] == UInt8(ascii: "\t") { end -= 1 }
        return UnsafeBufferPointer(rebasing: bytes[start..<end])
    }

    /// Whether `bytes` are `lowercase` (ASCII letters in any case).
    private static func equalsIgnoringCase(_ bytes: UnsafeBufferPointer<UInt8>, _ lowercase: StaticString) -> Bool {
        bytes.count == lowercase.utf8CodeUnitCount && matches(bytes, at: 0, lowercase)
    }

    private static func hasPrefixIgnoringCase(_ bytes: UnsafeBufferPointer<UInt8>, _ lowercase: StaticString) -> Bool {
        bytes.count >= lowercase.utf8CodeUnitCount && matches(bytes, at: 0, lowercase)
    }

    private static func hasSuffixIgnoringCase(_ bytes: UnsafeBufferPointer<UInt8>, _ lowercase: StaticString) -> Bool {
        bytes.count >= lowercase.utf8CodeUnitCount && matches(bytes, at: bytes.count - lowercase.utf8CodeUnitCount, lowercase)
    }

    private static func matches(_ bytes: UnsafeBufferPointer<UInt8>, at offset: Int, _ lowercase: StaticString) -> Bool {
        bytes.matchesIgnoringCase(lowercase, at: offset)
    }

    /// `"x"` → `"x-gz"`, `W/"x"` → `W/"x-gz"`; anything not a quoted tag is kept.
    public static func gzipTag(_ etag: String) -> String {
        guard etag.hasSuffix("\""), etag.utf8.count >= 2 else { return etag }
        return String(etag.dropLast()) + gzipTagSuffix + "\""
    }

    /// The header with `-gz` removed from each tag that has it, or nil when none has.
    public static func strippingCodedTags(_ header: String) -> String? {
        let coded = gzipTagSuffix + "\""
        guard header.contains(coded) else { return nil }
        return header.replacing(coded, with: "\"")
    }

    /// `response` as it goes to a client that sent `acceptEncoding`: compressed, with the coded
    /// ETag and `Vary`, when it is worth it; a 304 gets the coded ETag and the compressed
    /// length of the representation it stands for.
    public static func negotiated(_ response: consuming Response, acceptEncoding: String?, threshold: Int) -> Response {
        var coded = consume response
        negotiate(&coded, acceptEncoding: acceptEncoding, threshold: threshold)
        return coded
    }

    /// `negotiated`, in place: a copy of the response shared its headers' storage, so that
    /// adding `Vary` copied them (600 instructions and an allocation on every answer).
    public static func negotiate(_ coded: inout Response, acceptEncoding: String?, threshold: Int) {
        guard coded.stream == nil, coded.deferred == nil,
              coded.headers["Content-Encoding"] == nil else { return }
        let notModified = coded.status == 304
        let contentType = notModified ? coded.representation?.contentType : coded.headers["Content-Type"]
        guard let contentType, isCompressible(contentType) else { return }
        if !coded.headers.contains("Vary", valueContaining: "accept-encoding") {
            coded.headers.add(name: "Vary", value: "Accept-Encoding")
        }
        let body = notModified ? (coded.representation?.body ?? []) : coded.body
        guard body.count >= threshold, acceptsGzip(acceptEncoding) else { return }
        // A form is made once for its body and kept by its owner, never in the cache of kept
        // bodies, whose tags (a session's version) other sessions share.
        let made = coded.compressedForm.map { $0.value(for: body) { gzip($0, level: CompressedBodies.levelPerRequest) } }
        guard let compressed = made ?? compressedBodies.compressed(body, tag: coded.headers["ETag"]),
              compressed.count < body.count else { return }
        if notModified {
            coded.representation?.body = compressed
        } else {
            coded.body = compressed
            coded.headers["Content-Encoding"] = "gzip"
        }
        if let etag = coded.headers["ETag"] { coded.headers["ETag"] = gzipTag(etag) }
    }

    /// The bytes of one gzip member, or nil when it is not valid gzip or decodes to more than
    /// `limit` bytes (for tests and tools: the server reads no compressed bodies).
    public static func gunzip(_ bytes: [UInt8], limit: Int = 16 << 20) -> [UInt8]? {
        var output = [UInt8](repeating: 0, count: limit)
        let written = bytes.withUnsafeBytes { input in
            output.withUnsafeMutableBytes { out in flowstack_gunzip(input.baseAddress, input.count, out.baseAddress, limit) }
        }
        guard written >= 0 else { return nil }
        output.removeSubrange(written...)
        return output
    }

    /// Large tagged bodies compressed lately (the same OpenAPI document, playground script or
    /// GrowthBook payload, asked again and again).
    static let compressedBodies = CompressedBodies()

    /// The compressed-body cache's size, capacity and evictions, for `/metrics`.
    public static var cacheFigures: CacheFigures { compressedBodies.figures }

    /// `bytes` as one gzip member, or nil when zlib fails.
    public static func gzip(_ bytes: [UInt8], level: Int32 = 6) -> [UInt8]? {
        let capacity = flowstack_gzip_bound(bytes.count)
        var output = [UInt8](repeating: 0, count: capacity)
        let written = bytes.withUnsafeBytes { input in
            output.withUnsafeMutableBytes { out in
                flowstack_gzip(input.baseAddress, input.count, out.baseAddress, capacity, level)
            }
        }
        guard written > 0 else { return nil }
        // A copy of the written bytes alone: trimming `output` would keep its capacity (the
        // bound, more than the input), and compressed forms are kept with sessions.
        return Array(output[..<written])
    }
}

extension Substring {
    fileprivate var trimmingSpaces: String {
        var text = self
        while let first = text.first, first == " " || first == "\t" { text = text.dropFirst() }
        while let last = text.last, last == " " || last == "\t" { text = text.dropLast() }
        return String(text)
    }
}

/// The compressed forms of the last few large bodies that carried a strong ETag, so a body
/// served unchanged many times is compressed once (the OpenAPI document, 118 KB, took about
/// 5 ms to compress at each request). A hit needs the same tag and the same bytes (a session
/// state's tag is its version, which other sessions share); comparing the bytes of a body
/// served from one stored array costs nothing (same storage), and a memcmp otherwise.
final class CompressedBodies: Sendable {
    /// Smaller bodies compress in well under a millisecond: not worth keeping.
    static let minimumBytes = 8 * 1024
    /// Entries kept; the least recently used goes when a new one comes.
    static let capacity = 16

    private let entries: PThreadMutex<LRUTable<String, (body: [UInt8], compressed: [UInt8]?)>>

    init(capacity: Int = CompressedBodies.capacity) {
        entries = PThreadMutex(LRUTable(capacity: capacity))
    }

    /// Bodies kept, the most kept, and how many were evicted to make room (for `/metrics`).
    var figures: CacheFigures { entries.withLock { $0.figures } }

    /// The tags of the bodies kept, the most recently used first (for tests).
    var tagsByRecency: [String] { entries.withLock { $0.keysByRecency } }

    /// zlib's level for a body compressed at each request (a session's state, an action's
    /// answer): its fastest, as nginx's default `gzip_comp_level 1`. On a state document of 973
    /// bytes it writes 422 bytes where level 6 writes 399, in four fifths of the time; under
    /// action load zlib was a quarter of the HTTP threads' time for clients that accept gzip
    /// (BENCHMARKS.md, "Issue 35, sixteenth session").
    static let levelPerRequest: Int32 = 1
    /// zlib's level for a body compressed once and kept: its default, the smaller output.
    static let levelKept: Int32 = 6

    func compressed(_ body: [UInt8], tag: String?) -> [UInt8]? {
        guard let tag, !tag.hasPrefix("W/"), body.count >= Self.minimumBytes else {
            return ContentCoding.gzip(body, level: Self.levelPerRequest)
        }
        if let hit = entries.withLock({ $0.value(forKey: tag) }), hit.body == body { return hit.compressed }
        let compressed = ContentCoding.gzip(body, level: Self.levelKept)
        entries.withLock { $0.updateValue((body, compressed), forKey: tag) }
        return compressed
    }
}
