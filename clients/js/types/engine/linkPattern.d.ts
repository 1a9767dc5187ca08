/**
 * `bytes` with each `%XX` replaced by its byte (and `+` by a space in query parts); the result
 * must be UTF-8.
 * @param {Uint8Array} bytes
 * @param {boolean} plusIsSpace
 * @returns {string}
 * @throws {LinkSyntaxError}
 */
export function percentDecoded(bytes: Uint8Array, plusIsSpace: boolean): string;
/**
 * A URI as links see it: scheme and host lowercased, the path's non-empty segments and the
 * query's items, each percent-decoded after splitting (so `%2F` stays inside its segment).
 * @typedef {object} LinkURI
 * @property {string | null} scheme
 * @property {string | null} host
 * @property {string[]} segments
 * @property {{ key: string, value: string }[]} query in written order; the first of a key counts
 */
/**
 * Splits and decodes `uri`: an absolute URI (`myapp://x/modal/Hi`, `myapp:/modal/Hi`) or an
 * absolute path (`/modal/Hi`), 1 to 2048 bytes, no spaces or control characters.
 * @param {string} uri
 * @returns {LinkURI}
 * @throws {LinkSyntaxError}
 */
export function parseLinkURI(uri: string): LinkURI;
/**
 * A path segment or query value of a pattern: a literal (decoded) or a placeholder's name.
 * @typedef {{ literal: string } | { placeholder: string }} PatternPart
 */
/**
 * A link's URI pattern, in the syntax of Jetpack Navigation's deep links: an optional
 * `scheme://host`, `/`-separated segments each a literal or exactly `{name}`, an optional query
 * `?key={name}&key2=literal`.
 * @typedef {object} LinkPattern
 * @property {string} text as written
 * @property {string | null} scheme lowercased
 * @property {string | null} host lowercased
 * @property {PatternPart[]} path
 * @property {{ key: string, value: PatternPart }[]} query
 */
/**
 * Reads a pattern.
 * @param {string} patternText
 * @returns {LinkPattern}
 * @throws {LinkSyntaxError}
 */
export function parseLinkPattern(patternText: string): LinkPattern;
/**
 * The placeholder names, path first, then query, in written order.
 * @param {LinkPattern} pattern
 */
export function placeholders(pattern: LinkPattern): string[];
/**
 * The values the placeholders capture from `uri`, in placeholder order, or `null` when the
 * pattern does not match it.
 * @param {LinkPattern} pattern
 * @param {LinkURI} uri
 * @returns {{ name: string, value: string }[] | null}
 */
export function captures(pattern: LinkPattern, uri: LinkURI): {
    name: string;
    value: string;
}[] | null;
/**
 * Whether `pattern` wins over `other` when both match a URI: more literal path segments, then
 * more query keys, then more literal query values, then a scheme and host, then a literal where
 * the other has a placeholder at the first place they differ.
 * @param {LinkPattern} pattern
 * @param {LinkPattern} other
 */
export function isMoreSpecific(pattern: LinkPattern, other: LinkPattern): boolean;
/**
 * What makes two patterns match the same URIs (scheme, host, literals and where placeholders
 * are, query keys and their literal values), as a string to compare.
 * @param {LinkPattern} pattern
 */
export function patternShape(pattern: LinkPattern): string;
/** Why a URI or a pattern could not be read: a sentence for people. */
export class LinkSyntaxError extends Error {
}
/** The longest URI or pattern, in bytes. */
export const maxURIBytes: 2048;
/**
 * A URI as links see it: scheme and host lowercased, the path's non-empty segments and the
 * query's items, each percent-decoded after splitting (so `%2F` stays inside its segment).
 */
export type LinkURI = {
    scheme: string | null;
    host: string | null;
    segments: string[];
    /**
     * in written order; the first of a key counts
     */
    query: {
        key: string;
        value: string;
    }[];
};
/**
 * A path segment or query value of a pattern: a literal (decoded) or a placeholder's name.
 */
export type PatternPart = {
    literal: string;
} | {
    placeholder: string;
};
/**
 * A link's URI pattern, in the syntax of Jetpack Navigation's deep links: an optional
 * `scheme://host`, `/`-separated segments each a literal or exactly `{name}`, an optional query
 * `?key={name}&key2=literal`.
 */
export type LinkPattern = {
    /**
     * as written
     */
    text: string;
    /**
     * lowercased
     */
    scheme: string | null;
    /**
     * lowercased
     */
    host: string | null;
    path: PatternPart[];
    query: {
        key: string;
        value: PatternPart;
    }[];
};
