#!/usr/bin/env node
// The engine conformance runner (engine-suite/README.md) for the JavaScript engine: one JSON line
// in on standard input, exactly one line out, written before the next line is read. The protocol
// itself is EngineRunner (src/engine/conformance.js); this file is only its I/O, which reads lines
// as the Swift runner's `readLine` does: split at "\n" only (a lone "\r" stays in its line), a
// trailing "\r" stripped, invalid UTF-8 repaired to U+FFFD, empty lines skipped.
//
//   python3 scripts/engine_suite.py node clients/js/bin/engine-suite-runner.mjs

import { EngineRunner } from '../src/engine/conformance.js';

const runner = new EngineRunner();
const decoder = new TextDecoder('utf-8');

/** @param {string} text */
function write(text) {
  if (process.stdout.write(text)) return Promise.resolve();
  return new Promise((resolve) => process.stdout.once('drain', resolve));
}

/** @param {Buffer} bytes a line without its "\n" */
async function answer(bytes) {
  const end = bytes.length > 0 && bytes[bytes.length - 1] === 0x0d ? bytes.length - 1 : bytes.length;
  if (end === 0) return;
  await write(runner.answer(decoder.decode(bytes.subarray(0, end))) + '\n');
}

/** @type {Buffer[]} */
let pending = [];
for await (const chunk of process.stdin) {
  let start = 0;
  for (let newline = chunk.indexOf(0x0a); newline >= 0; newline = chunk.indexOf(0x0a, start)) {
    pending.push(chunk.subarray(start, newline));
    await answer(Buffer.concat(pending));
    pending = [];
    start = newline + 1;
  }
  if (start < chunk.length) pending.push(chunk.subarray(start));
}
if (pending.length > 0) await answer(Buffer.concat(pending));
