// json: the JSON data model shared by the parser, the writer and the engine (a port of the Swift
// `JSON` module). `JSON.parse` and `JSON.stringify` do not fit: the engine's answers are bytes the
// server wrote, so member order must survive (plain objects move integer-like keys first),
// integers must stay exact past 2^53, and numbers, `/` and non-ASCII text must be written as the
// Swift `JSONWriter` writes them.

/**
 * A JSON value. Objects are `Map`s, which keep their members in written order whatever the keys;
 * integers that JavaScript numbers cannot hold exactly (beyond ±2^53, within 64 bits) are
 * `bigint`s, every other number a `number`.
 *
 * ```js
 * const params = parseJSON('{"content":"Hello","index":1}');
 * params.get('index');   // 1
 * ```
 * @typedef {null | boolean | number | bigint | string | JSONArray | JSONObject} JSONValue
 */

/**
 * A JSON array.
 * @typedef {Array<JSONValue>} JSONArray
 */

/**
 * A JSON object: members in written order, keys unique.
 * @typedef {Map<string, JSONValue>} JSONObject
 */

/**
 * Bounds on what one parse may consume, so a hostile body costs little.
 * @typedef {object} JSONLimits
 * @property {number} maxDepth deepest nesting of arrays and objects (at most 512)
 * @property {number} maxStringLength longest string, in UTF-8 bytes after unescaping
 * @property {number} maxInputSize largest input, in UTF-8 bytes
 */

/** The parser recurses once per nesting level; capping the depth keeps it far from the stack limit. */
const depthCeiling = 512;

/** Defaults for client input: depth 64, strings up to 1 MiB, input up to 8 MiB. @type {JSONLimits} */
export const defaultLimits = Object.freeze({ maxDepth: 64, maxStringLength: 1 << 20, maxInputSize: 8 << 20 });

/**
 * For what the server wrote itself (a session's tree, a bundle): any size, as deep as the parser
 * goes. Data built over many requests can outgrow request bounds and must still read back.
 * @type {JSONLimits}
 */
export const storedDataLimits = Object.freeze({ maxDepth: depthCeiling, maxStringLength: Infinity, maxInputSize: Infinity });

/** Longer number literals are surely hostile; the cap keeps conversion cheap. */
const maxNumberLength = 512;

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
  constructor(reason, offset, message) {
    super(`${message} at byte ${offset}`);
    this.name = 'JSONParseError';
    this.reason = reason;
    this.offset = offset;
    this.detail = message;
  }
}

const int64Min = -(2n ** 63n);
const int64Max = 2n ** 63n - 1n;

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
export function parseJSON(input, limits = defaultLimits) {
  let text;
  if (typeof input === 'string') {
    text = input;
  } else {
    if (input.length > limits.maxInputSize) {
      throw new JSONParseError('inputTooLarge', limits.maxInputSize, `input is ${input.length} bytes; the limit is ${limits.maxInputSize}`);
    }
    try {
      text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(input);
    } catch {
      throw new JSONParseError('invalidUTF8', 0, 'invalid UTF-8 sequence in the input');
    }
  }
  const parser = new Parser(text, limits);
  return parser.parseDocument();
}

class Parser {
  /**
   * @param {string} text
   * @param {JSONLimits} limits
   */
  constructor(text, limits) {
    this.text = text;
    this.index = 0;
    this.depth = 0;
    this.maxDepth = Math.max(0, Math.min(limits.maxDepth, depthCeiling));
    this.maxStringLength = Math.max(0, limits.maxStringLength);
    this.maxInputSize = Math.max(0, limits.maxInputSize);
  }

  /** @returns {JSONValue} */
  parseDocument() {
    const text = this.text;
    // Only measured when it could matter: a UTF-16 unit is at most 3 UTF-8 bytes.
    if (text.length * 3 > this.maxInputSize) {
      const size = utf8Length(text);
      if (size > this.maxInputSize) {
        throw new JSONParseError('inputTooLarge', this.maxInputSize, `input is ${size} bytes; the limit is ${this.maxInputSize}`);
      }
    }
    if (text.charCodeAt(0) === 0xfeff) {
      throw new JSONParseError('unexpectedByte', 0, 'a byte-order mark is not allowed; send plain UTF-8 JSON');
    }
    this.skipWhitespace();
    const value = this.parseValue(null);
    this.skipWhitespace();
    if (this.index < text.length) {
      throw new JSONParseError('trailingData', this.index,
        `unexpected ${this.describe(this.index)} after the JSON value; expected the end of input`);
    }
    return value;
  }

  skipWhitespace() {
    const text = this.text;
    let index = this.index;
    while (index < text.length) {
      const c = text.charCodeAt(index);
      if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) index += 1;
      else break;
    }
    this.index = index;
  }

  /** @param {number} index */
  describe(index) {
    const c = this.text.charCodeAt(index);
    if (c >= 0x20 && c < 0x7f) return `'${this.text[index]}'`;
    return `character U+${c.toString(16).toUpperCase().padStart(4, '0')}`;
  }

  /**
   * @param {string | null} context what preceded the value, for the message when it is missing
   * @returns {JSONValue}
   */
  parseValue(context) {
    const text = this.text;
    if (this.index >= text.length) {
      throw new JSONParseError('unexpectedEnd', this.index,
        'unexpected end of input; expected a JSON value' + (context ? ` after ${context}` : ''));
    }
    const c = text.charCodeAt(this.index);
    switch (c) {
      case 0x7b: return this.parseObject();
      case 0x5b: return this.parseArray();
      case 0x22: return this.parseString();
      case 0x74: this.expectLiteral('true'); return true;
      case 0x66: this.expectLiteral('false'); return false;
      case 0x6e: this.expectLiteral('null'); return null;
      default:
        if (c === 0x2d || (c >= 0x30 && c <= 0x39)) return this.parseNumber();
        let message = `unexpected ${this.describe(this.index)}; expected a JSON value`;
        if (context) message += ` after ${context}`;
        if (c === 0x4e || c === 0x49) message += ' (NaN and Infinity are not JSON)';
        throw new JSONParseError('unexpectedByte', this.index, message);
    }
  }

  enterContainer() {
    this.depth += 1;
    if (this.depth > this.maxDepth) {
      throw new JSONParseError('tooDeep', this.index, `arrays and objects are nested deeper than ${this.maxDepth} levels`);
    }
  }

  /** @returns {JSONObject} */
  parseObject() {
    this.enterContainer();
    const text = this.text;
    this.index += 1;
    /** @type {JSONObject} */
    const object = new Map();
    this.skipWhitespace();
    if (text.charCodeAt(this.index) === 0x7d) {
      this.index += 1;
      this.depth -= 1;
      return object;
    }
    const seen = new Set();
    for (;;) {
      this.skipWhitespace();
      if (this.index >= text.length) {
        throw new JSONParseError('unexpectedEnd', this.index, 'unexpected end of input; expected a string key in an object');
      }
      if (text.charCodeAt(this.index) !== 0x22) {
        throw new JSONParseError('unexpectedByte', this.index, `unexpected ${this.describe(this.index)}; expected a string key in an object`);
      }
      const keyOffset = this.index;
      const key = this.parseString();
      // Swift's parser finds keys by canonical equivalence: "é" and "e\u0301" are one key. The
      // set of canonical keys keeps a hostile body's 100,000 keys linear, as Swift's set does.
      const id = idKey(key);
      if (seen.has(id)) {
        throw new JSONParseError('duplicateKey', keyOffset,
          `duplicate key ${abbreviatedJSON(key)} in object; each key may appear once`);
      }
      this.skipWhitespace();
      if (this.index >= text.length) {
        throw new JSONParseError('unexpectedEnd', this.index, "unexpected end of input; expected ':' after an object key");
      }
      if (text.charCodeAt(this.index) !== 0x3a) {
        throw new JSONParseError('unexpectedByte', this.index, `unexpected ${this.describe(this.index)}; expected ':' after an object key`);
      }
      this.index += 1;
      this.skipWhitespace();
      seen.add(id);
      object.set(key, this.parseValue("':'"));
      this.skipWhitespace();
      if (this.index >= text.length) {
        throw new JSONParseError('unexpectedEnd', this.index, "unexpected end of input; expected ',' or '}' in an object");
      }
      const c = text.charCodeAt(this.index);
      if (c === 0x2c) {
        this.index += 1;
      } else if (c === 0x7d) {
        this.index += 1;
        this.depth -= 1;
        return object;
      } else {
        throw new JSONParseError('unexpectedByte', this.index, `unexpected ${this.describe(this.index)}; expected ',' or '}' in an object`);
      }
    }
  }

  /** @returns {JSONValue[]} */
  parseArray() {
    this.enterContainer();
    const text = this.text;
    this.index += 1;
    /** @type {JSONValue[]} */
    const elements = [];
    this.skipWhitespace();
    if (text.charCodeAt(this.index) === 0x5d) {
      this.index += 1;
      this.depth -= 1;
      return elements;
    }
    let context = "'['";
    for (;;) {
      this.skipWhitespace();
      elements.push(this.parseValue(context));
      this.skipWhitespace();
      if (this.index >= text.length) {
        throw new JSONParseError('unexpectedEnd', this.index, "unexpected end of input; expected ',' or ']' in an array");
      }
      const c = text.charCodeAt(this.index);
      if (c === 0x2c) {
        this.index += 1;
        context = "','";
      } else if (c === 0x5d) {
        this.index += 1;
        this.depth -= 1;
        return elements;
      } else {
        throw new JSONParseError('unexpectedByte', this.index, `unexpected ${this.describe(this.index)}; expected ',' or ']' in an array`);
      }
    }
  }

  /** @param {string} literal */
  expectLiteral(literal) {
    if (!this.text.startsWith(literal, this.index)) {
      throw new JSONParseError('invalidLiteral', this.index, `invalid literal; expected '${literal}'`);
    }
    this.index += literal.length;
  }

  /** @returns {number | bigint} */
  parseNumber() {
    const text = this.text;
    const start = this.index;
    let index = start;
    const isDigit = (/** @type {number} */ i) => {
      const c = text.charCodeAt(i);
      return c >= 0x30 && c <= 0x39;
    };
    if (text.charCodeAt(index) === 0x2d) index += 1;
    if (!isDigit(index)) {
      throw new JSONParseError('invalidNumber', index, "invalid number; expected a digit after '-'");
    }
    if (text.charCodeAt(index) === 0x30) {
      index += 1;
      if (isDigit(index)) throw new JSONParseError('invalidNumber', start, 'invalid number; leading zeros are not allowed');
    } else {
      while (isDigit(index)) index += 1;
    }
    let isInteger = true;
    if (text.charCodeAt(index) === 0x2e) {
      index += 1;
      if (!isDigit(index)) throw new JSONParseError('invalidNumber', index, "invalid number; expected a digit after '.'");
      while (isDigit(index)) index += 1;
      isInteger = false;
    }
    const e = text.charCodeAt(index);
    if (e === 0x65 || e === 0x45) {
      index += 1;
      const sign = text.charCodeAt(index);
      if (sign === 0x2b || sign === 0x2d) index += 1;
      if (!isDigit(index)) throw new JSONParseError('invalidNumber', index, 'invalid number; expected a digit in the exponent');
      while (isDigit(index)) index += 1;
      isInteger = false;
    }
    this.index = index;
    if (index - start > maxNumberLength) {
      throw new JSONParseError('numberOutOfRange', start, `number literal is longer than ${maxNumberLength} characters`);
    }
    const literal = text.slice(start, index);
    const value = Number(literal);
    if (isInteger) {
      // `-0` keeps its sign as a double, as Swift's parser leaves it to the floating-point path.
      if (Number.isSafeInteger(value) && !Object.is(value, -0)) return value;
      if (!Object.is(value, -0)) {
        const exact = BigInt(literal);
        if (exact >= int64Min && exact <= int64Max) return exact;
      }
    }
    if (!Number.isFinite(value)) {
      throw new JSONParseError('numberOutOfRange', start, `number ${literal.slice(0, 40)} is outside the range of a 64-bit float`);
    }
    return value;
  }

  /** @returns {string} */
  parseString() {
    const text = this.text;
    const quoteOffset = this.index;
    let index = this.index + 1;
    const contentStart = index;
    // Fast path: no escape, taken as one slice.
    while (index < text.length) {
      const c = text.charCodeAt(index);
      if (c === 0x22) {
        const value = text.slice(contentStart, index);
        this.index = index + 1;
        this.checkStringLength(value, quoteOffset);
        return value;
      }
      if (c === 0x5c) break;
      if (c < 0x20) throw this.controlCharacterError(index);
      if (c >= 0xd800 && c <= 0xdfff) index = this.skipSurrogatePair(index);
      else index += 1;
    }
    if (index >= text.length) {
      throw new JSONParseError('unexpectedEnd', index,
        `unexpected end of input; the string starting at byte ${quoteOffset} is not closed`);
    }
    // The slow path, from the first backslash: pieces joined at the end.
    /** @type {string[]} */
    const pieces = [text.slice(contentStart, index)];
    let runStart = index;
    while (index < text.length) {
      const c = text.charCodeAt(index);
      if (c === 0x22) {
        pieces.push(text.slice(runStart, index));
        this.index = index + 1;
        const value = pieces.join('');
        this.checkStringLength(value, quoteOffset);
        return value;
      }
      if (c === 0x5c) {
        pieces.push(text.slice(runStart, index));
        this.index = index;
        pieces.push(this.decodeEscape());
        index = this.index;
        runStart = index;
      } else if (c < 0x20) {
        throw this.controlCharacterError(index);
      } else if (c >= 0xd800 && c <= 0xdfff) {
        index = this.skipSurrogatePair(index);
      } else {
        index += 1;
      }
    }
    throw new JSONParseError('unexpectedEnd', index,
      `unexpected end of input; the string starting at byte ${quoteOffset} is not closed`);
  }

  /**
   * A surrogate in the text itself must be a well-formed pair (UTF-8 input cannot carry a lone one).
   * @param {number} index
   */
  skipSurrogatePair(index) {
    const c = this.text.charCodeAt(index);
    const next = this.text.charCodeAt(index + 1);
    if (c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) return index + 2;
    throw new JSONParseError('invalidUTF8', index, 'invalid UTF-8 sequence in a string');
  }

  /**
   * @param {string} value
   * @param {number} offset
   */
  checkStringLength(value, offset) {
    if (value.length * 3 > this.maxStringLength && utf8Length(value) > this.maxStringLength) {
      throw new JSONParseError('stringTooLong', offset, `string is longer than ${this.maxStringLength} bytes`);
    }
  }

  /** @param {number} index */
  controlCharacterError(index) {
    return new JSONParseError('controlCharacterInString', index,
      `control character ${this.describe(index)} in a string; escape it (for example \\n or \\u0001)`);
  }

  /** Decodes the escape at `index` (a backslash) and moves past it. @returns {string} */
  decodeEscape() {
    const text = this.text;
    const escapeOffset = this.index;
    this.index += 1;
    if (this.index >= text.length) {
      throw new JSONParseError('unexpectedEnd', this.index, 'unexpected end of input in an escape sequence');
    }
    const letter = text[this.index];
    this.index += 1;
    switch (letter) {
      case '"': return '"';
      case '\\': return '\\';
      case '/': return '/';
      case 'b': return '\b';
      case 'f': return '\f';
      case 'n': return '\n';
      case 'r': return '\r';
      case 't': return '\t';
      case 'u': {
        const unit = this.readHex4(escapeOffset);
        if (unit >= 0xd800 && unit <= 0xdbff) {
          // A high surrogate must be followed at once by an escaped low surrogate.
          if (text.charCodeAt(this.index) !== 0x5c || text.charCodeAt(this.index + 1) !== 0x75) {
            throw loneSurrogateError(unit, escapeOffset);
          }
          const lowOffset = this.index;
          this.index += 2;
          const low = this.readHex4(lowOffset);
          if (low < 0xdc00 || low > 0xdfff) throw loneSurrogateError(unit, escapeOffset);
          return String.fromCharCode(unit, low);
        }
        if (unit >= 0xdc00 && unit <= 0xdfff) throw loneSurrogateError(unit, escapeOffset);
        return String.fromCharCode(unit);
      }
      default:
        throw new JSONParseError('invalidEscape', escapeOffset,
          `invalid escape \\${letter}; expected one of \\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX`);
    }
  }

  /** @param {number} escapeOffset */
  readHex4(escapeOffset) {
    let value = 0;
    for (let k = 0; k < 4; k += 1) {
      if (this.index >= this.text.length) {
        throw new JSONParseError('unexpectedEnd', this.index, 'unexpected end of input in a \\u escape');
      }
      const c = this.text.charCodeAt(this.index);
      let digit;
      if (c >= 0x30 && c <= 0x39) digit = c - 0x30;
      else if (c >= 0x41 && c <= 0x46) digit = c - 0x41 + 10;
      else if (c >= 0x61 && c <= 0x66) digit = c - 0x61 + 10;
      else throw new JSONParseError('invalidEscape', escapeOffset, 'invalid \\u escape; expected four hexadecimal digits');
      value = (value << 4) | digit;
      this.index += 1;
    }
    return value;
  }
}

/**
 * @param {number} unit
 * @param {number} offset
 */
function loneSurrogateError(unit, offset) {
  const hex = unit.toString(16).toUpperCase().padStart(4, '0');
  return new JSONParseError('loneSurrogate', offset,
    `lone surrogate \\u${hex} in a \\u escape; a surrogate must come as a high/low pair`);
}

/**
 * The number of UTF-8 bytes of `text`.
 * @param {string} text
 */
export function utf8Length(text) {
  let count = 0;
  for (let index = 0; index < text.length; index += 1) {
    const c = text.charCodeAt(index);
    if (c < 0x80) count += 1;
    else if (c < 0x800) count += 2;
    else if (c >= 0xd800 && c <= 0xdbff) { count += 4; index += 1; }
    else count += 3;
  }
  return count;
}

// MARK: writing

/** Characters a JSON string must escape: quote, backslash and the C0 controls. */
// eslint-disable-next-line no-control-regex
const needsEscape = /["\\\u0000-\u001f]/;
// eslint-disable-next-line no-control-regex
const escapable = /["\\\u0000-\u001f]/g;

/** @param {string} c */
function escapeCharacter(c) {
  switch (c) {
    case '"': return '\\"';
    case '\\': return '\\\\';
    case '\n': return '\\n';
    case '\r': return '\\r';
    case '\t': return '\\t';
    case '\b': return '\\b';
    case '\f': return '\\f';
    default: return '\\u00' + c.charCodeAt(0).toString(16).padStart(2, '0');
  }
}

/**
 * A string as a JSON string literal, escaped as the Swift writer does: quote, backslash and every
 * control character; `/`, DEL and non-ASCII text as they are.
 * @param {string} value
 */
export function quoteJSON(value) {
  if (!needsEscape.test(value)) return '"' + value + '"';
  return '"' + value.replace(escapable, escapeCharacter) + '"';
}

/**
 * A number as the Swift writer writes it: integral values below 9.2e18 in magnitude as integers,
 * others in their shortest round-trip form in Swift's spelling (`1e-05`, `1.5e+20`: exponential
 * below 1e-4 and above 2^54), non-finite values as `null`.
 * @param {number | bigint} value
 */
export function formatNumber(value) {
  if (typeof value === 'bigint') return value.toString();
  if (!Number.isFinite(value)) return 'null';
  if (Number.isInteger(value) && value > -9.2e18 && value < 9.2e18) {
    return Number.isSafeInteger(value) ? String(value === 0 ? 0 : value) : BigInt(value).toString();
  }
  const magnitude = Math.abs(value);
  const sign = value < 0 ? '-' : '';
  if (magnitude < 1e-4 || magnitude > 2 ** 54) {
    const [mantissa, exponentText] = magnitude.toExponential().split('e');
    const exponent = Number(exponentText);
    const digits = String(Math.abs(exponent)).padStart(2, '0');
    return `${sign}${mantissa}e${exponent < 0 ? '-' : '+'}${digits}`;
  }
  return String(value);
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
  constructor() {
    /** The JSON so far: V8 joins appended strings lazily, which beats collecting pieces. */
    this.out = '';
    /** Whether the next value or key needs a comma: keys and container starts reset it, values set it. */
    this.needsComma = false;
  }

  /** The JSON written so far. */
  text() {
    return this.out;
  }

  /** @private */
  separate() {
    if (this.needsComma) this.out += ',';
  }

  beginObject() {
    this.separate();
    this.out += '{';
    this.needsComma = false;
  }

  endObject() {
    this.out += '}';
    this.needsComma = true;
  }

  beginArray() {
    this.separate();
    this.out += '[';
    this.needsComma = false;
  }

  endArray() {
    this.out += ']';
    this.needsComma = true;
  }

  /** @param {string} name */
  key(name) {
    this.separate();
    this.out += quoteJSON(name) + ':';
    this.needsComma = false;
  }

  /** @param {string} value */
  string(value) {
    this.separate();
    this.out += quoteJSON(value);
    this.needsComma = true;
  }

  /** @param {string | null | undefined} value */
  optionalString(value) {
    if (value == null) this.null();
    else this.string(value);
  }

  /** @param {number | bigint} value */
  number(value) {
    this.separate();
    this.out += formatNumber(value);
    this.needsComma = true;
  }

  /** @param {boolean} value */
  bool(value) {
    this.separate();
    this.out += value ? 'true' : 'false';
    this.needsComma = true;
  }

  null() {
    this.separate();
    this.out += 'null';
    this.needsComma = true;
  }

  /**
   * An entry id such as `"e7"` from its prefix and number.
   * @param {string} prefix
   * @param {number} number
   */
  entryId(prefix, number) {
    this.separate();
    this.out += '"' + prefix + number + '"';
    this.needsComma = true;
  }

  /**
   * An already-encoded JSON value, verbatim (a part encoded once, such as the flags).
   * @param {string} fragment
   */
  raw(fragment) {
    this.separate();
    this.out += fragment;
    this.needsComma = true;
  }

  /** @param {JSONValue} value */
  value(value) {
    if (value === null) this.null();
    else if (typeof value === 'string') this.string(value);
    else if (typeof value === 'number' || typeof value === 'bigint') this.number(value);
    else if (typeof value === 'boolean') this.bool(value);
    else if (Array.isArray(value)) {
      this.beginArray();
      for (const element of value) this.value(element);
      this.endArray();
    } else this.object(value);
  }

  /** @param {JSONObject} object */
  object(object) {
    this.beginObject();
    for (const [name, member] of object) {
      this.key(name);
      this.value(member);
    }
    this.endObject();
  }
}

/**
 * A value as compact JSON text, byte for byte what the Swift engine writes.
 *
 * ```js
 * writeJSON(new Map([['a', 1.5e-5], ['b', '/é']]));   // {"a":1.5e-05,"b":"/é"}
 * ```
 * @param {JSONValue} value
 * @returns {string}
 */
export function writeJSON(value) {
  const writer = new JSONWriter();
  writer.value(value);
  return writer.text();
}

// MARK: text as Swift compares it

/** Any code unit outside ASCII; an ASCII-only string is canonically equivalent to itself only among ASCII strings. */
// eslint-disable-next-line no-control-regex
const nonASCII = /[^\u0000-\u007f]/;

/**
 * The key a string is looked up by in a `Map` or `Set`, so that strings equal as Swift's
 * `String ==` says (canonically equivalent: `"é"` and `"e\u0301"`, `"K"` and the Kelvin sign) are
 * one key, as they are in the Swift engine's dictionaries.
 * @param {string} text
 */
export function idKey(text) {
  return nonASCII.test(text) ? text.normalize('NFD') : text;
}

/**
 * Whether two strings are equal as Swift's `String ==` says: canonically equivalent (`"é"` and
 * `"e\u0301"`, `"K"` and the Kelvin sign), not merely the same code units. Rules, conditions and
 * params written in one normalization match actions posted in another, as on the server.
 * @param {string} lhs
 * @param {string} rhs
 */
export function sameText(lhs, rhs) {
  if (lhs === rhs) return true;
  if (!nonASCII.test(lhs) && !nonASCII.test(rhs)) return false;
  return lhs.normalize('NFD') === rhs.normalize('NFD');
}

/**
 * The value of `key` in `map`, found as a Swift dictionary or `JSONObject` finds it: by canonical
 * equivalence. The direct look-up is tried first; the scan only runs for keys outside ASCII.
 * @template T
 * @param {Map<string, T>} map
 * @param {string} key
 * @returns {T | undefined}
 */
export function getMember(map, key) {
  const direct = map.get(key);
  if (direct !== undefined) return direct;
  const keyIsASCII = !nonASCII.test(key);
  for (const [name, value] of map) {
    if (keyIsASCII && !nonASCII.test(name)) continue;
    if (sameText(name, key)) return value;
  }
  return undefined;
}

/**
 * Sets `key` in `map` as Swift's subscript assignment does: a member whose key is canonically
 * equivalent is replaced in place and keeps its spelling; otherwise the member is appended.
 * @template T
 * @param {Map<string, T>} map
 * @param {string} key
 * @param {T} value
 */
export function setMember(map, key, value) {
  if (!map.has(key)) {
    for (const name of map.keys()) {
      if (sameText(name, key)) {
        map.set(name, value);
        return;
      }
    }
  }
  map.set(key, value);
}

/**
 * Removes `key` from `map` as Swift's subscript assignment of nil does: the member whose key is
 * canonically equivalent goes, whatever its spelling.
 * @template T
 * @param {Map<string, T>} map
 * @param {string} key
 */
export function removeMember(map, key) {
  if (map.delete(key)) return;
  for (const name of map.keys()) {
    if (sameText(name, key)) {
      map.delete(name);
      return;
    }
  }
}

/**
 * Sets every member of `source` in `map` as `setMember` does one by one, in linear time (the
 * members of `map` are indexed by canonical key once, at the first key not found as spelled), so
 * that an `updateRow` of 100,000 values does not scan the row's values for each.
 * @template T
 * @param {Map<string, T>} map
 * @param {Map<string, T>} source
 */
export function setMembers(map, source) {
  /** @type {Map<string, string> | undefined} */
  let names;
  for (const [key, value] of source) {
    let name = key;
    if (!map.has(key)) {
      names ??= new Map([...map.keys()].map((known) => [idKey(known), known]));
      name = names.get(idKey(key)) ?? key;
      names.set(idKey(key), name);
    }
    map.set(name, value);
  }
}

// MARK: reading values

/**
 * The JSON type name used in messages: null, boolean, integer, number, string, array or object.
 * @param {JSONValue | undefined} value
 */
export function typeName(value) {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'boolean') return 'boolean';
  if (typeof value === 'bigint') return 'integer';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  if (typeof value === 'string') return 'string';
  if (Array.isArray(value)) return 'array';
  return 'object';
}

/**
 * The object when `value` is one.
 * @param {JSONValue | undefined} value
 * @returns {JSONObject | undefined}
 */
export function objectValue(value) {
  return value instanceof Map ? value : undefined;
}

/**
 * The elements when `value` is an array.
 * @param {JSONValue | undefined} value
 * @returns {JSONValue[] | undefined}
 */
export function arrayValue(value) {
  return Array.isArray(value) ? value : undefined;
}

/**
 * The string when `value` is one.
 * @param {JSONValue | undefined} value
 * @returns {string | undefined}
 */
export function stringValue(value) {
  return typeof value === 'string' ? value : undefined;
}

/**
 * The boolean when `value` is one.
 * @param {JSONValue | undefined} value
 * @returns {boolean | undefined}
 */
export function boolValue(value) {
  return typeof value === 'boolean' ? value : undefined;
}

/**
 * The value as an integer when it is one, or a number with no fraction that fits in 64 bits (as
 * Swift's `Int(exactly:)` takes `1.0` or `1e17`). An integer beyond ±2^53 comes back as the
 * nearest JavaScript number: what the engine counts (ids, versions, tab indexes) is only ever
 * compared with small bounds, which such a number is outside of either way.
 * @param {JSONValue | undefined} value
 * @returns {number | undefined}
 */
export function integerValue(value) {
  if (typeof value === 'number') {
    return Number.isInteger(value) && value >= -(2 ** 63) && value < 2 ** 63 ? value : undefined;
  }
  if (typeof value === 'bigint') return Number(value);
  return undefined;
}

/**
 * The value as a double when it is numeric.
 * @param {JSONValue | undefined} value
 * @returns {number | undefined}
 */
export function doubleValue(value) {
  if (typeof value === 'number') return value;
  if (typeof value === 'bigint') return Number(value);
  return undefined;
}

/**
 * JSON equality: numbers by value across integers and doubles, objects ignoring member order,
 * strings by canonical equivalence (as Swift compares them).
 * @param {JSONValue | undefined} lhs
 * @param {JSONValue | undefined} rhs
 * @returns {boolean}
 */
export function jsonEquals(lhs, rhs) {
  if (lhs === rhs) return true;
  if (lhs === undefined || rhs === undefined || lhs === null || rhs === null) return false;
  const left = typeof lhs;
  const right = typeof rhs;
  if ((left === 'number' || left === 'bigint') && (right === 'number' || right === 'bigint')) {
    // eslint-disable-next-line eqeqeq
    return lhs == rhs;
  }
  if (Array.isArray(lhs)) {
    if (!Array.isArray(rhs) || lhs.length !== rhs.length) return false;
    for (let index = 0; index < lhs.length; index += 1) {
      if (!jsonEquals(lhs[index], rhs[index])) return false;
    }
    return true;
  }
  if (lhs instanceof Map) {
    if (!(rhs instanceof Map) || lhs.size !== rhs.size) return false;
    // Linear, as Swift's JSONObject ==: members in order while their keys line up, then the rest
    // by canonical key (a per-key scan would make 100,000 keys quadratic).
    /** @type {Map<string, JSONValue> | undefined} */
    let byKey;
    const others = rhs.entries();
    for (const [name, member] of lhs) {
      let other;
      if (!byKey) {
        const [otherName, otherMember] = others.next().value ?? [];
        if (otherName !== undefined && sameText(name, otherName)) other = otherMember;
        else byKey = new Map([...rhs].map(([key, value]) => [idKey(key), value]));
      }
      if (byKey) other = byKey.get(idKey(name));
      if (other === undefined || !jsonEquals(member, other)) return false;
    }
    return true;
  }
  if (typeof lhs === 'string' && typeof rhs === 'string') return sameText(lhs, rhs);
  return false;
}

/**
 * The JSON text shortened to `limit` characters, so messages stay readable.
 * @param {JSONValue | undefined} value
 * @param {number} [limit]
 */
export function abbreviatedJSON(value, limit = 60) {
  const text = value === undefined ? 'nothing' : writeJSON(value);
  const characters = Array.from(text);
  return characters.length > limit ? characters.slice(0, limit).join('') + '…' : text;
}

/**
 * An RFC 6901 pointer from its tokens (`~` as `~0`, `/` as `~1`); `""` for the whole document.
 *
 * ```js
 * jsonPointer(['on', 'a/b', 0]);   // '/on/a~1b/0'
 * ```
 * @param {(string | number)[]} tokens
 */
export function jsonPointer(tokens) {
  let text = '';
  for (const token of tokens) {
    text += '/' + String(token).replace(/~/g, '~0').replace(/\//g, '~1');
  }
  return text;
}
