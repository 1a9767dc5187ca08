// FlowLimits: bounds on the size of a session's tree, so no action sequence can grow it without end.

/// Bounds on one session's tree. An action that would cross them is refused, so a client
/// looping on `push` cannot grow a session without end, and a session stays small in memory.
public struct FlowLimits: Sendable, Equatable {
    /// Most entries in a tree, counting screens and flow controllers.
    public var maxEntries: Int
    /// Deepest nesting of flow controllers, presentations included.
    public var maxDepth: Int

    public init(maxEntries: Int = 256, maxDepth: Int = 32) {
        self.maxEntries = maxEntries
        self.maxDepth = maxDepth
    }

    /// 256 entries, 32 levels.
    public static let `default` = FlowLimits()
}
