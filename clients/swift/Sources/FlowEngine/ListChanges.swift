// ListChanges: how a screen's list changed between two versions — sections and rows deleted, inserted, moved, reloaded — and the diff that computes it.

import JSON

/// A row's place: its section's index and its index within that section.
public struct RowPath: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var section: Int
    public var row: Int

    public init(section: Int, row: Int) {
        self.section = section
        self.row = row
    }

    public static func < (lhs: RowPath, rhs: RowPath) -> Bool {
        lhs.section != rhs.section ? lhs.section < rhs.section : lhs.row < rhs.row
    }

    /// `[section, row]`, as the state document writes it.
    public var description: String { "[\(section),\(row)]" }
}

/// How one screen's list changed, in UIKit's batch-update terms: what a `UITableView` applies in
/// one `performBatchUpdates` (deletes at old indexes, inserts at new indexes, moves from old to
/// new), then the reloads, at new indexes, once the batch is done.
///
/// Computed by ``diff(from:to:)``: sections and rows are matched by id (Heckel's pass: ids are
/// unique, so every id present in both lists is a match); of the matched ones, those that keep
/// their relative order stay (the longest increasing run of old indexes, in new order), every
/// other one is moved. So inserting, removing or moving one row reports exactly that row.
public struct ListChanges: Sendable, Equatable {
    /// One section or row, by id, at an index.
    public struct Change<Position: Sendable & Equatable>: Sendable, Equatable {
        public var id: String
        public var at: Position

        public init(id: String, at: Position) {
            self.id = id
            self.at = at
        }
    }

    /// One section or row moved, by id, from its old index to its new one.
    public struct Move<Position: Sendable & Equatable>: Sendable, Equatable {
        public var id: String
        public var from: Position
        public var to: Position

        public init(id: String, from: Position, to: Position) {
            self.id = id
            self.from = from
            self.to = to
        }
    }

    /// The changes of one level (sections, or rows).
    public struct Stage<Position: Sendable & Equatable>: Sendable, Equatable {
        /// At old indexes, ascending.
        public var deleted: [Change<Position>] = []
        /// At new indexes, ascending.
        public var inserted: [Change<Position>] = []
        /// From old to new indexes, ascending by new index.
        public var moved: [Move<Position>] = []
        /// At new indexes, ascending: applied after the batch of the other three.
        public var reloaded: [Change<Position>] = []

        public init(deleted: [Change<Position>] = [], inserted: [Change<Position>] = [], moved: [Move<Position>] = [], reloaded: [Change<Position>] = []) {
            self.deleted = deleted
            self.inserted = inserted
            self.moved = moved
            self.reloaded = reloaded
        }

        public var isEmpty: Bool { deleted.isEmpty && inserted.isEmpty && moved.isEmpty && reloaded.isEmpty }
    }

    /// Sections by index.
    public var sections: Stage<Int>
    /// Rows by ``RowPath``. Rows inside an inserted or deleted section are not listed (the
    /// section's change carries them); a row that leaves a deleted section for a kept one is
    /// inserted, one that leaves a kept section for an inserted one is deleted.
    public var rows: Stage<RowPath>

    public init(sections: Stage<Int> = Stage(), rows: Stage<RowPath> = Stage()) {
        self.sections = sections
        self.rows = rows
    }

    public var isEmpty: Bool { sections.isEmpty && rows.isEmpty }
}

/// The list changes of one screen, as a transition carries them.
public struct ScreenListChange: Sendable, Equatable {
    /// The screen's id number (`"e\(id)"`).
    public var id: Int
    public var changes: ListChanges

    public init(id: Int, changes: ListChanges) {
        self.id = id
        self.changes = changes
    }

    /// The screen id as clients see it, such as `"e5"`.
    public var entryId: String { EntryId.screen(id) }
}

extension ListChanges {
    /// The changes that turn `old` into `new`: see the type's documentation and
    /// docs/api.md ("List changes") for the exact rules, which every port follows.
    public static func diff(from old: [ListSection], to new: [ListSection]) -> ListChanges {
        var changes = ListChanges()
        var oldSectionIndex: [String: Int] = [:]
        oldSectionIndex.reserveCapacity(old.count)
        for (index, section) in old.enumerated() { oldSectionIndex[section.id] = index }
        var newSectionIndex: [String: Int] = [:]
        newSectionIndex.reserveCapacity(new.count)
        for (index, section) in new.enumerated() { newSectionIndex[section.id] = index }

        // Sections.
        for (index, section) in old.enumerated() where newSectionIndex[section.id] == nil {
            changes.sections.deleted.append(Change(id: section.id, at: index))
        }
        var keptSections: [(new: Int, old: Int)] = []
        for (index, section) in new.enumerated() {
            if let oldIndex = oldSectionIndex[section.id] {
                keptSections.append((index, oldIndex))
            } else {
                changes.sections.inserted.append(Change(id: section.id, at: index))
            }
        }
        let stayingSections = longestIncreasingRun(keptSections.map(\.old))
        for (position, kept) in keptSections.enumerated() {
            if !stayingSections[position] {
                changes.sections.moved.append(Move(id: new[kept.new].id, from: kept.old, to: kept.new))
            }
            let before = old[kept.old]
            let after = new[kept.new]
            if before.title != after.title || before.indexTitle != after.indexTitle {
                changes.sections.reloaded.append(Change(id: after.id, at: kept.new))
            }
        }

        // Rows. Only sections kept on both sides whose rows differ can hold row changes: a row
        // of a kept section whose rows are all the same stayed there (ids are unique), so those
        // sections are skipped whole (an array shared by both lists compares in constant time).
        var changedOld = [Bool](repeating: false, count: old.count)
        var changedNew = [Bool](repeating: false, count: new.count)
        for kept in keptSections where old[kept.old].rows != new[kept.new].rows {
            changedOld[kept.old] = true
            changedNew[kept.new] = true
        }
        var oldRows: [String: (section: Int, row: Int)] = [:]
        for (sectionIndex, section) in old.enumerated() where changedOld[sectionIndex] {
            for (rowIndex, row) in section.rows.enumerated() { oldRows[row.id] = (sectionIndex, rowIndex) }
        }
        var newRows: Set<String> = []
        for (sectionIndex, section) in new.enumerated() where changedNew[sectionIndex] {
            for row in section.rows { newRows.insert(row.id) }
        }
        // A row of a changed kept section that is in no changed kept section now is gone, or in
        // an inserted section: deleted.
        for (sectionIndex, section) in old.enumerated() where changedOld[sectionIndex] {
            for (rowIndex, row) in section.rows.enumerated() where !newRows.contains(row.id) {
                changes.rows.deleted.append(Change(id: row.id, at: RowPath(section: sectionIndex, row: rowIndex)))
            }
        }
        for (sectionIndex, section) in new.enumerated() where changedNew[sectionIndex] {
            let sameSection = oldSectionIndex[section.id] ?? -1
            // Rows that were in this same section, in new order, with their old index.
            var stayed: [(new: Int, old: Int)] = []
            for (rowIndex, row) in section.rows.enumerated() {
                // Not in a changed kept section before: new, or from a deleted section.
                guard let was = oldRows[row.id] else {
                    changes.rows.inserted.append(Change(id: row.id, at: RowPath(section: sectionIndex, row: rowIndex)))
                    continue
                }
                if was.section == sameSection { stayed.append((rowIndex, was.row)) }
            }
            let staying = longestIncreasingRun(stayed.map(\.old))
            var stayingRows: Set<Int> = []
            stayingRows.reserveCapacity(stayed.count)
            for (position, entry) in stayed.enumerated() where staying[position] { stayingRows.insert(entry.new) }
            for (rowIndex, row) in section.rows.enumerated() {
                guard let was = oldRows[row.id] else { continue }
                let path = RowPath(section: sectionIndex, row: rowIndex)
                if !stayingRows.contains(rowIndex) {
                    changes.rows.moved.append(Move(id: row.id, from: RowPath(section: was.section, row: was.row), to: path))
                }
                let before = old[was.section].rows[was.row]
                if before.kind != row.kind || before.values != row.values {
                    changes.rows.reloaded.append(Change(id: row.id, at: path))
                }
            }
        }
        return changes
    }

    /// Marks the elements of the longest strictly increasing subsequence of `values` (distinct
    /// numbers): patience sorting, scanning left to right, each value replacing the first pile
    /// top greater than it, then following the back links from the last pile. Ties cannot occur,
    /// so the result is the same in every port.
    static func longestIncreasingRun(_ values: [Int]) -> [Bool] {
        var marks = [Bool](repeating: false, count: values.count)
        guard !values.isEmpty else { return marks }
        var tops: [Int] = []  // indexes into values
        var back = [Int](repeating: -1, count: values.count)
        for (index, value) in values.enumerated() {
            var low = 0
            var high = tops.count
            while low < high {
                let middle = (low + high) / 2
                if values[tops[middle]] < value { low = middle + 1 } else { high = middle }
            }
            back[index] = low > 0 ? tops[low - 1] : -1
            if low == tops.count { tops.append(index) } else { tops[low] = index }
        }
        var cursor = tops[tops.count - 1]
        while cursor >= 0 {
            marks[cursor] = true
            cursor = back[cursor]
        }
        return marks
    }
}

extension ListChanges {
    /// Applies the changes to `old` as UIKit would (the batch, then the reloads), taking the
    /// content of inserted and reloaded sections and rows from `new` by id, as a table's data
    /// source gives it; every other row keeps what it had. Returns `nil` when the changes do not
    /// fit `old` (an index out of range, a slot filled twice, an id not where it is said to be).
    ///
    /// When the changes are right, the result equals `new`: the tests check the diff this way,
    /// and a renderer that mirrors a list (``FlowStackClient``'s `RenderedTree`) applies them
    /// with it.
    public func apply(to old: [ListSection], new: [ListSection]) -> [ListSection]? {
        var newSections: [String: ListSection] = [:]
        for section in new { newSections[section.id] = section }
        var newRows: [String: ListRow] = [:]
        for section in new { for row in section.rows { newRows[row.id] = row } }

        // Sections: inserted and moved at their new indexes, the rest in old order.
        let deletedSections = Set(sections.deleted.map(\.at))
        guard deletedSections.count == sections.deleted.count,
            sections.deleted.allSatisfy({ old.indices.contains($0.at) && old[$0.at].id == $0.id })
        else { return nil }
        let count = old.count - sections.deleted.count + sections.inserted.count
        guard count >= 0 else { return nil }
        enum Slot { case inserted(String), old(Int) }
        var slots = [Slot?](repeating: nil, count: count)
        for change in sections.inserted {
            guard slots.indices.contains(change.at), slots[change.at] == nil else { return nil }
            slots[change.at] = .inserted(change.id)
        }
        var movedFrom: Set<Int> = []
        for move in sections.moved {
            guard slots.indices.contains(move.to), slots[move.to] == nil, old.indices.contains(move.from),
                old[move.from].id == move.id, !deletedSections.contains(move.from), movedFrom.insert(move.from).inserted
            else { return nil }
            slots[move.to] = .old(move.from)
        }
        var rest = old.indices.filter { !deletedSections.contains($0) && !movedFrom.contains($0) }.makeIterator()
        for index in slots.indices where slots[index] == nil {
            guard let next = rest.next() else { return nil }
            slots[index] = .old(next)
        }
        guard rest.next() == nil else { return nil }

        // Rows leaving each old section, and arriving in each new one.
        var leaving: [Int: Set<Int>] = [:]
        for change in rows.deleted {
            guard old.indices.contains(change.at.section), old[change.at.section].rows.indices.contains(change.at.row),
                old[change.at.section].rows[change.at.row].id == change.id,
                leaving[change.at.section, default: []].insert(change.at.row).inserted
            else { return nil }
        }
        var arriving: [Int: [Int: ListRow]] = [:]
        for change in rows.inserted {
            guard let row = newRows[change.id], row.id == change.id, arriving[change.at.section]?[change.at.row] == nil else { return nil }
            arriving[change.at.section, default: [:]][change.at.row] = row
        }
        for move in rows.moved {
            guard old.indices.contains(move.from.section), old[move.from.section].rows.indices.contains(move.from.row),
                old[move.from.section].rows[move.from.row].id == move.id,
                leaving[move.from.section, default: []].insert(move.from.row).inserted,
                arriving[move.to.section]?[move.to.row] == nil
            else { return nil }
            arriving[move.to.section, default: [:]][move.to.row] = old[move.from.section].rows[move.from.row]
        }

        var result: [ListSection] = []
        result.reserveCapacity(count)
        for (index, slot) in slots.enumerated() {
            switch slot {
            case .inserted(let id):
                guard let section = newSections[id], arriving[index] == nil else { return nil }
                result.append(section)
            case .old(let oldIndex):
                var section = old[oldIndex]
                let gone = leaving[oldIndex] ?? []
                let kept = section.rows.indices.filter { !gone.contains($0) }.map { section.rows[$0] }
                let incoming = arriving[index] ?? [:]
                var filled = [ListRow?](repeating: nil, count: kept.count + incoming.count)
                for (at, row) in incoming {
                    guard filled.indices.contains(at) else { return nil }
                    filled[at] = row
                }
                var next = kept.makeIterator()
                for at in filled.indices where filled[at] == nil { filled[at] = next.next() }
                section.rows = filled.compactMap { $0 }
                guard section.rows.count == filled.count else { return nil }
                result.append(section)
            case nil:
                return nil
            }
        }
        // A deleted old section's rows must not be moved anywhere (UIKit refuses it).
        for section in deletedSections where leaving[section]?.isEmpty == false { return nil }

        for change in sections.reloaded {
            guard result.indices.contains(change.at), result[change.at].id == change.id, let fresh = newSections[change.id] else { return nil }
            result[change.at].title = fresh.title
            result[change.at].indexTitle = fresh.indexTitle
        }
        for change in rows.reloaded {
            guard result.indices.contains(change.at.section), result[change.at.section].rows.indices.contains(change.at.row),
                result[change.at.section].rows[change.at.row].id == change.id, let fresh = newRows[change.id]
            else { return nil }
            result[change.at.section].rows[change.at.row] = fresh
        }
        return result
    }
}

extension ListChanges {
    /// Writes `{"sections": {"deleted","inserted","moved","reloaded"}, "rows": {…}}`: every
    /// array present, possibly empty; a section change is `{"id","at"}` (a move `{"id","from","to"}`)
    /// and a row's index is `[section, row]`.
    public func write(into writer: inout JSONWriter) {
        writer.beginObject()
        writer.writeKey(literal: "sections")
        writeStage(sections: true, into: &writer)
        writer.writeKey(literal: "rows")
        writeStage(sections: false, into: &writer)
        writer.endObject()
    }

    /// Writes the sections' stage, or the rows'.
    func writeStage(sections: Bool, into writer: inout JSONWriter) {
        if sections {
            Self.write(self.sections, into: &writer) { index, writer in writer.writeInteger(index) }
        } else {
            Self.write(rows, into: &writer) { path, writer in
                writer.beginArray()
                writer.writeInteger(path.section)
                writer.writeInteger(path.row)
                writer.endArray()
            }
        }
    }

    private static func write<Position>(
        _ stage: Stage<Position>, into writer: inout JSONWriter, position: (Position, inout JSONWriter) -> Void
    ) {
        func changes(_ key: String, _ list: [Change<Position>], _ writer: inout JSONWriter) {
            writer.writeKey(key)
            writer.beginArray()
            for change in list {
                writer.beginObject()
                writer.writeKey(literal: "id")
                writer.writeString(change.id)
                writer.writeKey(literal: "at")
                position(change.at, &writer)
                writer.endObject()
            }
            writer.endArray()
        }
        writer.beginObject()
        changes("deleted", stage.deleted, &writer)
        changes("inserted", stage.inserted, &writer)
        writer.writeKey(literal: "moved")
        writer.beginArray()
        for move in stage.moved {
            writer.beginObject()
            writer.writeKey(literal: "id")
            writer.writeString(move.id)
            writer.writeKey(literal: "from")
            position(move.from, &writer)
            writer.writeKey(literal: "to")
            position(move.to, &writer)
            writer.endObject()
        }
        writer.endArray()
        changes("reloaded", stage.reloaded, &writer)
        writer.endObject()
    }
}
