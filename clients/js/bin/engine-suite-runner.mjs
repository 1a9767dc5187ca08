#!/usr/bin/env node
// The engine conformance runner (engine-suite/README.md) for the JavaScript engine: one JSON line
// in on standard input, exactly one line out, written before the next line is read. The protocol
// itself is EngineRunner (src/engine/conformance.js); this file is only its I/O.
//
//   python3 scripts/engine_suite.py node clients/js/bin/engine-suite-runner.mjs

import { createInterface } from 'node:readline';
import { EngineRunner } from '../src/engine/conformance.js';

const runner = new EngineRunner();
const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of lines) {
  if (!process.stdout.write(runner.answer(line) + '\n')) {
    await new Promise((resolve) => process.stdout.once('drain', resolve));
  }
}
