// What a web app ships when it loads the engine as a chunk of its own (clients/js/README.md, "The
// engine as a second chunk"): the client in the page's bundle, and the engine fetched with
// `import()` while the session starts. A new session draws on the server's predictions until the
// engine is there, as it does until the session's bundle comes; a session kept in the store waits
// for it. scripts/js.sh bundles it with code splitting (esbuild --splitting) and holds each
// chunk's gzipped size to a budget; test/client.app-bundle.test.js runs that bundle against a
// real server.
import { FlowSession, KeyValueSessionStore, localEngine } from '../src/client/index.js';

export { FlowSession, KeyValueSessionStore };
/** The engine factory the README's example passes as `engine`, once its chunk has loaded. */
export const local = () => import('../src/engine/index.js').then(localEngine);
