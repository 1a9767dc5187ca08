// A value made from one input at most once, kept for every later ask with the same input.
import Synchronization

/// A value made from an input at most once and kept for every later ask with an equal input,
/// shared by reference by those who ask: the HTTP server keeps the gzip form of a session's
/// state in one (`CompressedForm`), made by the first answer to a client that accepts gzip and
/// served to the others until the session moves to its next version and keeps a new one.
///
/// It keeps the input it was made from, and an ask with another input makes (and keeps) that
/// input's value instead: a memo handed the wrong input costs a making, never a wrong value.
/// Two threads that ask at once may both make it; the later one's is kept.
///
/// ```swift
/// let form = Memo<[UInt8], [UInt8]?>()
/// form.value(for: document) { ContentCoding.gzip($0, level: 1) }   // made
/// form.value(for: document) { ContentCoding.gzip($0, level: 1) }   // kept: not made again
/// ```
public final class Memo<Input: Equatable & Sendable, Output: Sendable>: Sendable {
    private let kept = Mutex<(input: Input, output: Output)?>(nil)

    public init() {}

    /// The value made for `input` before, or `make`'s, kept for the next ask.
    public func value(for input: Input, make: (Input) -> Output) -> Output {
        if let kept = kept.withLock({ $0 }), kept.input == input { return kept.output }
        let output = make(input)
        kept.withLock { $0 = (input, output) }
        return output
    }

    /// Whether a value was made and kept.
    public var isMade: Bool { kept.withLock { $0 != nil } }
}
