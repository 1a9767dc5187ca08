// DefinitionReader+lists: reading lists as definitions write them — a screen's `sections`, the list effects, a rule's `row` — where values may be `{"$param": name}`.

import JSON

extension DefinitionReader {
    /// A screen target's `sections`: static (checked whole, as the engine will read it), or, in
    /// effects, with `{"$param": name}` for the whole list, a section's `rows`, a row, or any id,
    /// title or values (checked once params are filled in). With `referencesChecked`, the caller
    /// has recorded the value's param references already (a list effect checks its whole
    /// argument), so an undeclared one is reported once.
    mutating func readSectionsTemplate(
        _ value: JSONValue, at path: JSONPointer, allowParamReferences: Bool, referencesChecked: Bool = false
    ) -> JSONValue? {
        let before = problems.count
        if !referencesChecked { checkParamReferences(value, at: path, allowed: allowParamReferences) }
        guard problems.count == before else { return nil }
        if Self.isReference(value) { return value }
        guard let elements = value.arrayValue else {
            report(path, "sections must be an array of {\"id\", \"title\"?, \"indexTitle\"?, \"rows\"}, or {\"$param\": name}; found \(value.typeName)")
            return nil
        }
        var sectionIds: Set<String> = []
        var rowIds: Set<String> = []
        for (index, element) in elements.enumerated() {
            let sectionPath = path.appending(index)
            guard let section = element.objectValue else {
                report(sectionPath, "a section is {\"id\", \"title\"?, \"indexTitle\"?, \"rows\"}; found \(element.typeName)")
                continue
            }
            checkKeys(section, allowed: ["id", "title", "indexTitle", "rows"], at: sectionPath, what: "a section")
            if let id = readListId(section["id"], at: sectionPath.appending("id"), what: "a section"), !sectionIds.insert(id).inserted {
                report(sectionPath.appending("id"), "section id \(JSONValue.string(id).abbreviatedJSON()) is used twice; section ids are unique within a list")
            }
            for key in ["title", "indexTitle"] {
                if let title = section[key], title.stringValue == nil, !Self.isReference(title), !title.isNull {
                    report(sectionPath.appending(key), "\(key) must be a string; found \(title.typeName)")
                }
            }
            guard let rows = section["rows"] else {
                report(sectionPath, "a section needs \"rows\": an array of rows, possibly empty")
                continue
            }
            readRowsTemplate(rows, at: sectionPath.appending("rows"), ids: &rowIds)
        }
        let literalRows = elements.reduce(0) { $0 + ($1.objectValue?["rows"]?.arrayValue?.count ?? 0) }
        if literalRows > ScreenList.maxRows {
            report(path, "a list has at most \(ScreenList.maxRows) rows, across its sections; found \(literalRows)")
        }
        // A list written out whole is held to the size caps now, as the engine would hold it.
        if problems.count == before, !EffectRun.containsReference(value) {
            do throws(ListProblem) {
                _ = try ScreenList.readSections(value)
            } catch where error.isTooLarge {
                report(JSONPointer(path.tokens + error.pointer.tokens), error.message)
            } catch {}  // the checks above report a malformed list themselves
        }
        return problems.count == before ? value : nil
    }

    /// An array of rows, or a reference.
    mutating func readRowsTemplate(_ value: JSONValue, at path: JSONPointer, ids: inout Set<String>) {
        if Self.isReference(value) { return }
        guard let elements = value.arrayValue else {
            report(path, "rows must be an array of {\"id\", \"kind\", \"values\"?}, or {\"$param\": name}; found \(value.typeName)")
            return
        }
        if elements.count > ScreenList.maxRows {
            report(path, "a list has at most \(ScreenList.maxRows) rows; found \(elements.count)")
            return
        }
        for (index, element) in elements.enumerated() {
            if let id = readRowTemplate(element, at: path.appending(index)), !ids.insert(id).inserted {
                report(path.appending(index).appending("id"), "row id \(JSONValue.string(id).abbreviatedJSON()) is used twice; row ids are unique within a screen's list, across its sections")
            }
        }
    }

    /// A row `{"id", "kind", "values"?}`, or a reference; returns its literal id.
    @discardableResult
    mutating func readRowTemplate(_ value: JSONValue, at path: JSONPointer) -> String? {
        if Self.isReference(value) { return nil }
        guard let row = value.objectValue else {
            report(path, "a row is {\"id\", \"kind\", \"values\"?}; found \(value.typeName)")
            return nil
        }
        checkKeys(row, allowed: ["id", "kind", "values"], at: path, what: "a row")
        let id = readListId(row["id"], at: path.appending("id"), what: "a row")
        if let kind = row["kind"] {
            // Kinds are written out, so the catalog knows which cells an app must have.
            if kind.stringValue == nil || kind.stringValue?.isEmpty == true || (kind.stringValue?.unicodeScalars.count ?? 0) > 200 {
                report(path.appending("kind"), "kind must be the cell's name, a string of 1 to 200 characters such as \"address.row\" (written out, not a param, so capabilities can check it); found \(kind.abbreviatedJSON(limit: 40))")
            }
        } else {
            report(path, "a row needs \"kind\": the cell the app registers for it, such as \"address.row\"")
        }
        if let values = row["values"], values.objectValue == nil, !Self.isReference(values), !values.isNull {
            report(path.appending("values"), "values must be an object; found \(values.typeName)")
        }
        return id
    }

    /// A section or row id: a string of 1 to 200 characters, or a reference (then `nil`).
    mutating func readListId(_ value: JSONValue?, at path: JSONPointer, what: String) -> String? {
        guard let value else {
            report(path.dropLastToken, "\(what) needs \"\(path.tokens.last ?? "id")\"")
            return nil
        }
        if Self.isReference(value) { return nil }
        guard let text = value.stringValue, !text.isEmpty, text.unicodeScalars.count <= 200 else {
            report(path, "\(path.tokens.last ?? "id") must be a string of 1 to 200 characters or {\"$param\": name}; found \(value.abbreviatedJSON(limit: 40))")
            return nil
        }
        return text
    }

    /// A position: an integer from 0, or a reference.
    mutating func readListIndex(_ value: JSONValue, at path: JSONPointer) {
        if Self.isReference(value) { return }
        guard let index = value.integerValue, index >= 0 else {
            report(path, "at must be an index from 0 (0 is first) or {\"$param\": name}; found \(value.abbreviatedJSON(limit: 40))")
            return
        }
    }

    static func isReference(_ value: JSONValue) -> Bool {
        guard let object = value.objectValue, object.count == 1, let name = object["$param"]?.stringValue else { return false }
        return !name.isEmpty
    }

    /// `setSections`, `setRows`, `insertRow`, `removeRow`, `moveRow`, `updateRow`.
    mutating func readListEffect(_ name: String, _ argument: JSONValue, at path: JSONPointer) -> FlowEffect? {
        guard let object = argument.objectValue else {
            report(path, "\(name) takes an object, such as \(Self.listEffectExamples[name] ?? "{}"); found \(argument.typeName)")
            return nil
        }
        let before = problems.count
        let keys: [String]
        switch name {
        case "setSections": keys = ["screen", "sections"]
        case "setRows": keys = ["screen", "section", "rows"]
        case "insertRow": keys = ["screen", "section", "row", "at"]
        case "removeRow": keys = ["screen", "row"]
        case "moveRow": keys = ["screen", "row", "section", "at"]
        default: keys = ["screen", "row", "values"]
        }
        checkKeys(object, allowed: keys, at: path, what: name)
        for key in keys where key != "screen" && key != "at" && !(name == "moveRow" && key == "section") && object[key] == nil {
            report(path, "\(name) needs \"\(key)\", as in \(Self.listEffectExamples[name] ?? "")")
        }
        checkParamReferences(argument, at: path, allowed: true)
        guard problems.count == before else { return nil }
        var screen: String?
        if let raw = object["screen"] { screen = readFeature(raw, at: path.appending("screen")) }
        let operation: ListEffect.Operation
        switch name {
        case "setSections":
            guard let sections = object["sections"], readSectionsTemplate(sections, at: path.appending("sections"), allowParamReferences: true, referencesChecked: true) != nil else {
                return nil
            }
            operation = .setSections(sections)
        case "setRows":
            guard let section = object["section"], let rows = object["rows"] else { return nil }
            _ = readListId(section, at: path.appending("section"), what: name)
            var ids: Set<String> = []
            readRowsTemplate(rows, at: path.appending("rows"), ids: &ids)
            operation = .setRows(section: section, rows: rows)
        case "insertRow":
            guard let section = object["section"], let row = object["row"] else { return nil }
            _ = readListId(section, at: path.appending("section"), what: name)
            readRowTemplate(row, at: path.appending("row"))
            if let at = object["at"] { readListIndex(at, at: path.appending("at")) }
            operation = .insertRow(section: section, row: row, at: object["at"])
        case "removeRow":
            guard let row = object["row"] else { return nil }
            _ = readListId(row, at: path.appending("row"), what: name)
            operation = .removeRow(row: row)
        case "moveRow":
            guard let row = object["row"] else { return nil }
            _ = readListId(row, at: path.appending("row"), what: name)
            if let section = object["section"] { _ = readListId(section, at: path.appending("section"), what: name) }
            if let at = object["at"] { readListIndex(at, at: path.appending("at")) }
            operation = .moveRow(row: row, section: object["section"], at: object["at"])
        default:
            guard let row = object["row"], let values = object["values"] else { return nil }
            _ = readListId(row, at: path.appending("row"), what: name)
            if values.objectValue == nil {
                report(path.appending("values"), "values must be an object of the values to change, or {\"$param\": name}; found \(values.typeName)")
            }
            operation = .updateRow(row: row, values: values)
        }
        guard problems.count == before else { return nil }
        return .list(ListEffect(screen: screen, operation: operation))
    }

    static let listEffectExamples = [
        "setSections": #"{"sections": [{"id": "FR", "rows": []}]}"#,
        "setRows": #"{"section": "FR", "rows": {"$param": "rows"}}"#,
        "insertRow": #"{"section": "FR", "row": {"id": {"$param": "id"}, "kind": "address.row", "values": {"$param": "address"}}}"#,
        "removeRow": #"{"row": {"$param": "row.id"}}"#,
        "moveRow": #"{"row": "a1", "section": "DE", "at": 0}"#,
        "updateRow": #"{"row": "a1", "values": {"default": true}}"#,
    ]

    /// A rule's `row`: the kind, or kinds, of the tapped row the rule matches.
    mutating func readRowKinds(_ value: JSONValue, at path: JSONPointer) -> [String]? {
        guard let elements = readNameOrNames(
            value, at: path, expected: "row must be a row kind or a non-empty array of them, such as \"address.row\"")
        else { return nil }
        var kinds: [String] = []
        for (element, elementPath) in elements {
            guard let kind = element.stringValue, !kind.isEmpty, kind.unicodeScalars.count <= 200 else {
                report(elementPath, "row names a row kind, a string of 1 to 200 characters such as \"address.row\"; found \(element.abbreviatedJSON())")
                continue
            }
            kinds.append(kind)
        }
        return kinds.count == elements.count ? kinds : nil
    }
}

extension JSONPointer {
    /// The pointer without its last token.
    var dropLastToken: JSONPointer { JSONPointer(Array(tokens.dropLast())) }
}
