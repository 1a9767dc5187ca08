// What activating a flow version does to the builds in the field: from the clients of the last
// 7 days' sessions, which cannot render the newly live version and fall back, or are refused.
import FlowEngine
import FlowStore
import Foundation
import HTTPServer
import JSON
import Logging

extension Application {
    /// How far back activation impact looks.
    static let impactWindow: TimeInterval = 7 * 24 * 3600
    /// Distinct client texts examined, at most (the most frequent first): the answer stays
    /// bounded however many builds are out there.
    static let impactClientLimit = 1000

    /// `{since, sessions, affectedSessions, share, partial, clients: [{platform, appVersion,
    /// sessions, share, outcome, fallbacks?, missing?}]}` for flow `name` as now live, or nil when
    /// the sessions cannot be read (the activation itself stands; the failure is logged).
    ///
    /// A client is affected when it cannot render the newly live version (with the child flows
    /// it names): it then runs `fallbacks` (which may name a flow above this one, when an older
    /// parent is what avoids it), or nothing fits it any more (`unsupported`, with `missing`).
    /// Clients that listed no features render everything; a flow the root never reaches affects
    /// nobody.
    static func activationImpact(flow name: String, registry: DefinitionRegistry, store: any DefinitionStore & SessionRecordStore,
                                 logger: Logger = Logger(label: "flowstack.impact"),
                                 now: Date = Date()) -> [UInt8]? {
        let since = Timestamp.string(now.addingTimeInterval(-impactWindow))
        let counts: (total: Int, clients: [ClientSessionCount])
        do {
            counts = try store.clientCounts(createdSince: since, limit: impactClientLimit)
        } catch {
            logger.error("activation impact not computed", metadata: ["flow": "\(name)", "error": "\(error)"])
            return nil
        }
        let live = registry.liveVersions
        let reached = registry.catalog(for: live)?.screenFeatures().flows.contains(name) ?? false
        struct Group: Hashable {
            var platform: String?
            var appVersion: String?
            var outcome: String
            /// `flow:version,…` of the fallbacks, so equal outcomes group together.
            var fallbacks: String
        }
        var fallbackMaps: [Group: [String: Int]] = [:]
        var groups: [Group: (sessions: Int, missing: Set<String>)] = [:]
        var examined = 0
        for count in counts.clients {
            examined += count.sessions
            guard reached, let text = count.client, let json = try? JSONParser.parse(text, limits: .storedData),
                  let client = try? ClientCapabilities(json: json, at: JSONPointer()), client.features != nil,
                  !registry.rendersLive(name, client: client, live: live) else { continue }
            let group: Group
            var missing: [String] = []
            switch registry.fit(client, live: live) {
            case .fits(_, let fallbacks):
                group = Group(platform: client.platform, appVersion: client.appVersion, outcome: "fallback",
                              fallbacks: DefinitionRegistry.signature(fallbacks))
                fallbackMaps[group] = fallbacks
            case .unsupported(let lacking, _):
                group = Group(platform: client.platform, appVersion: client.appVersion, outcome: "unsupported", fallbacks: "")
                missing = lacking
            }
            groups[group, default: (0, [])].sessions += count.sessions
            groups[group, default: (0, [])].missing.formUnion(missing)
        }
        let share = { (sessions: Int) -> Double in counts.total == 0 ? 0 : Double(sessions) / Double(counts.total) }
        let ordered = groups.sorted { lhs, rhs in
            if lhs.value.sessions != rhs.value.sessions { return lhs.value.sessions > rhs.value.sessions }
            return (lhs.key.platform ?? "", lhs.key.appVersion ?? "", lhs.key.outcome, lhs.key.fallbacks)
                < (rhs.key.platform ?? "", rhs.key.appVersion ?? "", rhs.key.outcome, rhs.key.fallbacks)
        }
        let affected = ordered.reduce(0) { $0 + $1.value.sessions }
        var writer = JSONWriter()
        writer.beginObject()
        writer.writeKey("since")
        writer.writeString(since)
        writer.writeKey("sessions")
        writer.writeInteger(counts.total)
        writer.writeKey("affectedSessions")
        writer.writeInteger(affected)
        writer.writeKey("share")
        writer.writeNumber(share(affected))
        writer.writeKey("partial")
        writer.writeBool(examined < counts.total && counts.clients.count >= impactClientLimit)
        writer.writeKey("clients")
        writer.beginArray()
        for (group, figures) in ordered {
            writer.beginObject()
            writer.writeKey("platform")
            writer.writeOptionalString(group.platform)
            writer.writeKey("appVersion")
            writer.writeOptionalString(group.appVersion)
            writer.writeKey("sessions")
            writer.writeInteger(figures.sessions)
            writer.writeKey("share")
            writer.writeNumber(share(figures.sessions))
            writer.writeKey("outcome")
            writer.writeString(group.outcome)
            if let fallbacks = fallbackMaps[group] {
                writer.writeKey("fallbacks")
                writer.writeRawValue(DefinitionRegistry.encode(fallbacks))
            }
            if group.outcome == "unsupported" {
                writer.writeKey("missing")
                writer.beginArray()
                for feature in figures.missing.sorted() { writer.writeString(feature) }
                writer.endArray()
            }
            writer.endObject()
        }
        writer.endArray()
        writer.endObject()
        return writer.takeBytes()
    }
}
