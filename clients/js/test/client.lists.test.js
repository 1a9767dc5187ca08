// The client's side of lists (issue 37): a state document's screens carry their lists and a
// transition the exact changes of each list that changed, read into values as the Swift client's
// NavigationState reads them; row taps are posted with their row. No server: the documents are the
// JavaScript engine's, which the suite holds to the Swift engine's bytes.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { MalformedState, NavigationState, decodeStoredSession, encodeStoredSession } from '../src/client/index.js';
import { postedAction } from '../src/client/client-event.js';
import { ClientMachine } from '../src/client/client-machine.js';
import { SessionState, readAction } from '../src/engine/index.js';
import { documentWithPredictions } from '../src/engine/conformance.js';

const caseFile = fileURLToPath(new URL('../../../engine-suite/cases/lists.row-effects.jsonl', import.meta.url));
/** The bundle line of the suite's row-effects case: a contacts screen with sections A and B. */
const bundle = JSON.parse(readFileSync(caseFile, 'utf8').split('\n')[1]).bundle;

/** @param {unknown} bundleJSON */
function start(bundleJSON) {
  return SessionState.fromBundle(JSON.stringify(bundleJSON));
}

test('a screen\'s list is read from root with its sections, titles and rows; screens and top leave it out', () => {
  const state = NavigationState.fromEngine(start(bundle));
  const top = state.top;
  assert.ok(top);
  assert.equal(top.sections, undefined);
  const contacts = state.screen(top.id);
  assert.ok(contacts?.sections);
  assert.deepEqual(contacts.sections.map((section) => [section.id, section.title, section.indexTitle, section.rows.map((row) => row.id)]), [
    ['A', 'A', undefined, ['ada', 'amos']],
    ['B', 'B', 'B', ['bob', 'ben', 'bea']],
  ]);
  assert.deepEqual(contacts.sections[1].rows[1], { id: 'ben', kind: 'contact.vip', values: { name: 'Ben', since: 2019 } });
  assert.deepEqual(state.transition, undefined);
});

test('a row tap that changes only a list gives a list transition whose changes are read by screen id', () => {
  const engine = start(bundle);
  const top = NavigationState.fromEngine(engine).top;
  assert.ok(top);
  const { next } = engine.applying(readAction({ type: 'contact.star', from: top.id, row: 'bea' }));
  const state = NavigationState.fromEngine(next);
  assert.equal(state.transition?.type, 'list');
  assert.equal(state.transition?.from?.id, top.id);
  assert.deepEqual(Object.keys(state.transition?.lists ?? {}), [top.id]);
  // bea is starred (reloaded) and moved to the top of A; ada and amos keep their order, so stay.
  assert.deepEqual(state.transition?.lists[top.id], {
    sections: { deleted: [], inserted: [], moved: [], reloaded: [] },
    rows: {
      deleted: [], inserted: [],
      moved: [{ id: 'bea', from: { section: 1, row: 2 }, to: { section: 0, row: 0 } }],
      reloaded: [{ id: 'bea', at: { section: 0, row: 0 } }],
    },
  });
  assert.deepEqual(state.screen(top.id)?.sections?.[0].rows[0], { id: 'bea', kind: 'contact', values: { name: 'Bea', starred: true } });
});

test('a pop that inserts a row carries the list change beside the navigation; a plain push carries none', () => {
  let engine = start(bundle);
  const list = NavigationState.fromEngine(engine).top;
  assert.ok(list);
  engine = engine.applying(readAction({ type: 'contact.add', from: list.id })).next;
  const form = NavigationState.fromEngine(engine);
  assert.equal(form.transition?.type, 'push');
  assert.deepEqual(form.transition?.lists, {});
  engine = engine.applying(readAction({ type: 'contact.saved', from: form.top?.id, params: { id: 'abe', name: 'Abe' } })).next;
  const back = NavigationState.fromEngine(engine);
  assert.equal(back.transition?.type, 'pop');
  assert.deepEqual(back.transition?.lists[list.id]?.rows.inserted, [{ id: 'abe', at: { section: 0, row: 1 } }]);
});

test('a row tap is posted with its row, kept with it in the store, and a pending action keeps it', () => {
  assert.deepEqual(postedAction({ type: 'contact.open', from: 'e2', row: 'ben', params: {} }), { type: 'contact.open', from: 'e2', row: 'ben' });
  const stored = {
    server: 'http://127.0.0.1:1', sessionId: 's_1', token: 't', userId: 'u',
    queue: [{ key: 'k', version: 3, action: { type: 'contact.open', from: 'e2', row: 'ben' } }],
  };
  assert.deepEqual(decodeStoredSession(encodeStoredSession(stored))?.queue[0].action, { type: 'contact.open', from: 'e2', row: 'ben' });
  const badRow = { ...stored, queue: [{ key: 'k', version: 3, action: { type: 'contact.open', row: 7 } }] };
  assert.equal(decodeStoredSession(JSON.stringify(badRow))?.queue.length ?? 0, 0);
  const document = JSON.parse(start(bundle).document());
  document.pendingActions = [{
    action: { type: 'contact.open', from: 'e2', row: 'ben', params: {} }, source: 'e2', guard: { flow: 'login', flowId: 'f9' },
  }];
  assert.deepEqual(NavigationState.fromJSON(document).pendingActions[0].action, { type: 'contact.open', from: 'e2', row: 'ben', params: {} });
});

test('a malformed list or list change is refused at its path', () => {
  const document = JSON.parse(start(bundle).document());
  /**
   * @param {(copy: any) => void} change
   * @param {string} path
   */
  const refusedAt = (change, path) => {
    const copy = structuredClone(document);
    change(copy);
    assert.throws(() => NavigationState.fromJSON(copy), (error) => error instanceof MalformedState && error.path === path, path);
  };
  const sections = '/root/entries/0/sections';
  refusedAt((copy) => { copy.root.entries[0].sections[1].rows[0].id = 'ada'; }, `${sections}/1/rows/0/id`);
  refusedAt((copy) => { copy.root.entries[0].sections[1].id = 'A'; }, `${sections}/1/id`);
  refusedAt((copy) => { copy.root.entries[0].sections[0].rows[0].kind = ''; }, `${sections}/0/rows/0/kind`);
  refusedAt((copy) => { copy.root.entries[0].sections[0].rows[0].colour = 'red'; }, `${sections}/0/rows/0/colour`);
  refusedAt((copy) => { copy.root.entries[0].sections[0].rows[0].values = [1]; }, `${sections}/0/rows/0/values`);
  refusedAt((copy) => { copy.root.entries[0].sections[0].title = 'x'.repeat(201); }, `${sections}/0/title`);
  refusedAt((copy) => { delete copy.root.entries[0].sections[0].rows; }, `${sections}/0`);
  refusedAt((copy) => { copy.root.entries[0].sections[0].rows = {}; }, `${sections}/0/rows`);
  const stage = { deleted: [], inserted: [], moved: [], reloaded: [] };
  const transition = { type: 'list', from: document.top, to: document.top, animated: true, style: null, interactive: false };
  refusedAt((copy) => {
    copy.transition = { ...transition, lists: [{ id: 'e2', sections: stage, rows: { ...stage, inserted: [{ id: 'x', at: [0] }] } }] };
  }, '/transition/lists/0/rows/inserted/0/at');
  refusedAt((copy) => {
    copy.transition = { ...transition, lists: [{ id: 'e2', sections: { ...stage, moved: [{ id: 'A', from: 0 }] }, rows: stage }] };
  }, '/transition/lists/0/sections/moved/0/to');
  refusedAt((copy) => { copy.transition = { ...transition, lists: [{ id: 'e2', sections: stage }] }; }, '/transition/lists/0/rows');
});

test('row taps are offered by kind, not predicted, and a row tap is never shown from the plain action\'s prediction', () => {
  const file = fileURLToPath(new URL('../../../engine-suite/cases/list-actions.row-taps-available.jsonl', import.meta.url));
  const session = start(JSON.parse(readFileSync(file, 'utf8').split('\n')[1]).bundle);
  const open = session.availableActions().filter((action) => action.type === 'contact.open');
  assert.deepEqual(open.map((action) => action.rowKinds ?? null), [null, ['contact.vip'], ['contact']]);
  const { state, predictions } = ClientMachine.read(JSON.parse(documentWithPredictions(session)));
  assert.deepEqual(predictions.map((prediction) => prediction.action.type), ['contact.open', 'contacts.choose']);
  const from = state.top?.id;
  const plain = new ClientMachine(state, { predictions }).tap({ type: 'contact.open', from }, 'k1');
  assert.ok(plain.kind === 'shown');
  assert.deepEqual(plain.state.features, ['contacts', 'overview']);
  assert.deepEqual(new ClientMachine(state, { predictions }).tap({ type: 'contact.open', from, row: 'ada' }, 'k1'), { kind: 'waiting', key: 'k1' });
});
