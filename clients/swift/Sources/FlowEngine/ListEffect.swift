// ListEffect: an effect on a screen's list (set sections or rows, insert, remove, move, update a row), as definitions write it, and how it changes the list.

import JSON

/// An effect on the list of a screen still in the tree: by default the screen the action came
/// from, or with `screen` the topmost screen in `screens` showing that feature (a list under the
/// form that adds to it).
///
/// Every value may be `{"$param": name}` (whole, or inside a row's `values`), replaced by the
/// action's param as `result` values are:
///
/// ```json
/// {"setSections": {"sections": {"$param": "sections"}}}
/// {"setRows": {"section": "FR", "rows": [{"id": "a1", "kind": "address.row", "values": {…}}]}}
/// {"insertRow": {"screen": "address.list", "section": {"$param": "country"}, "at": 0,
///                "row": {"id": {"$param": "id"}, "kind": "address.row", "values": {"$param": "address"}}}}
/// {"removeRow": {"row": {"$param": "row.id"}}}
/// {"moveRow": {"row": "a1", "section": "DE", "at": 0}}
/// {"updateRow": {"row": "a1", "values": {"default": true}}}
/// ```
public struct ListEffect: Sendable, Equatable {
    /// The feature of the screen whose list changes; `nil` for the screen the action came from.
    public var screen: String?
    public var operation: Operation

    public init(screen: String? = nil, operation: Operation) {
        self.screen = screen
        self.operation = operation
    }

    /// What changes. Values are JSON as written (they may hold `{"$param": name}`), checked when
    /// the definition is read and again once params are filled in.
    public enum Operation: Sendable, Equatable {
        /// Replaces the whole list.
        case setSections(JSONValue)
        /// Replaces the rows of one section.
        case setRows(section: JSONValue, rows: JSONValue)
        /// Inserts a row into a section at `at` (0 is first; absent: last).
        case insertRow(section: JSONValue, row: JSONValue, at: JSONValue?)
        /// Removes a row.
        case removeRow(row: JSONValue)
        /// Moves a row to `section` (absent: its own) at `at` (absent: last), counted once the
        /// row has been taken out.
        case moveRow(row: JSONValue, section: JSONValue?, at: JSONValue?)
        /// Overlays `values` on the row's values, member by member (a member set to null stays null).
        case updateRow(row: JSONValue, values: JSONValue)
    }

    /// The effect's name as written in definitions.
    public var name: String {
        switch operation {
        case .setSections: return "setSections"
        case .setRows: return "setRows"
        case .insertRow: return "insertRow"
        case .removeRow: return "removeRow"
        case .moveRow: return "moveRow"
        case .updateRow: return "updateRow"
        }
    }

    /// Every list effect's name.
    public static let names = ["setSections", "setRows", "insertRow", "removeRow", "moveRow", "updateRow"]

    /// The row kinds written literally in the effect (rows given whole by a param are the
    /// client's, and cannot be known in advance).
    public var literalKinds: [String] {
        func kinds(ofRows value: JSONValue) -> [String] {
            value.arrayValue?.compactMap { $0.objectValue?["kind"]?.stringValue } ?? []
        }
        switch operation {
        case .setSections(let sections):
            return sections.arrayValue?.flatMap { kinds(ofRows: $0.objectValue?["rows"] ?? .null) } ?? []
        case .setRows(_, let rows):
            return kinds(ofRows: rows)
        case .insertRow(_, let row, _):
            return row.objectValue?["kind"]?.stringValue.map { [$0] } ?? []
        case .removeRow, .moveRow, .updateRow:
            return []
        }
    }
}

/// A list operation with its params filled in and checked, ready to apply.
enum ResolvedListOperation {
    case setSections([ListSection])
    case setRows(section: String, rows: [ListRow])
    case insertRow(section: String, row: ListRow, at: Int?)
    case removeRow(String)
    case moveRow(String, section: String?, at: Int?)
    case updateRow(String, values: JSONObject)

    /// Applies the operation to `sections`; the reason it cannot, for a refusal.
    func apply(to sections: inout [ListSection]) -> String? {
        func sectionIndex(_ id: String) -> Int? { sections.firstIndex { $0.id == id } }
        func noSection(_ id: String) -> String {
            "the list has no section \(JSONValue.string(id).abbreviatedJSON(limit: 40)); its sections are \(sections.map(\.id).prefix(8).joined(separator: ", "))"
        }
        func noRow(_ id: String) -> String { "the list has no row \(JSONValue.string(id).abbreviatedJSON(limit: 40))" }
        let rowCount = sections.reduce(0) { $0 + $1.rows.count }
        switch self {
        case .setSections(let replacement):
            sections = replacement
        case .setRows(let id, let rows):
            guard let index = sectionIndex(id) else { return noSection(id) }
            let others = Set(sections.enumerated().filter { $0.offset != index }.flatMap { $0.element.rows.map(\.id) })
            if let clash = rows.first(where: { others.contains($0.id) }) {
                return "row \(JSONValue.string(clash.id).abbreviatedJSON(limit: 40)) is already in another section; row ids are unique within a list"
            }
            guard rowCount - sections[index].rows.count + rows.count <= ScreenList.maxRows else {
                return "the list would hold more than \(ScreenList.maxRows) rows"
            }
            sections[index].rows = rows
        case .insertRow(let id, let row, let at):
            guard let index = sectionIndex(id) else { return noSection(id) }
            guard ScreenList.place(ofRow: row.id, in: sections) == nil else {
                return "row \(JSONValue.string(row.id).abbreviatedJSON(limit: 40)) is already in the list; row ids are unique within a list (updateRow changes one)"
            }
            guard rowCount < ScreenList.maxRows else { return "the list already holds \(ScreenList.maxRows) rows" }
            let position = at ?? sections[index].rows.count
            guard position >= 0, position <= sections[index].rows.count else {
                return "at \(position) is out of range: section \(JSONValue.string(id).abbreviatedJSON(limit: 40)) has \(sections[index].rows.count) rows (0...\(sections[index].rows.count))"
            }
            sections[index].rows.insert(row, at: position)
        case .removeRow(let id):
            guard let place = ScreenList.place(ofRow: id, in: sections) else { return noRow(id) }
            sections[place.section].rows.remove(at: place.row)
        case .moveRow(let id, let target, let at):
            guard let place = ScreenList.place(ofRow: id, in: sections) else { return noRow(id) }
            let destination: Int
            if let target {
                guard let index = sectionIndex(target) else { return noSection(target) }
                destination = index
            } else {
                destination = place.section
            }
            let row = sections[place.section].rows.remove(at: place.row)
            let position = at ?? sections[destination].rows.count
            guard position >= 0, position <= sections[destination].rows.count else {
                return "at \(position) is out of range: once the row is taken out, section \(JSONValue.string(sections[destination].id).abbreviatedJSON(limit: 40)) has \(sections[destination].rows.count) rows"
            }
            sections[destination].rows.insert(row, at: position)
        case .updateRow(let id, let values):
            guard let place = ScreenList.place(ofRow: id, in: sections) else { return noRow(id) }
            for member in values.members { sections[place.section].rows[place.row].values[member.key] = member.value }
        }
        return nil
    }
}
