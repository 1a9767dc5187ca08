// The body of POST /v1/sessions/{id}/actions/batch, checked item by item before anything is applied.
import JSON
import FlowEngine
import FlowStore
import HTTPServer

/// One tap a client made offline, as it sends it later in a batch.
struct BatchItem: Sendable {
    /// Its idempotency key: the same rules and the same store as the `Idempotency-Key` header.
    let key: String
    /// The session version the client applied it on.
    let version: Int
    /// When it happened on the client, normalized to ISO 8601 UTC with milliseconds; nil when not said.
    let clientAt: String?
    let action: FlowAction
    /// `action.idempotencyHash`, equal to that of the same action posted alone.
    let requestHash: [UInt8]
}

/// `{"actions": [{key, version, at?, action}, …]}`, validated: 1 to `maxItems` items. A key may
/// repeat (JSON Schema cannot forbid it, and a client that sends a tap twice means it once): the
/// session service judges a repeat as a POST repeating the key would be.
struct BatchInput {
    static let maxItems = 100
    static let itemKeys = ["key", "version", "at", "action"]

    var items: [BatchItem]

    /// Reads the body, collecting every problem (with its JSON Pointer) into one 400, so that a
    /// batch is refused whole, before any of it is applied.
    init(json: JSONValue) throws(ResponseError) {
        guard let object = json.objectValue else {
            throw Self.malformed([.init(pointer: "", detail: "must be an object {\"actions\": [{key, version, at?, action}, …]}; found \(json.typeName)")])
        }
        var errors: [ProblemDetails.FieldError] = []
        for key in object.keys where key != "actions" {
            errors.append(.init(pointer: JSONPointer([key]).description, detail: "unknown field; expected actions"))
        }
        guard let rawActions = object["actions"] else {
            throw Self.malformed(errors + [.init(pointer: "/actions", detail: "is required: the taps made offline, oldest first")])
        }
        guard let elements = rawActions.arrayValue else {
            throw Self.malformed(errors + [.init(pointer: "/actions", detail: "must be an array of {key, version, at?, action}; found \(rawActions.typeName)")])
        }
        guard (1...Self.maxItems).contains(elements.count) else {
            throw Self.malformed(errors + [.init(pointer: "/actions",
                                                 detail: "must hold 1 to \(Self.maxItems) actions; found \(elements.count) (send more as further batches)")])
        }
        var items: [BatchItem] = []
        for (index, element) in elements.enumerated() {
            let path = JSONPointer(["actions", String(index)])
            guard let item = element.objectValue else {
                errors.append(.init(pointer: path.description, detail: "must be an object {key, version, at?, action}; found \(element.typeName)"))
                continue
            }
            let before = errors.count
            for key in item.keys where !Self.itemKeys.contains(key) {
                errors.append(.init(pointer: path.appending(key).description, detail: "unknown field; expected key, version, at, action"))
            }
            var itemKey = ""
            if let raw = item["key"], let text = raw.stringValue, Self.isIdempotencyKey(text) {
                itemKey = text
            } else {
                let found = item["key"].map { $0.stringValue == nil ? "found \($0.typeName)" : "found \($0.abbreviatedJSON())" } ?? "it is missing"
                errors.append(.init(pointer: path.appending("key").description,
                                    detail: "is required: the tap's idempotency key, 1 to 255 visible ASCII characters; \(found)"))
            }
            var version = 0
            if let raw = item["version"], let number = raw.integerValue, number >= 0 {
                version = number
            } else {
                let found = item["version"].map { "found \($0.abbreviatedJSON())" } ?? "it is missing"
                errors.append(.init(pointer: path.appending("version").description,
                                    detail: "is required: the session version the tap was applied on, a whole number from 0; \(found)"))
            }
            var clientAt: String?
            if let raw = item["at"], !raw.isNull {
                if let text = raw.stringValue, let normalized = ClientTime.normalized(text) {
                    clientAt = normalized
                } else {
                    errors.append(.init(pointer: path.appending("at").description,
                                        detail: "must be the tap's time in ISO 8601 with an offset, such as \"2026-11-25T10:00:00.123Z\"; found \(raw.abbreviatedJSON())"))
                }
            }
            var action: FlowAction?
            if let raw = item["action"] {
                do throws(FlowError) {
                    action = try FlowAction(json: raw)
                } catch {
                    if case .invalidParams(let inner, let message) = error {
                        errors.append(.init(pointer: path.appending("action").description + inner, detail: message))
                    } else {
                        errors.append(.init(pointer: path.appending("action").description, detail: error.message))
                    }
                }
            } else {
                errors.append(.init(pointer: path.appending("action").description,
                                    detail: "is required: the action as POST /v1/sessions/{id}/actions takes it, {type, from?, params?, interactive?}"))
            }
            if errors.count == before, let action {
                items.append(BatchItem(key: itemKey, version: version, clientAt: clientAt, action: action,
                                       requestHash: action.idempotencyHash))
            }
        }
        guard errors.isEmpty else { throw Self.malformed(errors) }
        self.items = items
    }

    /// The rule of the `Idempotency-Key` header: 1 to 255 visible ASCII characters.
    static func isIdempotencyKey(_ text: String) -> Bool {
        (1...255).contains(text.utf8.count) && text.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F }
    }

    private static func malformed(_ errors: [ProblemDetails.FieldError]) -> ResponseError {
        ResponseError(.problem(
            400, "The batch has \(errors.count) invalid field\(errors.count == 1 ? "" : "s"); nothing in it was applied.",
            type: ProblemType.malformed, errors: errors))
    }
}

/// A client's time of day as it sends it (RFC 3339: ISO 8601 with a `Z` or `±hh:mm` offset),
/// brought to the form the server stores its own times in, so the two sort and compare as text.
enum ClientTime {
    /// `2026-11-25T11:00:00.1234+01:00` → `2026-11-25T10:00:00.123Z`; nil when `text` is not
    /// `YYYY-MM-DDThh:mm:ss[.fraction](Z|±hh:mm)` with real calendar values, or falls outside
    /// the years 0001 to 9999 in UTC. A leap second (`:60`) counts as the next second's start.
    static func normalized(_ text: String) -> String? {
        let bytes = Array(text.utf8)
        guard bytes.count >= 20, bytes.count <= 40 else { return nil }
        func digits(_ start: Int, _ count: Int) -> Int? {
            guard start + count <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[start..<(start + count)] {
                guard byte >= 48, byte <= 57 else { return nil }
                value = value * 10 + Int(byte - 48)
            }
            return value
        }
        guard let year = digits(0, 4), bytes[4] == UInt8(ascii: "-"), let month = digits(5, 2), bytes[7] == UInt8(ascii: "-"),
              let day = digits(8, 2), bytes[10] == UInt8(ascii: "T") || bytes[10] == UInt8(ascii: "t"),
              let hour = digits(11, 2), bytes[13] == UInt8(ascii: ":"), let minute = digits(14, 2),
              bytes[16] == UInt8(ascii: ":"), let second = digits(17, 2) else { return nil }
        guard (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day),
              hour <= 23, minute <= 59, second <= 60 else { return nil }
        var position = 19
        var milliseconds = 0
        if bytes[position] == UInt8(ascii: ".") {
            position += 1
            let start = position
            while position < bytes.count, bytes[position] >= 48, bytes[position] <= 57 { position += 1 }
            let count = position - start
            guard (1...9).contains(count) else { return nil }
            // Truncated to milliseconds, as the server stores its own times.
            for offset in 0..<3 {
                milliseconds = milliseconds * 10 + (offset < count ? Int(bytes[start + offset] - 48) : 0)
            }
        }
        guard position < bytes.count else { return nil }
        var offsetMinutes = 0
        switch bytes[position] {
        case UInt8(ascii: "Z"), UInt8(ascii: "z"):
            guard position + 1 == bytes.count else { return nil }
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            guard position + 6 == bytes.count, let hours = digits(position + 1, 2), bytes[position + 3] == UInt8(ascii: ":"),
                  let minutes = digits(position + 4, 2), hours <= 23, minutes <= 59 else { return nil }
            offsetMinutes = (hours * 60 + minutes) * (bytes[position] == UInt8(ascii: "-") ? -1 : 1)
        default:
            return nil
        }
        let days = daysFromCivil(year: year, month: month, day: day)
        let local = ((days * 24 + hour) * 60 + minute) * 60_000 + second * 1000 + milliseconds
        let utc = local - offsetMinutes * 60_000
        let (utcDays, dayMilliseconds) = (utc.floorDivided(by: 86_400_000), utc.floorModulo(86_400_000))
        return Timestamp.string(days: utcDays, millisecondOfDay: dayMilliseconds)
    }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = y.floorDivided(by: 400)
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}

private extension Int {
    func floorDivided(by divisor: Int) -> Int {
        let quotient = self / divisor
        return (self % divisor != 0 && (self < 0) != (divisor < 0)) ? quotient - 1 : quotient
    }

    func floorModulo(_ divisor: Int) -> Int {
        self - floorDivided(by: divisor) * divisor
    }
}
