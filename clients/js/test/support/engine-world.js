// The real engine's world for the simulated server: the sample app's two starting bundles (a new
// user, and one who finished onboarding) read once from a real `flowstack serve`, then every
// session run by src/engine in memory.
import * as engineModule from '../../src/engine/index.js';
import { documentWithPredictions } from '../../src/engine/conformance.js';
import { LocalEngine } from '../../src/client/index.js';
import { FlowStackServer } from './server.js';

/** @returns {Promise<import('./simulated-server.js').World>} */
export async function realEngineWorld() {
  const server = await FlowStackServer.start();
  let fresh;
  let onboarded;
  try {
    const create = async () => (await server.request('POST', '/v1/sessions', { body: { userId: 'template' } })).json.session;
    const bundle = async (/** @type {{id: string, token: string}} */ session) => {
      const response = await fetch(`${server.url}/v1/sessions/${session.id}/bundle`, { headers: { Authorization: `Bearer ${session.token}` } });
      if (response.status !== 200) throw new Error(`bundle answered ${response.status}`);
      return response.text();
    };
    const first = await create();
    fresh = await bundle(first);
    for (const type of ['onboarding.showSecond', 'onboarding.completed']) {
      await server.request('POST', `/v1/sessions/${first.id}/actions`, { token: first.token, body: { type } });
    }
    onboarded = await bundle(await create());
  } finally {
    await server.dispose();
  }
  const { parseJSON, writeJSON, storedDataLimits, SessionState } = engineModule;
  return {
    start(sessionId, userId, home) {
      const template = parseJSON(home ? onboarded : fresh, storedDataLimits);
      template.set('sessionId', sessionId);
      template.set('userId', userId);
      const text = writeJSON(template);
      return { state: new LocalEngine(SessionState.fromBundle(text), engineModule), bundle: text };
    },
    body: (state, predict) => (predict ? documentWithPredictions(/** @type {LocalEngine} */ (state).state) : state.document()),
    bundle: (state, from) => /** @type {LocalEngine} */ (state).bundle(from),
  };
}
