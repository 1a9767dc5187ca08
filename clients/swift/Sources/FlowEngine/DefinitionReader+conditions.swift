// DefinitionReader+conditions: reading `when` — one source's key tested, and `all`, `any` and `not` around such tests.

import JSON

extension DefinitionReader {
    mutating func readCondition(_ value: JSONValue, at path: JSONPointer) -> FlowCondition? {
        guard let object = value.objectValue else {
            report(path, "a condition is an object such as {\"flag\": \"key\", \"is\": true}; found \(value.typeName)")
            return nil
        }
        for combinator in ["all", "any", "not"] where object.contains(key: combinator) {
            guard object.count == 1, let argument = object[combinator] else {
                report(path, "\(combinator) must be the only key of its condition")
                return nil
            }
            let argumentPath = path.appending(combinator)
            if combinator == "not" {
                return readCondition(argument, at: argumentPath).map(FlowCondition.not)
            }
            guard let elements = argument.arrayValue, !elements.isEmpty else {
                report(argumentPath, "\(combinator) takes a non-empty array of conditions; found \(argument.abbreviatedJSON())")
                return nil
            }
            var conditions: [FlowCondition] = []
            for (index, element) in elements.enumerated() {
                if let condition = readCondition(element, at: argumentPath.appending(index)) { conditions.append(condition) }
            }
            guard conditions.count == elements.count else { return nil }
            return combinator == "all" ? .all(conditions) : .any(conditions)
        }

        let sourceNames = FlowCondition.Source.allCases.map(\.rawValue)
        let allowed = sourceNames + Self.operatorKeys
        checkKeys(object, allowed: allowed, at: path, what: "a condition")
        let sources = object.members.filter { sourceNames.contains($0.key) }
        let operators = object.members.filter { Self.operatorKeys.contains($0.key) }
        guard sources.count == 1, let sourceMember = sources.first, let source = FlowCondition.Source(rawValue: sourceMember.key) else {
            report(path, "a condition names exactly one of \(sourceNames.joined(separator: ", ")), or is all, any or not; found \(sources.count)")
            return nil
        }
        guard let key = sourceMember.value.stringValue, !key.isEmpty else {
            report(path.appending(sourceMember.key), "\(sourceMember.key) must be a non-empty key name; found \(sourceMember.value.abbreviatedJSON())")
            return nil
        }
        guard operators.count == 1, let operatorMember = operators.first else {
            report(path, "a condition has exactly one of \(Self.operatorKeys.joined(separator: ", ")); found \(operators.count)")
            return nil
        }
        let operatorPath = path.appending(operatorMember.key)
        let test: FlowCondition.Test
        switch operatorMember.key {
        case "is": test = .equals(operatorMember.value)
        case "isNot": test = .notEquals(operatorMember.value)
        case "in", "notIn":
            guard let candidates = operatorMember.value.arrayValue else {
                report(operatorPath, "\(operatorMember.key) takes an array of values; found \(operatorMember.value.typeName)")
                return nil
            }
            test = operatorMember.key == "in" ? .oneOf(candidates) : .noneOf(candidates)
        default:
            guard let flag = operatorMember.value.boolValue else {
                report(operatorPath, "exists takes true or false; found \(operatorMember.value.typeName)")
                return nil
            }
            test = .exists(flag)
        }
        return .test(source, key: key, test)
    }
}
