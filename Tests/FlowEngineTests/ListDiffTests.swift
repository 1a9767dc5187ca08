// ListDiffTests: the list diff — applied to the old list it gives the new one, keeps every id, and reports one change for one change.

import JSON
import Testing

import FlowEngine
import TestSupport

struct ListDiffTests {
    /// A random list: up to 6 sections of up to 12 rows, ids drawn from small pools so that
    /// mutations reuse them.
    static func randomList(_ random: inout SeededGenerator) -> [ListSection] {
        var sections: [ListSection] = []
        var next = 0
        for index in 0..<Int.random(in: 0...6, using: &random) {
            var rows: [ListRow] = []
            for _ in 0..<Int.random(in: 0...12, using: &random) {
                next += 1
                rows.append(ListRow(id: "r\(next)", kind: "cell", values: ["v": .integer(Int.random(in: 0...3, using: &random))]))
            }
            sections.append(ListSection(id: "s\(index)", title: "S\(index)", rows: rows))
        }
        return sections
    }

    /// `list` changed by a few random edits of every kind the engine's effects (and a whole new
    /// list from params) can make.
    static func mutate(_ list: [ListSection], _ random: inout SeededGenerator) -> [ListSection] {
        var sections = list
        var fresh = 1000
        for _ in 0..<Int.random(in: 1...6, using: &random) {
            let allRows = sections.indices.flatMap { s in sections[s].rows.indices.map { (s, $0) } }
            switch Int.random(in: 0...9, using: &random) {
            case 0:
                fresh += 1
                sections.insert(ListSection(id: "n\(fresh)", rows: [ListRow(id: "nr\(fresh)", kind: "cell")]), at: Int.random(in: 0...sections.count, using: &random))
            case 1 where !sections.isEmpty:
                sections.remove(at: Int.random(in: sections.indices, using: &random))
            case 2 where !sections.isEmpty:
                let section = sections.remove(at: Int.random(in: sections.indices, using: &random))
                sections.insert(section, at: Int.random(in: 0...sections.count, using: &random))
            case 3 where !sections.isEmpty:
                let index = Int.random(in: sections.indices, using: &random)
                sections[index].title = Bool.random(using: &random) ? nil : "T\(fresh)"
                fresh += 1
            case 4 where !sections.isEmpty:
                fresh += 1
                let index = Int.random(in: sections.indices, using: &random)
                sections[index].rows.insert(ListRow(id: "x\(fresh)", kind: "cell"), at: Int.random(in: 0...sections[index].rows.count, using: &random))
            case 5 where !allRows.isEmpty:
                let (s, r) = allRows[Int.random(in: allRows.indices, using: &random)]
                sections[s].rows.remove(at: r)
            case 6 where !allRows.isEmpty:
                let (s, r) = allRows[Int.random(in: allRows.indices, using: &random)]
                let row = sections[s].rows.remove(at: r)
                let target = Int.random(in: sections.indices, using: &random)
                sections[target].rows.insert(row, at: Int.random(in: 0...sections[target].rows.count, using: &random))
            case 7 where !allRows.isEmpty:
                let (s, r) = allRows[Int.random(in: allRows.indices, using: &random)]
                sections[s].rows[r].values["v"] = .integer(Int.random(in: 0...3, using: &random))
            case 8 where !allRows.isEmpty:
                let (s, r) = allRows[Int.random(in: allRows.indices, using: &random)]
                sections[s].rows[r].kind = Bool.random(using: &random) ? "cell" : "other"
            case 9 where sections.count > 1:
                sections.shuffle(using: &random)
                let index = Int.random(in: sections.indices, using: &random)
                sections[index].rows.shuffle(using: &random)
            default:
                break
            }
        }
        return sections
    }

    /// Checks one pair: the changes rebuild `new` from `old`, and no row or section that stays
    /// (kept on both sides) is reported deleted or inserted.
    static func check(_ old: [ListSection], _ new: [ListSection], seed: UInt64) {
        let changes = ListChanges.diff(from: old, to: new)
        let rebuilt = changes.apply(to: old, new: new)
        if rebuilt != new {
            Issue.record("seed \(seed): the changes do not turn the old list into the new one (\(rebuilt == nil ? "they do not fit it" : "they give another list"))")
        }
        let oldSections = Set(old.map(\.id))
        let newSections = Set(new.map(\.id))
        let kept = oldSections.intersection(newSections)
        for change in changes.sections.deleted + changes.sections.inserted where kept.contains(change.id) {
            Issue.record("seed \(seed): section \(change.id) is in both lists but reported deleted or inserted")
        }
        func keptRows(_ list: [ListSection]) -> Set<String> {
            Set(list.filter { kept.contains($0.id) }.flatMap { $0.rows.map(\.id) })
        }
        let rowsKept = keptRows(old).intersection(keptRows(new))
        for change in changes.rows.deleted + changes.rows.inserted where rowsKept.contains(change.id) {
            Issue.record("seed \(seed): row \(change.id) stays in the list but is reported deleted or inserted")
        }
        if old == new { #expect(changes.isEmpty, "seed \(seed): equal lists have changes") }
    }

    /// Thousands of seeded random changes: applying the change set to the old list gives the
    /// new one, and every id that stays is kept.
    @Test(arguments: 0..<8)
    func randomChangesRebuildTheNewList(batch: Int) {
        for case_ in 0..<500 {
            let seed = UInt64(batch * 500 + case_)
            var random = SeededGenerator(seed: seed)
            let old = Self.randomList(&random)
            let new = Bool.random(using: &random) ? Self.mutate(old, &random) : Self.randomList(&random)
            Self.check(old, new, seed: seed)
        }
    }

    private static let five = [ListSection(id: "a", rows: (1...5).map { ListRow(id: "r\($0)", kind: "cell") })]

    /// One row moved from first to last is one move, not four (the others keep their order).
    @Test func oneMoveIsOneMove() {
        var new = Self.five
        new[0].rows.append(new[0].rows.removeFirst())
        let changes = ListChanges.diff(from: Self.five, to: new)
        #expect(changes == ListChanges(rows: .init(moved: [.init(id: "r1", from: RowPath(section: 0, row: 0), to: RowPath(section: 0, row: 4))])))
    }

    /// One insert, one delete, one reload: exactly that, at the new, old and new index.
    @Test func oneEditIsOneChange() {
        var inserted = Self.five
        inserted[0].rows.insert(ListRow(id: "new", kind: "cell"), at: 2)
        #expect(ListChanges.diff(from: Self.five, to: inserted) == ListChanges(rows: .init(inserted: [.init(id: "new", at: RowPath(section: 0, row: 2))])))
        var deleted = Self.five
        deleted[0].rows.remove(at: 3)
        #expect(ListChanges.diff(from: Self.five, to: deleted) == ListChanges(rows: .init(deleted: [.init(id: "r4", at: RowPath(section: 0, row: 3))])))
        var updated = Self.five
        updated[0].rows[1].values = ["x": 1]
        #expect(ListChanges.diff(from: Self.five, to: updated) == ListChanges(rows: .init(reloaded: [.init(id: "r2", at: RowPath(section: 0, row: 1))])))
    }

    /// A row that changes section is a move between sections; sections that swap report one
    /// section move and carry their rows.
    @Test func sectionsMoveWithTheirRows() {
        let old = [ListSection(id: "a", rows: [ListRow(id: "1", kind: "c")]), ListSection(id: "b", rows: [ListRow(id: "2", kind: "c")])]
        let swapped = [old[1], old[0]]
        let changes = ListChanges.diff(from: old, to: swapped)
        #expect(changes.sections.moved.count == 1)
        #expect(changes.rows.isEmpty)
        var across = old
        across[1].rows.append(across[0].rows.removeFirst())
        #expect(ListChanges.diff(from: old, to: across).rows.moved == [.init(id: "1", from: RowPath(section: 0, row: 0), to: RowPath(section: 1, row: 1))])
    }

    /// The JSON form: every array present, rows as [section, row].
    @Test func writesEveryArray() {
        var new = Self.five
        new[0].rows.remove(at: 0)
        var writer = JSONWriter()
        ListChanges.diff(from: Self.five, to: new).write(into: &writer)
        #expect(String(decoding: writer.takeBytes(), as: UTF8.self)
            == #"{"sections":{"deleted":[],"inserted":[],"moved":[],"reloaded":[]},"rows":{"deleted":[{"id":"r1","at":[0,0]}],"inserted":[],"moved":[],"reloaded":[]}}"#)
    }

    /// 10,000 rows with one changed: one reload, found in well under a second.
    @Test func largeListsStayCheap() {
        let rows = (0..<10_000).map { ListRow(id: "r\($0)", kind: "cell", values: ["n": .integer($0)]) }
        let old = [ListSection(id: "all", rows: rows)]
        var new = old
        new[0].rows[5_000].values = ["n": -1]
        let changes = ListChanges.diff(from: old, to: new)
        #expect(changes == ListChanges(rows: .init(reloaded: [.init(id: "r5000", at: RowPath(section: 0, row: 5_000))])))
    }
}
