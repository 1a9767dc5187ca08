// The gzip form of one body, made once and shared by every answer that carries that body.
import Locking

/// The gzip form of one body, made at most once for all the answers that carry it: a session's
/// state at one version is the body of every read until the next action, and compressing it at
/// each read cost more than the rest of the read (BENCHMARKS.md, "Issue 35, sixteenth session").
/// A handler keeps one beside such a body and attaches it to each answer that carries the body
/// (`Response.compressedForm`); the first answer to a client that accepts gzip makes it, and
/// nil (kept too) means the body is sent as it is.
///
/// A `Memo` keyed by the body: it serves only the bytes it was made from (the same array, which
/// costs no comparison, or equal bytes), so a form attached to an answer with another body
/// makes that body's form instead: a mistaken pairing costs a compression, never a wrong body.
///
/// ```swift
/// let form = CompressedForm()              // kept with the document, one per version
/// var response = Response.json(document)
/// response.compressedForm = form
/// ```
public typealias CompressedForm = Memo<[UInt8], [UInt8]?>
