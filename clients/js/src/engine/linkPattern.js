// linkPattern: deep-link URI patterns (`/modal/{content}`, `myapp://x/home?tab={tab}`), the URIs
// clients open, and how one matches the other (a port of LinkPattern and LinkURI). Both work on
// UTF-8 bytes, as the Swift code does, so percent-encodings decode to the same text.

import { abbreviatedJSON, sameText } from './json.js';

const encoder = new TextEncoder();
const strictDecoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const decoder = new TextDecoder('utf-8', { ignoreBOM: true });

/** Why a URI or a pattern could not be read: a sentence for people. */
export class LinkSyntaxError extends Error {}

/** The longest URI or pattern, in bytes. */
export const maxURIBytes = 2048;

const slash = 0x2f;
const question = 0x3f;

/** @param {number} byte */
const isLetter = (byte) => (byte >= 0x41 && byte <= 0x5a) || (byte >= 0x61 && byte <= 0x7a);
/** @param {number} byte */
const isDigit = (byte) => byte >= 0x30 && byte <= 0x39;
/** @param {number} byte */
const isHexDigit = (byte) => isDigit(byte) || (byte >= 0x41 && byte <= 0x46) || (byte >= 0x61 && byte <= 0x66);

/** @param {Uint8Array} bytes */
const text = (bytes) => decoder.decode(bytes);

/**
 * RFC 3986: a letter, then letters, digits, `+`, `-` or `.`.
 * @param {Uint8Array} bytes
 */
function isScheme(bytes) {
  if (bytes.length === 0 || !isLetter(bytes[0])) return false;
  return bytes.every((byte) => isLetter(byte) || isDigit(byte) || byte === 0x2b || byte === 0x2d || byte === 0x2e);
}

/**
 * `bytes` split at `separator`, empty parts left out.
 * @param {Uint8Array} bytes
 * @param {number} separator
 */
function split(bytes, separator) {
  /** @type {Uint8Array[]} */
  const parts = [];
  let start = 0;
  for (let index = 0; index <= bytes.length; index += 1) {
    if (index === bytes.length || bytes[index] === separator) {
      if (index > start) parts.push(bytes.subarray(start, index));
      start = index + 1;
    }
  }
  return parts;
}

/**
 * @param {Uint8Array} bytes
 * @param {number} start
 * @param {(byte: number) => boolean} predicate
 */
function firstIndex(bytes, start, predicate) {
  for (let index = start; index < bytes.length; index += 1) if (predicate(bytes[index])) return index;
  return -1;
}

/**
 * `bytes` with each `%XX` replaced by its byte (and `+` by a space in query parts); the result
 * must be UTF-8.
 * @param {Uint8Array} bytes
 * @param {boolean} plusIsSpace
 * @returns {string}
 * @throws {LinkSyntaxError}
 */
export function percentDecoded(bytes, plusIsSpace) {
  if (!bytes.includes(0x25) && !(plusIsSpace && bytes.includes(0x2b))) return text(bytes);
  /** @type {number[]} */
  const decoded = [];
  let index = 0;
  while (index < bytes.length) {
    const byte = bytes[index];
    if (byte === 0x25) {
      if (!(index + 2 < bytes.length) || !isHexDigit(bytes[index + 1]) || !isHexDigit(bytes[index + 2])) {
        const found = text(bytes.subarray(index, Math.min(index + 3, bytes.length)));
        throw new LinkSyntaxError(`${abbreviatedJSON(found, 40)} is not a percent-encoding; write % as %25 and a byte as %XX with two hex digits`);
      }
      decoded.push(parseInt(String.fromCharCode(bytes[index + 1], bytes[index + 2]), 16));
      index += 3;
    } else {
      decoded.push(plusIsSpace && byte === 0x2b ? 0x20 : byte);
      index += 1;
    }
  }
  try {
    return strictDecoder.decode(new Uint8Array(decoded));
  } catch {
    throw new LinkSyntaxError(`${abbreviatedJSON(text(bytes), 60)} decodes to bytes that are not UTF-8`);
  }
}

/** Bytes RFC 3986 allows in no part of a URI. */
const neverInURI = new Set(Array.from('"<>\\^`{|}', (c) => c.charCodeAt(0)));

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
export function parseLinkURI(uri) {
  const bytes = encoder.encode(uri);
  if (bytes.length === 0 || bytes.length > maxURIBytes) {
    throw new LinkSyntaxError(`a URI is 1 to ${maxURIBytes} bytes; found ${bytes.length}`);
  }
  const control = firstIndex(bytes, 0, (byte) => byte <= 0x20 || byte === 0x7f);
  if (control >= 0) {
    throw new LinkSyntaxError(`a URI has no spaces or control characters (percent-encode them, such as %20); found one at byte ${control}`);
  }
  const never = firstIndex(bytes, 0, (byte) => neverInURI.has(byte));
  if (never >= 0) {
    const hex = bytes[never].toString(16).toUpperCase();
    throw new LinkSyntaxError(`a URI never holds ${abbreviatedJSON(String.fromCharCode(bytes[never]), 8)} as it is (RFC 3986); percent-encode it as %${hex}`);
  }
  let rest = bytes;
  const hash = rest.indexOf(0x23);
  if (hash >= 0) rest = rest.subarray(0, hash);
  /** @type {string | null} */
  let scheme = null;
  /** @type {string | null} */
  let host = null;
  // Where an IP literal's brackets may be: right after `scheme://`; nowhere else. Offsets are
  // into `bytes`, which `rest` is a view of.
  let literalEnd = 0;
  let restOffset = 0;
  if (rest[0] !== slash) {
    const colon = rest.indexOf(0x3a);
    if (colon < 0 || !isScheme(rest.subarray(0, colon))) {
      throw new LinkSyntaxError('a URI is absolute, such as myapp://host/path, or a path starting with /');
    }
    scheme = text(rest.subarray(0, colon)).toLowerCase();
    rest = rest.subarray(colon + 1);
    restOffset += colon + 1;
    if (rest[0] === slash && rest[1] === slash) {
      rest = rest.subarray(2);
      restOffset += 2;
      let end = firstIndex(rest, 0, (byte) => byte === slash || byte === question);
      if (end < 0) end = rest.length;
      const name = hostName(rest.subarray(0, end));
      host = name;
      if (name.startsWith('[')) literalEnd = restOffset + encoder.encode(name).length;
      rest = rest.subarray(end);
      restOffset += end;
    }
  } else if (rest[1] === slash) {
    throw new LinkSyntaxError('a URI path cannot start with //; give a scheme (myapp://host/path) or a single /');
  }
  if (firstIndex(bytes, literalEnd, (byte) => byte === 0x5b || byte === 0x5d) >= 0) {
    throw new LinkSyntaxError('a URI holds [ and ] only around an IP-literal host (myapp://[::1]/path); percent-encode them elsewhere as %5B and %5D');
  }
  /** @type {Uint8Array | null} */
  let queryBytes = null;
  const questionIndex = rest.indexOf(question);
  if (questionIndex >= 0) {
    queryBytes = rest.subarray(questionIndex + 1);
    rest = rest.subarray(0, questionIndex);
  }
  const segments = split(rest, slash).map((raw) => percentDecoded(raw, false));
  /** @type {{ key: string, value: string }[]} */
  const query = [];
  for (const raw of queryBytes ? split(queryBytes, 0x26) : []) {
    const equals = raw.indexOf(0x3d);
    const rawKey = equals >= 0 ? raw.subarray(0, equals) : raw;
    const rawValue = equals >= 0 ? raw.subarray(equals + 1) : raw.subarray(raw.length);
    query.push({ key: percentDecoded(rawKey, true), value: percentDecoded(rawValue, true) });
  }
  return { scheme, host, segments, query };
}

/**
 * The host of an authority, lowercased: without `userinfo@` and `:port`; an IP literal keeps
 * its brackets.
 * @param {Uint8Array} authority
 */
function hostName(authority) {
  let host = authority;
  if (host[0] === 0x5b) {
    const close = host.indexOf(0x5d);
    if (close <= 1 || !host.subarray(1, close).every((byte) => isHexDigit(byte) || byte === 0x3a || byte === 0x2e)) {
      throw new LinkSyntaxError("a URI's IP-literal host is [ then hex digits, colons and dots, then ]");
    }
    host = host.subarray(0, close + 1);
  } else {
    const at = host.lastIndexOf(0x40);
    if (at >= 0) host = host.subarray(at + 1);
    const colon = host.indexOf(0x3a);
    if (colon >= 0) host = host.subarray(0, colon);
  }
  return text(host).toLowerCase();
}

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
export function parseLinkPattern(patternText) {
  const bytes = encoder.encode(patternText);
  if (bytes.length === 0 || bytes.length > maxURIBytes) {
    throw new LinkSyntaxError(`a pattern is 1 to ${maxURIBytes} bytes, such as "/modal/{content}"`);
  }
  if (bytes.some((byte) => byte <= 0x20 || byte === 0x7f)) {
    throw new LinkSyntaxError('a pattern has no spaces or control characters; percent-encode them, such as %20');
  }
  if (bytes.includes(0x23)) {
    throw new LinkSyntaxError('a pattern has no fragment (#…); fragments of URIs are ignored');
  }
  let rest = bytes;
  /** @type {string | null} */
  let scheme = null;
  /** @type {string | null} */
  let host = null;
  if (rest[0] !== slash) {
    const colon = rest.indexOf(0x3a);
    if (colon < 0 || rest[colon + 1] !== slash || rest[colon + 2] !== slash || !isScheme(rest.subarray(0, colon))) {
      throw new LinkSyntaxError('a pattern starts with / (any scheme and host) or with scheme://host/, such as "myapp://example.com/modal/{content}"');
    }
    scheme = text(rest.subarray(0, colon)).toLowerCase();
    rest = rest.subarray(colon + 3);
    let end = firstIndex(rest, 0, (byte) => byte === slash || byte === question);
    if (end < 0) end = rest.length;
    const hostBytes = rest.subarray(0, end);
    const isHostByte = (/** @type {number} */ byte) => isLetter(byte) || isDigit(byte) || byte === 0x2d || byte === 0x2e || byte === 0x5f || byte === 0x7e;
    if (hostBytes.length === 0 || !hostBytes.every(isHostByte)) {
      throw new LinkSyntaxError(`the host of a pattern is a name of letters, digits, '-', '.', '_' or '~' (no port, no placeholder); found ${abbreviatedJSON(text(hostBytes), 40)}`);
    }
    host = text(hostBytes).toLowerCase();
    rest = rest.subarray(end);
  } else if (rest[1] === slash) {
    throw new LinkSyntaxError('a pattern cannot start with //; write /path, or scheme://host/path');
  }
  /** @type {Uint8Array | null} */
  let queryBytes = null;
  const questionIndex = rest.indexOf(question);
  if (questionIndex >= 0) {
    queryBytes = rest.subarray(questionIndex + 1);
    rest = rest.subarray(0, questionIndex);
  }
  /** @type {Set<string>} */
  const names = new Set();
  const path = split(rest, slash).map((raw) => patternPart(raw, false, names));
  /** @type {{ key: string, value: PatternPart }[]} */
  const query = [];
  for (const raw of queryBytes ? split(queryBytes, 0x26) : []) {
    const equals = raw.indexOf(0x3d);
    if (equals <= 0) {
      throw new LinkSyntaxError(`a query item of a pattern is key={name} or key=value; found ${abbreviatedJSON(text(raw), 40)}`);
    }
    const rawKey = raw.subarray(0, equals);
    if (rawKey.includes(0x7b) || rawKey.includes(0x7d)) {
      throw new LinkSyntaxError(`a query key cannot be a placeholder; write key={name}, found ${abbreviatedJSON(text(raw), 40)}`);
    }
    const key = percentDecoded(rawKey, true);
    if (query.some((item) => item.key === key)) {
      throw new LinkSyntaxError(`query key ${abbreviatedJSON(key, 40)} appears twice`);
    }
    query.push({ key, value: patternPart(raw.subarray(equals + 1), true, names) });
  }
  return { text: patternText, scheme, host, path, query };
}

/**
 * A segment or query value: `{name}` exactly, or a literal with no braces.
 * @param {Uint8Array} raw
 * @param {boolean} plusIsSpace
 * @param {Set<string>} names
 * @returns {PatternPart}
 */
function patternPart(raw, plusIsSpace, names) {
  if (raw.length >= 2 && raw[0] === 0x7b && raw[raw.length - 1] === 0x7d) {
    const name = text(raw.subarray(1, raw.length - 1));
    if (!isIdentifier(name)) {
      throw new LinkSyntaxError(`placeholder ${abbreviatedJSON(text(raw), 40)} must name an identifier: a letter or _, then letters, digits or _`);
    }
    if (names.has(name)) {
      throw new LinkSyntaxError(`placeholder {${name}} appears twice; each placeholder captures one value`);
    }
    names.add(name);
    return { placeholder: name };
  }
  if (raw.includes(0x7b) || raw.includes(0x7d)) {
    throw new LinkSyntaxError(`${abbreviatedJSON(text(raw), 40)} mixes a placeholder with text; a placeholder is a whole segment or query value, such as /modal/{content}`);
  }
  if (raw.length === 0) return { literal: '' };
  return { literal: percentDecoded(raw, plusIsSpace) };
}

/** @param {string} name */
function isIdentifier(name) {
  const bytes = encoder.encode(name);
  if (bytes.length === 0 || bytes.length > 100 || !(isLetter(bytes[0]) || bytes[0] === 0x5f)) return false;
  return bytes.every((byte) => isLetter(byte) || isDigit(byte) || byte === 0x5f);
}

/**
 * The placeholder names, path first, then query, in written order.
 * @param {LinkPattern} pattern
 */
export function placeholders(pattern) {
  /** @type {string[]} */
  const names = [];
  for (const part of pattern.path) if ('placeholder' in part) names.push(part.placeholder);
  for (const item of pattern.query) if ('placeholder' in item.value) names.push(item.value.placeholder);
  return names;
}

/**
 * The values the placeholders capture from `uri`, in placeholder order, or `null` when the
 * pattern does not match it.
 * @param {LinkPattern} pattern
 * @param {LinkURI} uri
 * @returns {{ name: string, value: string }[] | null}
 */
export function captures(pattern, uri) {
  if (pattern.scheme !== null && (uri.scheme !== pattern.scheme || uri.host !== pattern.host)) return null;
  if (uri.segments.length !== pattern.path.length) return null;
  /** @type {{ name: string, value: string }[]} */
  const captured = [];
  for (let index = 0; index < pattern.path.length; index += 1) {
    const part = pattern.path[index];
    const segment = uri.segments[index];
    if ('literal' in part) {
      if (!sameText(part.literal, segment)) return null;
    } else {
      captured.push({ name: part.placeholder, value: segment });
    }
  }
  for (const item of pattern.query) {
    const found = uri.query.find((entry) => sameText(entry.key, item.key));
    if (!found) return null;
    if ('literal' in item.value) {
      if (!sameText(item.value.literal, found.value)) return null;
    } else {
      captured.push({ name: item.value.placeholder, value: found.value });
    }
  }
  return captured;
}

/**
 * Whether `pattern` wins over `other` when both match a URI: more literal path segments, then
 * more query keys, then more literal query values, then a scheme and host, then a literal where
 * the other has a placeholder at the first place they differ.
 * @param {LinkPattern} pattern
 * @param {LinkPattern} other
 */
export function isMoreSpecific(pattern, other) {
  const literals = (/** @type {LinkPattern} */ p) => p.path.filter((part) => 'literal' in part).length;
  const literalQuery = (/** @type {LinkPattern} */ p) => p.query.filter((item) => 'literal' in item.value).length;
  if (literals(pattern) !== literals(other)) return literals(pattern) > literals(other);
  if (pattern.query.length !== other.query.length) return pattern.query.length > other.query.length;
  if (literalQuery(pattern) !== literalQuery(other)) return literalQuery(pattern) > literalQuery(other);
  if ((pattern.host !== null) !== (other.host !== null)) return pattern.host !== null;
  const count = Math.min(pattern.path.length, other.path.length);
  for (let index = 0; index < count; index += 1) {
    const mine = 'literal' in pattern.path[index];
    const theirs = 'literal' in other.path[index];
    if (mine && !theirs) return true;
    if (!mine && theirs) return false;
  }
  return false;
}

/**
 * What makes two patterns match the same URIs (scheme, host, literals and where placeholders
 * are, query keys and their literal values), as a string to compare.
 * @param {LinkPattern} pattern
 */
export function patternShape(pattern) {
  const query = pattern.query
    .map((item) => [item.key, 'literal' in item.value ? item.value.literal : null])
    .sort((a, b) => (String(a[0]) < String(b[0]) ? -1 : String(a[0]) > String(b[0]) ? 1 : 0));
  return JSON.stringify([pattern.scheme, pattern.host, pattern.path.map((part) => ('literal' in part ? part.literal : null)), query]);
}
