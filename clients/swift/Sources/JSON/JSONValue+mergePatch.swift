// JSONValue+mergePatch: RFC 7396 JSON Merge Patch, the body of `PATCH` with `application/merge-patch+json`.

extension JSONValue {
    /// This value with `patch` merged in as RFC 7396 says: an object patch sets each of its
    /// members (recursively for objects), `null` removes a member; any other patch (an array, a
    /// string, …) replaces the value whole. Members keep their written order; new ones go last.
    ///
    /// ```swift
    /// let stored: JSONValue = ["variants": [["key": "a"]], "coverage": 0.5]
    /// stored.mergePatched(with: ["status": "stopped", "coverage": nil]).jsonText
    /// // {"variants":[{"key":"a"}],"status":"stopped"}
    /// ```
    public func mergePatched(with patch: JSONValue) -> JSONValue {
        guard case .object(let changes) = patch else { return patch }
        var result = objectValue ?? JSONObject()
        // Removals are gathered and made in one pass: one at a time, each would shift the
        // members after it, quadratic for a big patch of nulls. A patch's keys are unique, so
        // no key is both removed and set.
        var removed: Set<String> = []
        for change in changes.members {
            if change.value.isNull {
                removed.insert(change.key)
            } else {
                result[change.key] = (result[change.key] ?? .null).mergePatched(with: change.value)
            }
        }
        guard !removed.isEmpty else { return .object(result) }
        return .object(JSONObject(uniqueMembers: result.members.filter { !removed.contains($0.key) }))
    }
}
