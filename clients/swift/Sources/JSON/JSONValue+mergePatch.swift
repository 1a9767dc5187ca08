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
        for change in changes.members {
            if change.value.isNull {
                result[change.key] = nil
            } else {
                result[change.key] = (result[change.key] ?? .null).mergePatched(with: change.value)
            }
        }
        return .object(result)
    }
}
