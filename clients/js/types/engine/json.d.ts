/**
 * Parses one JSON value strictly (RFC 8259): no BOM, no trailing data, no duplicate keys, no
 * lone surrogates, no unescaped control characters, no NaN, no leading zeros.
 *
 * ```js
 * parseJSON('{"type": "back"}').get('type');   // 'back'
 * ```
 * @param {string | Uint8Array} input JSON text, or its UTF-8 bytes
 * @param {JSONLimits} [limits]
 * @returns {JSONValue}
 * @throws {JSONParseError}
 */
export function parseJSON(input: string | Uint8Array, limits?: JSONLimits | undefined): JSONValue;
/**
 * The number of UTF-8 bytes of `text`.
 * @param {string} text
 */
export function utf8Length(text: string): number;
/**
 * A string as a JSON string literal, escaped as the Swift writer does: quote, backslash and every
 * control character; `/`, DEL and non-ASCII text as they are.
 * @param {string} value
 */
export function quoteJSON(value: string): string;
/**
 * A number as the Swift writer writes it: integral values below 9.2e18 in magnitude as integers,
 * others in their shortest round-trip form in Swift's spelling (`1e-05`, `1.5e+20`: exponential
 * below 1e-4 and above 2^54), non-finite values as `null`.
 * @param {number | bigint} value
 */
export function formatNumber(value: number | bigint): string;
/**
 * A value as compact JSON text, byte for byte what the Swift engine writes.
 *
 * ```js
 * writeJSON(new Map([['a', 1.5e-5], ['b', '/é']]));   // {"a":1.5e-05,"b":"/é"}
 * ```
 * @param {JSONValue} value
 * @returns {string}
 */
export function writeJSON(value: JSONValue): string;
/**
 * The key a string is looked up by in a `Map` or `Set`, so that strings equal as Swift's
 * `String ==` says (canonically equivalent: `"é"` and `"e\u0301"`, `"K"` and the Kelvin sign) are
 * one key, as they are in the Swift engine's dictionaries.
 * @param {string} text
 */
export function idKey(text: string): string;
/**
 * Whether two strings are equal as Swift's `String ==` says: canonically equivalent (`"é"` and
 * `"e\u0301"`, `"K"` and the Kelvin sign), not merely the same code units. Rules, conditions and
 * params written in one normalization match actions posted in another, as on the server.
 * @param {string} lhs
 * @param {string} rhs
 */
export function sameText(lhs: string, rhs: string): boolean;
/**
 * The value of `key` in `map`, found as a Swift dictionary or `JSONObject` finds it: by canonical
 * equivalence. The direct look-up is tried first; the scan only runs for keys outside ASCII.
 * @template T
 * @param {Map<string, T>} map
 * @param {string} key
 * @returns {T | undefined}
 */
export function getMember<T>(map: Map<string, T>, key: string): T | undefined;
/**
 * Sets `key` in `map` as Swift's subscript assignment does: a member whose key is canonically
 * equivalent is replaced in place and keeps its spelling; otherwise the member is appended.
 * @template T
 * @param {Map<string, T>} map
 * @param {string} key
 * @param {T} value
 */
export function setMember<T>(map: Map<string, T>, key: string, value: T): void;
/**
 * Removes `key` from `map` as Swift's subscript assignment of nil does: the member whose key is
 * canonically equivalent goes, whatever its spelling.
 * @template T
 * @param {Map<string, T>} map
 * @param {string} key
 */
export function removeMember<T>(map: Map<string, T>, key: string): void;
/**
 * Sets every member of `source` in `map` as `setMember` does one by one, in linear time (the
 * members of `map` are indexed by canonical key once, at the first key not found as spelled), so
 * that an `updateRow` of 100,000 values does not scan the row's values for each.
 * @template T
 * @param {Map<string, T>} map
 * @param {Map<string, T>} source
 */
export function setMembers<T>(map: Map<string, T>, source: Map<string, T>): void;
/**
 * The JSON type name used in messages: null, boolean, integer, number, string, array or object.
 * @param {JSONValue | undefined} value
 */
export function typeName(value: JSONValue | undefined): "object" | "string" | "number" | "integer" | "null" | "boolean" | "array";
/**
 * The object when `value` is one.
 * @param {JSONValue | undefined} value
 * @returns {JSONObject | undefined}
 */
export function objectValue(value: JSONValue | undefined): JSONObject | undefined;
/**
 * The elements when `value` is an array.
 * @param {JSONValue | undefined} value
 * @returns {JSONValue[] | undefined}
 */
export function arrayValue(value: JSONValue | undefined): JSONValue[] | undefined;
/**
 * The string when `value` is one.
 * @param {JSONValue | undefined} value
 * @returns {string | undefined}
 */
export function stringValue(value: JSONValue | undefined): string | undefined;
/**
 * The boolean when `value` is one.
 * @param {JSONValue | undefined} value
 * @returns {boolean | undefined}
 */
export function boolValue(value: JSONValue | undefined): boolean | undefined;
/**
 * The value as an integer when it is one, or a number with no fraction that fits in 64 bits (as
 * Swift's `Int(exactly:)` takes `1.0` or `1e17`). An integer beyond ±2^53 comes back as the
 * nearest JavaScript number: what the engine counts (ids, versions, tab indexes) is only ever
 * compared with small bounds, which such a number is outside of either way.
 * @param {JSONValue | undefined} value
 * @returns {number | undefined}
 */
export function integerValue(value: JSONValue | undefined): number | undefined;
/**
 * The value as a double when it is numeric.
 * @param {JSONValue | undefined} value
 * @returns {number | undefined}
 */
export function doubleValue(value: JSONValue | undefined): number | undefined;
/**
 * JSON equality: numbers by value across integers and doubles, objects ignoring member order,
 * strings by canonical equivalence (as Swift compares them).
 * @param {JSONValue | undefined} lhs
 * @param {JSONValue | undefined} rhs
 * @returns {boolean}
 */
export function jsonEquals(lhs: JSONValue | undefined, rhs: JSONValue | undefined): boolean;
/**
 * The JSON text shortened to `limit` characters, so messages stay readable.
 * @param {JSONValue | undefined} value
 * @param {number} [limit]
 */
export function abbreviatedJSON(value: JSONValue | undefined, limit?: number | undefined): string;
/**
 * An RFC 6901 pointer from its tokens (`~` as `~0`, `/` as `~1`); `""` for the whole document.
 *
 * ```js
 * jsonPointer(['on', 'a/b', 0]);   // '/on/a~1b/0'
 * ```
 * @param {(string | number)[]} tokens
 */
export function jsonPointer(tokens: (string | number)[]): string;
/** Defaults for client input: depth 64, strings up to 1 MiB, input up to 8 MiB. @type {JSONLimits} */
export const defaultLimits: Readonly<{
    maxDepth: 64;
    maxStringLength: number;
    maxInputSize: number;
}>;
/**
 * For what the server wrote itself (a session's tree, a bundle): any size, as deep as the parser
 * goes. Data built over many requests can outgrow request bounds and must still read back.
 * @type {JSONLimits}
 */
export const storedDataLimits: JSONLimits;
/**
 * A JSON text was rejected: the reason, the offset where it was found and what was expected.
 * Offsets count UTF-16 code units of the text (bytes when the input was bytes and ASCII).
 */
export class JSONParseError extends Error {
    /**
     * @param {string} reason one of unexpectedEnd, unexpectedByte, invalidLiteral, invalidNumber,
     *   numberOutOfRange, invalidEscape, loneSurrogate, invalidUTF8, controlCharacterInString,
     *   duplicateKey, tooDeep, stringTooLong, inputTooLarge, trailingData
     * @param {number} offset
     * @param {string} message
     */
    constructor(reason: string, offset: number, message: string);
    reason: string;
    offset: number;
    detail: string;
}
/**
 * Writes compact JSON into a growing string: keys, values and containers in order, with
 * commas placed automatically, as the Swift `JSONWriter` does.
 *
 * ```js
 * const writer = new JSONWriter();
 * writer.beginObject();
 * writer.key('type'); writer.string('back');
 * writer.endObject();
 * writer.text();   // {"type":"back"}
 * ```
 */
export class JSONWriter {
    /** The JSON so far: V8 joins appended strings lazily, which beats collecting pieces. */
    out: string;
    /** Whether the next value or key needs a comma: keys and container starts reset it, values set it. */
    needsComma: boolean;
    /** The JSON written so far. */
    text(): string;
    /** @private */
    private separate;
    beginObject(): void;
    endObject(): void;
    beginArray(): void;
    endArray(): void;
    /** @param {string} name */
    key(name: string): void;
    /** @param {string} value */
    string(value: string): void;
    /** @param {string | null | undefined} value */
    optionalString(value: string | null | undefined): void;
    /** @param {number | bigint} value */
    number(value: number | bigint): void;
    /** @param {boolean} value */
    bool(value: boolean): void;
    null(): void;
    /**
     * An entry id such as `"e7"` from its prefix and number.
     * @param {string} prefix
     * @param {number} number
     */
    entryId(prefix: string, number: number): void;
    /**
     * An already-encoded JSON value, verbatim (a part encoded once, such as the flags).
     * @param {string} fragment
     */
    raw(fragment: string): void;
    /** @param {JSONValue} value */
    value(value: JSONValue): void;
    /** @param {JSONObject} object */
    object(object: JSONObject): void;
}
/**
 * A JSON value. Objects are `Map`s, which keep their members in written order whatever the keys;
 * integers that JavaScript numbers cannot hold exactly (beyond ±2^53, within 64 bits) are
 * `bigint`s, every other number a `number`.
 *
 * ```js
 * const params = parseJSON('{"content":"Hello","index":1}');
 * params.get('index');   // 1
 * ```
 */
export type JSONValue = null | boolean | number | bigint | string | JSONValue[] | Map<string, JSONValue>;
/**
 * A JSON array.
 */
export type JSONArray = Array<JSONValue>;
/**
 * A JSON object: members in written order, keys unique.
 */
export type JSONObject = Map<string, JSONValue>;
/**
 * Bounds on what one parse may consume, so a hostile body costs little.
 */
export type JSONLimits = {
    /**
     * deepest nesting of arrays and objects (at most 512)
     */
    maxDepth: number;
    /**
     * longest string, in UTF-8 bytes after unescaping
     */
    maxStringLength: number;
    /**
     * largest input, in UTF-8 bytes
     */
    maxInputSize: number;
};
