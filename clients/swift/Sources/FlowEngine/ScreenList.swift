// ScreenList: a screen's list as data — sections of rows, each row a stable id, a cell kind and its values.

import JSON

/// One row of a screen's list: `{"id": "home", "kind": "address.row", "values": {"city": "Lyon"}}`.
///
/// `id` is stable across versions and unique within the screen's whole list (every section), so
/// a change of the list is reported by id (``ListChanges``) and a tap names the row it hit.
/// `kind` is the cell the app registers for it, and a feature for capabilities, as a screen's
/// feature is: a client must list it in its `features` to be served a flow version that shows it.
public struct ListRow: Sendable, Equatable, Identifiable {
    public var id: String
    public var kind: String
    /// What the cell shows; any JSON object. A row whose kind or values change is reloaded.
    public var values: JSONObject

    public init(id: String, kind: String, values: JSONObject = [:]) {
        self.id = id
        self.kind = kind
        self.values = values
    }
}

/// One section of a screen's list: `{"id": "FR", "title"?: "France", "indexTitle"?: "F", "rows": […]}`.
///
/// Sections and rows are `Identifiable` by their ids, so a SwiftUI `List` over them
/// (`ForEach(sections) { Section { ForEach($0.rows) { … } } }`) animates changes by id itself.
public struct ListSection: Sendable, Equatable, Identifiable {
    /// Unique among the list's sections.
    public var id: String
    /// The header; a section whose title or index title changes is reloaded.
    public var title: String?
    /// The entry of the table's index (UIKit's `sectionIndexTitles`).
    public var indexTitle: String?
    public var rows: [ListRow]

    public init(id: String, title: String? = nil, indexTitle: String? = nil, rows: [ListRow] = []) {
        self.id = id
        self.title = title
        self.indexTitle = indexTitle
        self.rows = rows
    }
}

/// Why a list could not be read: the pointer, relative to the list, and what was expected.
public struct ListProblem: Error, Sendable, Equatable {
    public var pointer: JSONPointer
    public var message: String
    /// The list is well formed but over one of the size caps (``ScreenList/maxRowBytes``,
    /// ``ScreenList/maxValuesDepth``, ``ScreenList/maxListBytes``): an action whose effects make
    /// it so is refused as `list-too-large`, not as malformed params.
    public var isTooLarge: Bool

    public init(pointer: JSONPointer, message: String, isTooLarge: Bool = false) {
        self.pointer = pointer
        self.message = message
        self.isTooLarge = isTooLarge
    }
}

/// Reading and writing lists: the one shape used by definitions, params, the state document and
/// storage.
public enum ScreenList {
    /// At most this many rows in one screen's list (and this many sections).
    public static let maxRows = 10_000
    /// Ids, kinds and titles are strings of 1 to 200 characters (titles may be empty).
    static let maxText = 200
    /// At most this many bytes in one row, `{"id","kind","values"}` as the state document writes
    /// it: a row is one cell's data, and 64 KiB is the longest string a request body may hold.
    public static let maxRowBytes = 64 << 10
    /// A row's values nest at most this many levels (the values object itself is the first):
    /// without it, `updateRow` with `{"$param": "row.values"}` inside its values nests one level
    /// deeper on every tap.
    public static let maxValuesDepth = 16
    /// At most this many bytes in a screen's whole list (its rows as written): 1 MiB, the largest
    /// body the server takes by default, so a list never outgrows what one request could have
    /// sent, however many actions built it (a row's values fed back into `updateRow` twice
    /// double it on every tap).
    public static let maxListBytes = 1 << 20

    /// Reads `[{"id", "title"?, "indexTitle"?, "rows": [{"id", "kind", "values"?}]}]`: unknown keys
    /// are refused, section ids are unique, row ids unique across the whole list.
    public static func readSections(_ value: JSONValue) throws(ListProblem) -> [ListSection] {
        let root = JSONPointer()
        guard let elements = value.arrayValue else {
            throw ListProblem(pointer: root, message: "sections must be an array of {\"id\", \"title\"?, \"indexTitle\"?, \"rows\"}; found \(value.typeName)")
        }
        guard elements.count <= maxRows else {
            throw ListProblem(pointer: root, message: "a list has at most \(maxRows) sections; found \(elements.count)")
        }
        var sections: [ListSection] = []
        sections.reserveCapacity(elements.count)
        var sectionIds: Set<String> = []
        var rowIds: Set<String> = []
        for (index, element) in elements.enumerated() {
            let path = root.appending(index)
            let section = try readSection(element, at: path)
            guard sectionIds.insert(section.id).inserted else {
                throw ListProblem(pointer: path.appending("id"), message: "section id \(JSONValue.string(section.id).abbreviatedJSON()) is used twice; section ids are unique within a list")
            }
            for (rowIndex, row) in section.rows.enumerated() where !rowIds.insert(row.id).inserted {
                throw ListProblem(
                    pointer: path.appending("rows").appending(rowIndex).appending("id"),
                    message: "row id \(JSONValue.string(row.id).abbreviatedJSON()) is used twice; row ids are unique within a screen's list, across its sections")
            }
            guard rowIds.count <= maxRows else {
                throw ListProblem(pointer: path.appending("rows"), message: "a list has at most \(maxRows) rows")
            }
            sections.append(section)
        }
        if let problem = sizeProblem(of: sections) { throw problem }
        return sections
    }

    /// The first size cap `sections` is over, in order: a row whose values nest more than
    /// ``maxValuesDepth`` levels or that takes more than ``maxRowBytes``, then the list once its
    /// rows so far take more than ``maxListBytes``. Every list the engine reads or makes is
    /// checked, so no path (definitions, params, effects, `updateRow`, storage) grows one past them.
    public static func sizeProblem(of sections: [ListSection]) -> ListProblem? {
        var total = 0
        for (sectionIndex, section) in sections.enumerated() {
            for (rowIndex, row) in section.rows.enumerated() {
                let path = JSONPointer().appending(sectionIndex).appending("rows").appending(rowIndex)
                let name = JSONValue.string(row.id).abbreviatedJSON(limit: 40)
                if nestsDeeper(.object(row.values), than: maxValuesDepth) {
                    return ListProblem(
                        pointer: path.appending("values"),
                        message: "the values of row \(name) nest more than \(maxValuesDepth) levels deep; a row's values nest at most \(maxValuesDepth)",
                        isTooLarge: true)
                }
                // A writer of its own: a shared one would count the commas between rows.
                var writer = JSONWriter()
                write(row, into: &writer)
                let bytes = writer.count
                guard bytes <= maxRowBytes else {
                    return ListProblem(
                        pointer: path,
                        message: "row \(name) takes \(bytes) bytes as JSON; a row takes at most \(maxRowBytes)",
                        isTooLarge: true)
                }
                total += bytes
                guard total <= maxListBytes else {
                    return ListProblem(
                        pointer: JSONPointer(),
                        message: "the list's rows take more than \(maxListBytes) bytes as JSON; a list takes at most \(maxListBytes)",
                        isTooLarge: true)
                }
            }
        }
        return nil
    }

    /// Whether `value` nests arrays and objects more than `limit` levels deep (a scalar is none),
    /// looking no deeper than the limit.
    static func nestsDeeper(_ value: JSONValue, than limit: Int) -> Bool {
        switch value {
        case .object(let object): return limit == 0 || object.members.contains { nestsDeeper($0.value, than: limit - 1) }
        case .array(let elements): return limit == 0 || elements.contains { nestsDeeper($0, than: limit - 1) }
        default: return false
        }
    }

    static func readSection(_ value: JSONValue, at path: JSONPointer) throws(ListProblem) -> ListSection {
        guard let object = value.objectValue else {
            throw ListProblem(pointer: path, message: "a section is {\"id\", \"title\"?, \"indexTitle\"?, \"rows\"}; found \(value.typeName)")
        }
        try checkKeys(object, ["id", "title", "indexTitle", "rows"], at: path, what: "a section")
        let id = try readId(object["id"], at: path.appending("id"), what: "a section")
        var title: String?
        if let raw = object["title"], !raw.isNull { title = try readTitle(raw, at: path.appending("title")) }
        var indexTitle: String?
        if let raw = object["indexTitle"], !raw.isNull { indexTitle = try readTitle(raw, at: path.appending("indexTitle")) }
        guard let rawRows = object["rows"] else {
            throw ListProblem(pointer: path, message: "a section needs \"rows\": an array of rows, possibly empty")
        }
        return ListSection(id: id, title: title, indexTitle: indexTitle, rows: try readRows(rawRows, at: path.appending("rows")))
    }

    /// Reads an array of rows (ids unique among them).
    public static func readRows(_ value: JSONValue, at path: JSONPointer = JSONPointer()) throws(ListProblem) -> [ListRow] {
        guard let elements = value.arrayValue else {
            throw ListProblem(pointer: path, message: "rows must be an array of {\"id\", \"kind\", \"values\"?}; found \(value.typeName)")
        }
        guard elements.count <= maxRows else {
            throw ListProblem(pointer: path, message: "a list has at most \(maxRows) rows; found \(elements.count)")
        }
        var rows: [ListRow] = []
        rows.reserveCapacity(elements.count)
        var ids: Set<String> = []
        for (index, element) in elements.enumerated() {
            let row = try readRow(element, at: path.appending(index))
            guard ids.insert(row.id).inserted else {
                throw ListProblem(pointer: path.appending(index).appending("id"), message: "row id \(JSONValue.string(row.id).abbreviatedJSON()) is used twice; row ids are unique within a screen's list")
            }
            rows.append(row)
        }
        return rows
    }

    /// Reads one row `{"id", "kind", "values"?}` (`values` defaults to `{}`).
    public static func readRow(_ value: JSONValue, at path: JSONPointer = JSONPointer()) throws(ListProblem) -> ListRow {
        guard let object = value.objectValue else {
            throw ListProblem(pointer: path, message: "a row is {\"id\", \"kind\", \"values\"?}; found \(value.typeName)")
        }
        try checkKeys(object, ["id", "kind", "values"], at: path, what: "a row")
        let id = try readId(object["id"], at: path.appending("id"), what: "a row")
        let kind = try readId(object["kind"], at: path.appending("kind"), what: "a row's kind (the cell the app registers, such as \"address.row\")")
        var values = JSONObject()
        if let raw = object["values"], !raw.isNull {
            guard let object = raw.objectValue else {
                throw ListProblem(pointer: path.appending("values"), message: "values must be an object; found \(raw.typeName)")
            }
            values = object
        }
        return ListRow(id: id, kind: kind, values: values)
    }

    /// A row or section id (or a kind): a string of 1 to 200 characters.
    public static func readId(_ value: JSONValue?, at path: JSONPointer, what: String) throws(ListProblem) -> String {
        guard let value else { throw ListProblem(pointer: path, message: "\(what) needs \(path.tokens.last ?? "id")") }
        guard let text = value.stringValue, !text.isEmpty, text.unicodeScalars.count <= maxText else {
            throw ListProblem(pointer: path, message: "\(path.tokens.last ?? "id") must be a string of 1 to \(maxText) characters; found \(value.abbreviatedJSON(limit: 40))")
        }
        return text
    }

    private static func readTitle(_ value: JSONValue, at path: JSONPointer) throws(ListProblem) -> String {
        guard let text = value.stringValue, text.unicodeScalars.count <= maxText else {
            throw ListProblem(pointer: path, message: "\(path.tokens.last ?? "title") must be a string of at most \(maxText) characters; found \(value.abbreviatedJSON(limit: 40))")
        }
        return text
    }

    private static func checkKeys(_ object: JSONObject, _ allowed: [String], at path: JSONPointer, what: String) throws(ListProblem) {
        for member in object.members where !allowed.contains(member.key) {
            throw ListProblem(
                pointer: path.appending(member.key),
                message: "unknown key \(JSONValue.string(member.key).abbreviatedJSON()) in \(what); expected \(allowed.joined(separator: ", "))")
        }
    }

    /// Writes `[{"id","title"?,"indexTitle"?,"rows":[{"id","kind","values"}]}]`, members in this
    /// order, `title` and `indexTitle` only when set: the state document and storage alike.
    public static func write(_ sections: [ListSection], into writer: inout JSONWriter) {
        writer.beginArray()
        for section in sections {
            writer.beginObject()
            writer.writeKey(literal: "id")
            writer.writeString(section.id)
            if let title = section.title {
                writer.writeKey(literal: "title")
                writer.writeString(title)
            }
            if let indexTitle = section.indexTitle {
                writer.writeKey(literal: "indexTitle")
                writer.writeString(indexTitle)
            }
            writer.writeKey(literal: "rows")
            writer.beginArray()
            for row in section.rows { write(row, into: &writer) }
            writer.endArray()
            writer.endObject()
        }
        writer.endArray()
    }

    /// Writes `{"id","kind","values"}`.
    public static func write(_ row: ListRow, into writer: inout JSONWriter) {
        writer.beginObject()
        writer.writeKey(literal: "id")
        writer.writeString(row.id)
        writer.writeKey(literal: "kind")
        writer.writeString(row.kind)
        writer.writeKey(literal: "values")
        writer.writeObject(row.values)
        writer.endObject()
    }

    /// The sections as a JSON value, as ``write(_:into:)`` writes them.
    public static func json(_ sections: [ListSection]) -> JSONValue {
        .array(sections.map { section in
            var object = JSONObject()
            object["id"] = .string(section.id)
            if let title = section.title { object["title"] = .string(title) }
            if let indexTitle = section.indexTitle { object["indexTitle"] = .string(indexTitle) }
            object["rows"] = .array(section.rows.map(json))
            return .object(object)
        })
    }

    /// The row as a JSON value: `{"id","kind","values"}`.
    public static func json(_ row: ListRow) -> JSONValue {
        .object(["id": .string(row.id), "kind": .string(row.kind), "values": .object(row.values)])
    }

    /// Where the row `id` is: its section's index and its index in that section.
    public static func place(ofRow id: String, in sections: [ListSection]) -> RowPath? {
        for (sectionIndex, section) in sections.enumerated() {
            if let rowIndex = section.rows.firstIndex(where: { $0.id == id }) {
                return RowPath(section: sectionIndex, row: rowIndex)
            }
        }
        return nil
    }
}
