// Following the event stream over XMLHttpRequest, as React Native must (its fetch cannot stream a
// body), against a real `flowstack serve`: versions other devices make are adopted, a cut stream
// is reopened with Last-Event-ID, and a long-lived stream lets go of the text it held.
import assert from 'node:assert/strict';
import { test } from 'node:test';
/** @typedef {import('../src/client/index.js').FlowSession} FlowSession */
import { fetchCanStream } from '../src/client/event-stream.js';
import { NodeXHR, xhrRequests } from './support/node-xhr.js';
import { eventually, serverForTests, startSession } from './support/server.js';

const server = serverForTests();

/**
 * A session for a new user following its stream over `NodeXHR`.
 * @param {Partial<import('../src/client/flow-session.js').Configuration>} [options]
 */
const start = (options = {}) => startSession(server, { prefix: 'xhr', XMLHttpRequest: NodeXHR, eventTransport: 'xhr', ...options });

/** The stream requests this session made over XMLHttpRequest. @param {FlowSession} session */
const streams = (session) => xhrRequests.filter((request) => request.url.includes(`/v1/sessions/${session.sessionId}/events`));

/** Another device's tap. @param {FlowSession} session @param {object} body */
const elsewhere = (session, body) => server.request('POST', `/v1/sessions/${session.sessionId}/actions`, { token: session.token, body });

test('over XMLHttpRequest the session adopts another device\'s versions and reopens a cut stream with Last-Event-ID', async () => {
  const { session, network, events } = await start();
  session.follow();
  await eventually(() => streams(session).length === 1 && streams(session)[0].xhr.readyState >= 2, 'the stream open');
  const open = streams(session)[0];
  assert.equal(open.headers.Authorization, `Bearer ${session.token}`);
  assert.equal(open.headers.Accept, 'text/event-stream');
  assert.equal(network.requests('GET', /\/events$/).length, 0, 'fetch was not used for the stream');
  assert.equal((await elsewhere(session, { type: 'onboarding.showSecond' })).status, 200);
  await eventually(() => session.state.version === 1, 'the other device\'s version');
  assert.ok(events.some((event) => event.type === 'remote' && event.state.version === 1));
  // The server restarts: the stream is cut, and the session reconnects naming the last event.
  await server.stop();
  await server.start();
  await eventually(() => streams(session).some((request) => request.headers['Last-Event-ID'] === '1'), 'a reconnection with Last-Event-ID', 15000);
  await elsewhere(session, { type: 'onboarding.completed' });
  await eventually(() => session.state.version === 2, 'the version made after the reconnection');
  assert.deepEqual(session.state.features, ['home.first']);
  await session.close();
  const last = streams(session).at(-1);
  assert.ok(last && last.xhr.aborted, 'close() ends the stream');
});

test('a long-lived stream is renewed once it holds more than streamRenewAfter characters, at once and missing nothing', async () => {
  const { session } = await start({ streamRenewAfter: 3000 });
  // Every stream that ended otherwise than renewed (a failure, which backs off).
  const failures = [];
  const streamEnded = session.streamEnded.bind(session);
  session.streamEnded = (/** @type {number} */ generation) => {
    failures.push(generation);
    return streamEnded(generation);
  };
  session.follow();
  await eventually(() => streams(session).length === 1 && streams(session)[0].xhr.readyState >= 2, 'the stream open');
  await elsewhere(session, { type: 'onboarding.showSecond' });
  await elsewhere(session, { type: 'onboarding.completed' });
  await eventually(() => session.state.version === 2, 'the versions before the taps');
  // Each version's event carries a state document of about a kilobyte: taps one at a time, each
  // waited for, so every version is an event of its own and the renewals fall between them.
  for (let index = 0; index < 12; index++) {
    await elsewhere(session, { type: 'home.selectTab', params: { index: index % 2 } });
    const version = 3 + index;
    await eventually(() => session.state.version === version, `version ${version}`);
  }
  const opened = streams(session);
  assert.ok(opened.length >= 3, `renewed ${opened.length - 1} times`);
  for (const request of opened.slice(1)) {
    assert.match(request.headers['Last-Event-ID'] ?? '', /^\d+$/, 'each renewal names the last event');
  }
  for (const request of opened.slice(0, -1)) assert.ok(request.xhr.aborted, 'a renewed stream is let go');
  assert.ok(opened.slice(0, -1).every((request) => request.xhr.responseText.length <= 3000 + 4096),
    'no stream held much more than streamRenewAfter');
  assert.deepEqual(failures, [], 'a renewal is not a failure (no backoff)');
  await session.close();
});

test('where fetch has no streaming body (React Native), the session follows over XMLHttpRequest by itself', async () => {
  assert.equal(fetchCanStream(), true, 'node\'s fetch streams');
  const real = globalThis.Response;
  // React Native's Response (whatwg-fetch over XMLHttpRequest) has no `body`.
  globalThis.Response = /** @type {any} */ (class Response {});
  let session;
  try {
    assert.equal(fetchCanStream(), false);
    ({ session } = await start({ eventTransport: undefined }));
  } finally {
    globalThis.Response = real;
  }
  session.follow();
  await eventually(() => streams(session).length === 1 && streams(session)[0].xhr.readyState >= 2, 'the stream open over XMLHttpRequest');
  await elsewhere(session, { type: 'onboarding.showSecond' });
  await eventually(() => session.state.version === 1, 'the other device\'s version');
  await session.close();
});
