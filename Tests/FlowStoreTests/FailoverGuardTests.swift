// The failover guard's decision and its per-host connection strings (pure: no database).
import FlowStore
import Foundation
@testable import PostgresStore
import Testing

@Suite("PostgreSQL failover guard")
struct FailoverGuardTests {
    typealias Host = FailoverGuard.HostState

    /// The issue's split brain: the old primary back writable next to the promoted standby.
    @Test func twoWritableHostsAreRefused() {
        let verdict = FailoverGuard.decide([
            Host(endpoint: "db1:5432", writable: true, timeline: 1),
            Host(endpoint: "db2:5432", writable: true, timeline: 2),
            Host(endpoint: "db3:5432", writable: false, timeline: 2),
        ])
        guard case .refused(let reason) = verdict else { Issue.record("not refused: \(verdict)"); return }
        #expect(reason.contains("2 database hosts accept writes"))
        #expect(reason.contains("db1:5432 (timeline 1)") && reason.contains("db2:5432 (timeline 2)"))
    }

    /// A writable host behind another host's timeline is a former primary, even alone.
    @Test func aWriterOnAnOlderTimelineIsRefused() {
        let verdict = FailoverGuard.decide([
            Host(endpoint: "db1:5432", writable: true, timeline: 1),
            Host(endpoint: "db3:5432", writable: false, timeline: 2),
        ])
        guard case .refused(let reason) = verdict else { Issue.record("not refused: \(verdict)"); return }
        #expect(reason.contains("older timeline"))
    }

    /// The normal cases: one writer (standbys behind or level), a dead host left out, no writer.
    @Test func oneWriterIsTheOneToUse() {
        #expect(FailoverGuard.decide([
            Host(endpoint: "db2:5432", writable: true, timeline: 2),
            Host(endpoint: "db3:5432", writable: false, timeline: 2),
            Host(endpoint: "db1:5432", writable: false, timeline: 1),
        ]) == .writer("db2:5432"))
        #expect(FailoverGuard.decide([Host(endpoint: "db2:5432", writable: true, timeline: nil)]) == .writer("db2:5432"))
        #expect(FailoverGuard.decide([Host(endpoint: "db3:5432", writable: false, timeline: 2)]) == .writer(nil))
    }

    /// One string per host, the URL's other parameters kept, target_session_attrs dropped;
    /// a single host needs no guard.
    @Test func perHostConnectionStrings() {
        let strings = FailoverGuard.perHostConnectionStrings(
            "postgresql://flow:s'cret@db1:5433,db2/flowstack?target_session_attrs=read-write&sslmode=disable")
        #expect(strings.count == 2)
        #expect(strings.allSatisfy { !$0.contains("target_session_attrs") && $0.contains("sslmode='disable'") })
        #expect(strings.allSatisfy { $0.contains("password='s\\'cret'") && $0.contains("dbname='flowstack'") })
        #expect(strings[0].contains("host='db1'") && strings[0].contains("port='5433'"))
        #expect(strings[1].contains("host='db2'") && !strings[1].contains("port="))
        #expect(FailoverGuard.perHostConnectionStrings("postgresql://flow@db1/flowstack").isEmpty)
        #expect(FailoverGuard.init(uri: "postgresql://flow@db1/flowstack") == nil)
    }
}
