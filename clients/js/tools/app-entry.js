// What an app that draws its taps on the local engine ships: clients/js/README.md's example, as
// an app writes it (the engine module handed to `localEngine`, a session kept in a key-value
// store). scripts/js.sh bundles it (esbuild, tree-shaken, minified) and holds its gzipped size to a
// budget; test/client.app-bundle.test.js runs that bundle against a real server, so that what
// tree-shaking leaves out is only what an app never reaches.
import { SessionState, readAction } from '../src/engine/index.js';
import { FlowSession, KeyValueSessionStore, localEngine } from '../src/index.js';

export { FlowSession, KeyValueSessionStore };
/** The factory the README's example passes as `engine`. */
export const local = localEngine({ SessionState, readAction });
