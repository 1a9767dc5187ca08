// The public API a client codes against: SessionState from a bundle, applying as a value,
// predictions, readAction's refusals, FlowError's members and FlowStorageError's pointers.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import {
  FlowError, FlowStorageError, SessionState, parseJSON, readAction, writeJSON,
} from '../src/engine/index.js';
import { availableActionsDocument, documentWithPredictions } from '../src/engine/conformance.js';

const caseFile = fileURLToPath(new URL('../../../engine-suite/cases/sample-app.onboarding-to-home.jsonl', import.meta.url));
const bundleLine = readFileSync(caseFile, 'utf8').split('\n')[1];
/** The bundle of a new user's session, at onboarding.first (e3). */
const bundle = /** @type {Map<string, any>} */ (parseJSON(bundleLine, { maxDepth: 512, maxStringLength: Infinity, maxInputSize: Infinity })).get('bundle');

/**
 * @param {() => unknown} run
 * @param {Partial<FlowError>} expected
 */
function refusedWith(run, expected) {
  assert.throws(run, (error) => {
    assert.ok(error instanceof FlowError, `expected a FlowError, got ${error}`);
    for (const [key, value] of Object.entries(expected)) assert.deepEqual(/** @type {any} */ (error)[key], value, key);
    return true;
  });
}

test('a bundle reads the same from its value and from its text, and answers its state document', () => {
  const fromValue = SessionState.fromBundle(bundle);
  const fromText = SessionState.fromBundle(writeJSON(bundle));
  assert.equal(fromValue.document(), fromText.document());
  assert.equal(fromValue.sessionId, 'case-sample-app.onboarding-to-home');
  assert.equal(fromValue.userId, 'walker');
  assert.equal(fromValue.version, 0);
  assert.equal(fromValue.document(), readFileSync(caseFile, 'utf8').split('\n')[2]);
});

test('applying returns the next state and leaves the state it was called on as it was', () => {
  const state = SessionState.fromBundle(bundle);
  const before = state.document();
  const { next, outcome } = state.applying(readAction({ type: 'onboarding.showSecond', from: 'e3' }));
  assert.equal(state.document(), before);
  assert.equal(next.version, 1);
  assert.equal(outcome.handledBy, 'onboarding');
  assert.equal(outcome.transition?.type, 'push');
  assert.equal(outcome.transition?.to?.feature, 'onboarding.second');
  const again = state.applying(readAction('{"type":"onboarding.showSecond","from":"e3"}')).next;
  assert.equal(again.document(), next.document(), 'the same action on the same state answers the same bytes');
  assert.match(next.document(), /"transition":\{"type":"push","from":\{"id":"e3"/);
});

test('refusals carry the code, status, pointer and extension members the server answers', () => {
  const state = SessionState.fromBundle(bundle);
  refusedWith(() => state.applying(readAction({ type: 'nobody.handles' })),
    { code: 'unhandled', status: 422, pointer: '/type', chain: ['onboarding', 'app'] });
  refusedWith(() => state.applying(readAction({ type: 'onboarding.showSecond', from: 'e99' })),
    { code: 'stale-source', status: 409, pointer: '/from' });
  refusedWith(() => state.applying(readAction({ type: 'onboarding.completed', from: 'e3' })),
    { code: 'refused', status: 422, pointer: '/type', flow: 'onboarding' });
  refusedWith(() => state.applying(readAction({ type: 'interaction.end' })),
    { code: 'no-interaction', status: 409, pointer: '/type' });
  refusedWith(() => state.applying(readAction({ type: 'link', params: { uri: '/nowhere' } })),
    { code: 'unknown-link', status: 422, pointer: '/params/uri' });
  refusedWith(() => state.applying(readAction({ type: 'link', params: { uri: 'no spaces allowed' } })),
    { code: 'invalid-params', status: 400, pointer: '/params/uri' });
});

test('readAction refuses malformed fields as invalid-params at their pointer', () => {
  refusedWith(() => readAction({ type: 'back', parmas: {} }), { code: 'invalid-params', pointer: '/parmas' });
  refusedWith(() => readAction({ from: 'e1' }), { code: 'invalid-params', pointer: '/type' });
  refusedWith(() => readAction({ type: '' }), { code: 'invalid-params', pointer: '/type' });
  refusedWith(() => readAction({ type: 'back', from: 7 }), { code: 'invalid-params', pointer: '/from' });
  refusedWith(() => readAction({ type: 'back', params: [1] }), { code: 'invalid-params', pointer: '/params' });
  refusedWith(() => readAction({ type: 'back', interactive: 'yes' }), { code: 'invalid-params', pointer: '/interactive' });
  refusedWith(() => readAction([]), { code: 'invalid-params', pointer: '' });
  refusedWith(() => readAction({ type: 'pick', row: '' }), { code: 'invalid-params', pointer: '/row' });
  refusedWith(() => readAction({ type: 'pick', row: 3 }), { code: 'invalid-params', pointer: '/row' });
  refusedWith(() => readAction({ type: 'pick', row: 'a1', params: { 'row.kind': 'x' } }), { code: 'invalid-params', pointer: '/params/row.kind' });
  const action = readAction({ type: 'back', from: null, row: null, params: null, interactive: null });
  assert.deepEqual(action, { type: 'back', from: null, row: null, params: new Map(), interactive: false });
  assert.equal(readAction({ type: 'pick', from: 'e3', row: 'a1' }).row, 'a1');
});

test('predictions are the states posting each parameterless action would answer', () => {
  const state = SessionState.fromBundle(bundle);
  const predictions = state.predictions();
  assert.ok(predictions.length > 0);
  for (const prediction of predictions) {
    assert.equal(prediction.next.document(), state.applying(prediction.action).next.document());
  }
  const types = predictions.map((prediction) => prediction.action.type);
  assert.ok(types.includes('onboarding.showSecond'));
  const withPredictions = documentWithPredictions(state);
  assert.ok(withPredictions.startsWith(state.document().slice(0, -1) + ',"predictions":[{"action":{"type":"'));
  const available = parseJSON(availableActionsDocument(state));
  assert.ok(available instanceof Map && Array.isArray(available.get('actions')));
});

test('a bundle that is wrong fails with the pointer of the first wrong part', () => {
  /**
   * @param {(copy: Map<string, any>) => void} change
   * @param {string} path
   */
  const failsAt = (change, path) => {
    const copy = /** @type {Map<string, any>} */ (parseJSON(writeJSON(bundle), { maxDepth: 512, maxStringLength: Infinity, maxInputSize: Infinity }));
    change(copy);
    assert.throws(() => SessionState.fromBundle(copy), (error) => error instanceof FlowStorageError && error.path === path);
  };
  failsAt((copy) => copy.set('format', 2), '/format');
  failsAt((copy) => copy.delete('sessionId'), '/sessionId');
  failsAt((copy) => copy.set('version', -1), '/version');
  failsAt((copy) => copy.get('tree').set('nextId', 0), '/tree/nextId');
  failsAt((copy) => copy.get('tree').get('root').set('kind', 'grid'), '/tree/root/kind');
  failsAt((copy) => copy.get('definitions').get('modal').set('kind', 'grid'), '/definitions/modal/kind');
  failsAt((copy) => copy.get('definitions').delete('modal'), '/definitions/modal');
  failsAt((copy) => copy.get('context').get('traits').set('horizontalSizeClass', 1), '/context/traits/horizontalSizeClass');
  assert.throws(() => SessionState.fromBundle('{"format":1'), (error) => error instanceof FlowStorageError && error.path === '');
});
