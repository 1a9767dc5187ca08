// The GrowthBook SDK payload of the flags and experiments, made again only when they change.
import Crypto
import FeatureFlags
import JSON
import Synchronization

/// The payload last served and its tag, kept until a flag or experiment changes: SDKs poll this
/// route, and most polls find nothing new.
final class GrowthBookFeed: Sendable {
    struct Served: Sendable {
        /// Each definition's key, revision and time of update: what the payload was made from.
        let fingerprint: [String]
        let body: [UInt8]
        let etag: String
    }

    private let last = Mutex<Served?>(nil)

    /// The payload for the registry's definitions now, made again only when they changed.
    func current(_ registry: DefinitionRegistry) -> Served {
        let flags = registry.allFlags
        let experiments = registry.allExperiments
        let fingerprint = flags.map { "flag \($0.key) \($0.value.revision) \($0.value.updatedAt)" }
            + experiments.map { "experiment \($0.key) \($0.value.revision) \($0.value.updatedAt)" }
        if let served = last.withLock({ $0 }), served.fingerprint == fingerprint { return served }
        // Stored times are ISO 8601 UTC with milliseconds, so the latest sorts last.
        let dateUpdated = (flags.map(\.value.updatedAt) + experiments.map(\.value.updatedAt)).max() ?? "1970-01-01T00:00:00.000Z"
        let payload = GrowthBookPayload(
            flags: flags.map { ($0.key, $0.value.definition) }, experiments: experiments.map { ($0.key, $0.value.definition) },
            dateUpdated: dateUpdated)
        let body = Array(payload.jsonValue.jsonText.utf8)
        let digest = SHA256.hash(data: body).prefix(16).map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
        let served = Served(fingerprint: fingerprint, body: body, etag: "\"\(digest)\"")
        last.withLock { $0 = served }
        return served
    }
}
