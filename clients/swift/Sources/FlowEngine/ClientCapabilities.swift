// ClientCapabilities: what an app build says it can render — its platform, version and screen features.

import JSON

/// The client a session is made for: `{"platform": "ios", "appVersion": "2.3.1", "features": […]}`.
/// Every field is optional; a client that lists no `features` is taken to render every screen.
///
/// ```swift
/// let client = try ClientCapabilities(json: body["client"]!, at: JSONPointer(["client"]))
/// client.canRender(catalog.screenFeatures())   // false when a live screen is missing
/// ```
public struct ClientCapabilities: Sendable, Equatable, Hashable {
    public var platform: String?
    public var appVersion: String?
    /// The screen features the build can draw; nil: all of them.
    public var features: Set<String>?

    /// Features one client may list, at most.
    public static let maxFeatures = 1000
    /// Characters (Unicode scalars, as JSON Schema's `maxLength` counts them) of a feature name,
    /// at most (a definition's limit too).
    public static let maxFeatureLength = 200
    @available(*, deprecated, renamed: "maxFeatureLength", message: "a feature's limit counts characters, not bytes")
    public static var maxFeatureBytes: Int { maxFeatureLength }
    /// Bytes of `platform` and of `appVersion`, at most.
    public static let maxLabelBytes = 64

    public init(platform: String? = nil, appVersion: String? = nil, features: Set<String>? = nil) {
        self.platform = platform
        self.appVersion = appVersion
        self.features = features
    }

    /// Reads a client object, every problem located under `path`; throws them all at once.
    public init(json: JSONValue, at path: JSONPointer) throws(DefinitionProblems) {
        var problems: [DefinitionProblem] = []
        func report(_ pointer: JSONPointer, _ message: String) {
            problems.append(DefinitionProblem(path: pointer.description, message: message))
        }
        guard let object = json.objectValue else {
            throw DefinitionProblems([DefinitionProblem(
                path: path.description, message: "must be an object {platform?, appVersion?, features?}; found \(json.typeName)")])
        }
        for key in object.keys where !["platform", "appVersion", "features"].contains(key) {
            report(path.appending(key), "unknown field; expected platform, appVersion, features")
        }
        func label(_ key: String, example: String) -> String? {
            guard let raw = object[key], !raw.isNull else { return nil }
            if let text = raw.stringValue, Self.isLabel(text) { return text }
            report(path.appending(key), "must be a string of 1 to \(Self.maxLabelBytes) printable bytes, such as \(example); found \(raw.abbreviatedJSON(limit: 40))")
            return nil
        }
        platform = label("platform", example: "\"ios\"")
        appVersion = label("appVersion", example: "\"2.3.1\"")
        features = nil
        if let raw = object["features"], !raw.isNull {
            let featuresPath = path.appending("features")
            if let elements = raw.arrayValue {
                if elements.count > Self.maxFeatures {
                    report(featuresPath, "at most \(Self.maxFeatures) features; found \(elements.count)")
                } else {
                    var set: Set<String> = []
                    for (index, element) in elements.enumerated() {
                        if let feature = element.stringValue, !feature.isEmpty, feature.unicodeScalars.count <= Self.maxFeatureLength {
                            set.insert(feature)
                        } else {
                            report(featuresPath.appending(index),
                                   "a feature is a non-empty string of at most \(Self.maxFeatureLength) characters, such as \"onboarding.first\"; found \(element.abbreviatedJSON(limit: 40))")
                        }
                    }
                    features = set
                }
            } else {
                report(featuresPath, "must be an array of screen features, such as [\"onboarding.first\"]; found \(raw.typeName)")
            }
        }
        guard problems.isEmpty else { throw DefinitionProblems(problems) }
    }

    /// Platform and app version: printable ASCII without quotes or backslashes, so they read
    /// plainly in reports.
    static func isLabel(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.count <= maxLabelBytes
            && text.utf8.allSatisfy { $0 >= 0x20 && $0 < 0x7F && $0 != 0x22 && $0 != 0x5C }
    }

    /// Whether the client renders every feature of `shown`.
    public func canRender(_ shown: ScreenFeatures) -> Bool {
        guard let features else { return true }
        return shown.rendered.isSubset(of: features)
    }

    /// What of `shown` the client cannot render, in name order.
    public func missing(_ shown: ScreenFeatures) -> [String] {
        guard let features else { return [] }
        return shown.missing(from: features)
    }

    /// `{"platform":…,"appVersion":…,"features":[…]}` with features sorted and absent fields
    /// left out: the same client always writes the same text, so sessions can be grouped by it.
    public func write(into writer: inout JSONWriter) {
        writer.beginObject()
        if let platform {
            writer.writeKey(literal: "platform")
            writer.writeString(platform)
        }
        if let appVersion {
            writer.writeKey(literal: "appVersion")
            writer.writeString(appVersion)
        }
        if let features {
            writer.writeKey(literal: "features")
            writer.beginArray()
            for feature in features.sorted() { writer.writeString(feature) }
            writer.endArray()
        }
        writer.endObject()
    }

    /// The canonical JSON text (see ``write(into:)``).
    public var jsonText: String {
        var writer = JSONWriter()
        write(into: &writer)
        return String(decoding: writer.takeBytes(), as: UTF8.self)
    }
}
