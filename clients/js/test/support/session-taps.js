// What a simulated user taps on a FlowSession: one of the actions the session offers, or what the
// sample app's screen on top offers (FlowSessionSimulationTests.chooseAction's port).

/**
 * One of the actions the session offers (from its engine, or its last answer's predictions), the
 * params it needs filled in; with neither, what the sample app's screen on top offers, and the
 * server decides (FlowSessionSimulationTests.chooseAction).
 * @param {import('../../src/client/index.js').FlowSession} session
 * @param {import('./random.js').SeededGenerator} random
 */
export function chooseAction(session, random) {
  const state = session.state;
  const available = session.availableActions.filter((entry) => !entry.type.startsWith('interaction.') && entry.type !== 'link');
  /** @type {import('../../src/client/index.js').NavigationState['pendingActions'][number]['action'][]} */
  let candidates;
  if (available.length > 0) {
    candidates = available.map((entry) => {
      /** @type {Record<string, unknown>} */
      const params = {};
      for (const param of entry.params) {
        if (param.required) params[param.name] = param.name === 'index' ? (state.top?.feature === 'home.first' ? 1 : 0) : 'sample';
      }
      return Object.keys(params).length > 0 ? { type: entry.type, params: /** @type {any} */ (params) } : { type: entry.type };
    });
  } else {
    switch (state.top?.feature) {
      case 'onboarding.first': candidates = [{ type: 'onboarding.showSecond' }]; break;
      case 'onboarding.second': candidates = [{ type: 'onboarding.completed' }, { type: 'back' }]; break;
      case 'home.first':
      case 'home.second':
        candidates = [{ type: 'home.selectTab', params: { index: state.top?.feature === 'home.first' ? 1 : 0 } }, { type: 'home.presentModal', params: { content: 'Hi' } }];
        break;
      case 'modal': candidates = [{ type: 'modal.dismiss' }]; break;
      default: candidates = [{ type: 'back' }];
    }
  }
  return candidates[random.below(candidates.length)];
}
