// FlowStack playground: a thin client of the session API, drawn as a phone.
//
// The page holds no navigation logic of its own: it posts what the user pressed and draws the
// state the server answers (the screen stack, the transition to animate, the actions on offer,
// the log and the session graph). Requests go out one at a time, in the order they were made,
// so slider updates reach the server in order. `document.body.dataset.state` is "busy" while a
// request or an animation runs and "idle" otherwise; scripts/browser.py waits on it.
//
// The page also follows its session's event stream, so versions committed elsewhere (another
// tab, another client) are drawn too; `/?follow=<session id>` opens a tab on an existing session,
// its token handed over through localStorage since it must never be in a URL.
//
// Taps do not wait for the network when the server said what they will produce: a press on an
// action that needs no params draws the `next` state `/actions/available` gave for it at once,
// posts the action with `If-Match` on the version shown, and the answer confirms what was drawn
// or corrects it (a 412 or another state: the page adopts the server's). The latency slider
// makes the network slow on purpose, in the page itself, to show the difference.
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  const {hold, Problem, showProblem, clearProblem, el} = window.FlowStackCommon;
  const reducedMotion = window.matchMedia("(prefers-reduced-motion: reduce)");
  const DURATION = 320; // ms, one transition
  const PEEK = 22; // px of each screen behind the top one that stays visible
  const PEEKS = 4; // screens drawn behind the top one; deeper ones are only listed
  const STATUS_BAR = 32; // px at the top of the phone left to the status bar
  const FINISH_PROGRESS = 0.5; // as the server decides interaction.end (for the status line only)

  const app = {
    session: null, // {id, token, userId, version, deleted?}
    context: null, // {attributes, traits} the session was started with
    state: null,
    available: null, // the answer of /actions/available, or null when it could not be read
    log: [],
    graphFormat: "svg",
    latency: 0, // ms the page waits before each request and before using each answer
    tap: null, // the last tap: {id, action, predicted, status, drawMs, answerMs, reason}
    draws: [], // the last states drawn, {sessionId, version, topId, why}: a version drawn twice shows here
  };
  // For the console and the browser test: the live session, its state and what is on offer.
  window.FlowStackPlayground = app;

  // ---------------------------------------------------------------- busy / idle

  // Requests run one after the other; a failed one does not stop the next.
  let chain = Promise.resolve();
  function enqueue(task) {
    const release = hold();
    const run = chain.then(task);
    chain = run.catch(() => {});
    return run.finally(release);
  }

  // ---------------------------------------------------------------- HTTP

  // Calls with this session's token unless told otherwise, after the simulated delay, and
  // hands the answer (or the failure) over only after the delay again.
  async function api(method, path, {body, token = app.session && app.session.token, accept = "application/json", ifMatch} = {}) {
    const headers = ifMatch === undefined ? {} : {"If-Match": `"${ifMatch}"`};
    await networkDelay();
    let answer;
    try {
      answer = await window.FlowStackCommon.request(method, path, {body, token, accept, headers});
    } catch (error) {
      await networkDelay();
      throw error;
    }
    await networkDelay();
    return answer;
  }

  // One leg of the simulated network: the slider's value now.
  function networkDelay() {
    const ms = app.latency;
    return ms > 0 ? new Promise((resolve) => setTimeout(resolve, ms)) : Promise.resolve();
  }

  const sessionPath = (suffix = "") => `/v1/sessions/${encodeURIComponent(app.session.id)}${suffix}`;

  // Runs `render`, which replaces elements of `container`; if a keyboard user had the focus in
  // there, it goes back to the element with the same test id, else to the first control in
  // `scope`, so they keep their place.
  let keyboardUser = false; // the last input was a key, not a pointer: only then is focus moved
  document.addEventListener("keydown", () => { keyboardUser = true; }, true);
  document.addEventListener("pointerdown", () => { keyboardUser = false; }, true);

  function keepingFocus(container, render, scope = "") {
    const active = document.activeElement;
    const inside = keyboardUser && active && active !== container && container.contains(active);
    const testid = inside ? active.dataset.testid : null;
    render();
    const now = document.activeElement;
    const kept = now && now !== document.body && container.contains(now) && !now.closest(".leaving");
    if (!inside || kept) return;
    const same = testid && container.querySelector(`${scope} [data-testid="${CSS.escape(testid)}"]`);
    const target = same && !same.disabled ? same : container.querySelector(`${scope} button:not(:disabled), ${scope} input:not(:disabled)`);
    if (target) target.focus({preventScroll: true});
  }

  const shortName = (feature) => String(feature).split(".").pop();
  const compactJSON = (value) => (value && typeof value === "object" && Object.keys(value).length === 0 ? "" : JSON.stringify(value));

  function randomUserId() {
    const bytes = new Uint8Array(4);
    crypto.getRandomValues(bytes);
    return `guest-${Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("")}`;
  }

  // ---------------------------------------------------------------- sessions and actions

  function formContext() {
    const country = $("form-country").value.trim().toUpperCase();
    const attributes = {platform: $("form-platform").value};
    if (country) attributes.country = country;
    return {userId: $("form-user").value.trim(), attributes, traits: {horizontalSizeClass: $("form-size").value}};
  }

  function startSession() {
    const context = formContext();
    if (!context.userId) {
      $("form-user").focus();
      return Promise.resolve();
    }
    return enqueue(async () => {
      try {
        const created = await api("POST", "/v1/sessions", {body: context, token: null});
        clearProblem();
        app.session = created.session;
        app.context = {attributes: context.attributes, traits: context.traits};
        app.log = [];
        leaveFollowedAddress();
        setState(created.state, {fresh: true});
        await refresh();
        follow();
      } catch (error) {
        showProblem(error);
      }
    });
  }

  // A tab opened on `/?follow=<id>` that starts its own session no longer needs that address
  // (a reload would go back to the old session) nor the token it kept for it.
  function leaveFollowedAddress() {
    const followed = new URLSearchParams(location.search).get("follow");
    if (followed === null) return;
    handOver.forget(followed);
    history.replaceState(null, "", "/");
  }

  // Loads a session started in another tab (`/?follow=<id>`), with the token that tab handed over.
  function followSession(id) {
    return enqueue(async () => {
      const handed = handOver.take(id);
      if (!handed) {
        showProblem(new Problem(0, {title: "No token for this session",
          detail: `This browser holds no token for session ${id}: open the tab with “Follow in a new tab” on the page ` +
            "that started it (a token never travels in a URL), or start a new session."}));
        renderFollowLink();
        return;
      }
      try {
        const state = await api("GET", `/v1/sessions/${encodeURIComponent(id)}`, {token: handed.token});
        clearProblem();
        app.session = {id, token: handed.token, userId: state.userId, version: state.version};
        app.context = handed.context || null;
        app.log = [];
        $("form-user").value = state.userId;
        setState(state, {fresh: true});
        await refresh();
        follow();
      } catch (error) {
        showProblem(error);
        if (error instanceof Problem && (error.status === 401 || error.status === 404)) handOver.forget(id);
      }
    });
  }

  // Posts an action, draws the answer and reads what follows from it. `onAnswer(state, error)`
  // is told as soon as the answer is drawn (or refused), before what follows is read.
  function act(action, {quiet = false, onAnswer = () => {}} = {}) {
    return enqueue(async () => {
      if (!app.session) return null;
      try {
        const state = await api("POST", sessionPath("/actions"), {body: action}).catch((error) => {
          onAnswer(null, error);
          throw error;
        });
        clearProblem();
        // The stream may have drawn this version already (it never does before the answer, as
        // both go through this queue, but a version is drawn once whichever comes first).
        if (isNewer(state)) setState(state);
        onAnswer(state, null);
        if (app.state === state) await refresh({light: action.type === "interaction.update"});
        return state;
      } catch (error) {
        if (!quiet) showProblem(error);
        // The answer may have been refused because the page is behind: catch up.
        if (error instanceof Problem && (error.status === 409 || error.status === 412)) await reload();
        throw error;
      }
    });
  }

  // ---------------------------------------------------------------- taps, predicted or not
  //
  // A press on an action button. When the actions on offer were read for the version drawn and
  // the action needs no params, the server said what it will answer (`next`): that state is drawn
  // at once, and the action is posted with `If-Match` on the version the user saw. The answer
  // either equals what was drawn (confirmed: nothing is drawn again) or the page adopts the
  // server's state (corrected: a 412 or 409 means something else acted first, so the state is
  // read again). Versions the stream brings meanwhile wait in the request queue behind the tap
  // and are drawn only if newer than what the tap left, so one is never drawn twice. Any other
  // press waits for the answer, as `act` always did.

  let taps = 0;

  function tap(action, body = actionFor(action), startedAt = performance.now()) {
    const next = predictionFor(action, body);
    if (!next) {
      const record = beginTap(body, startedAt, false);
      return act(body, {onAnswer: (state, error) => {
        const answerAt = performance.now();
        if (error) return finishTap(record, "refused", {answerAt, reason: refusalReason(error)});
        record.drawMs = answerAt - startedAt; // drawn with the answer
        finishTap(record, "applied", {answerAt});
      }});
    }
    const shown = app.state;
    const record = beginTap(body, startedAt, true);
    setState(next, {why: "predicted"});
    record.drawMs = performance.now() - startedAt;
    renderTap();
    return enqueue(async () => {
      let answer;
      try {
        answer = await api("POST", sessionPath("/actions"), {body, ifMatch: shown.version});
      } catch (error) {
        const answerAt = performance.now();
        // A 412 or 409 is someone else having acted first: the indicator says so, it is no error.
        if (!(error instanceof Problem && (error.status === 409 || error.status === 412))) showProblem(error);
        const adopted = await readState();
        if (adopted) adopt(adopted);
        else setState(shown, {why: "rolled back", correction: true}); // no answer at all: back to what the server confirmed
        finishTap(record, "corrected", {answerAt, reason: refusalReason(error)});
        await refresh();
        throw error;
      }
      const answerAt = performance.now();
      clearProblem();
      if (sameState(answer, app.state)) {
        finishTap(record, "confirmed", {answerAt});
        app.state = answer; // the same screens: nothing moves, only the JSON panel takes the answer
        renderJSON();
      } else {
        finishTap(record, "corrected", {answerAt, reason: "another state"});
        adopt(answer);
      }
      await refresh();
      return answer;
    }).catch(() => null);
  }

  // The state the server promised for `body` on the version drawn, if it did.
  function predictionFor(action, body) {
    if (body.params || !availableFresh() || !action.next) return null;
    if (pendingPrediction()) return null; // drawn ahead already: wait for its answer first
    const next = action.next;
    return next.sessionId === app.state.sessionId && next.version === app.state.version + 1 ? next : null;
  }

  function pendingPrediction() {
    return Boolean(app.tap && app.tap.predicted && app.tap.status === "pending");
  }

  // The server's state, drawn over whatever the page drew ahead of it.
  function adopt(state) {
    if (sameState(state, app.state)) {
      app.state = state;
      renderJSON();
      return;
    }
    setState(state, {why: "corrected", correction: true});
  }

  // The session's state now, or null (the problem shown) when it cannot be read.
  async function readState() {
    try {
      return await api("GET", sessionPath());
    } catch (error) {
      showProblem(error);
      return null;
    }
  }

  // Two states are the same screens and facts when they are equal without their predictions.
  function sameState(a, b) {
    if (!a || !b) return false;
    const canonical = (value) => JSON.stringify(value, (key, inner) => (inner && typeof inner === "object" && !Array.isArray(inner)
      ? Object.fromEntries(Object.keys(inner).sort().filter((name) => name !== "predictions").map((name) => [name, inner[name]]))
      : inner));
    return canonical(a) === canonical(b);
  }

  // Why the server did not apply a tap drawn ahead, in a few words.
  function refusalReason(error) {
    if (!(error instanceof Problem) || !error.status) return "no answer";
    const problem = error.problem || {};
    if (error.status === 412) {
      return `412: another client acted first${problem.currentVersion !== undefined ? `, the session is at version ${problem.currentVersion}` : ""}`;
    }
    return `${error.status}${problem.code ? ` ${problem.code}` : problem.title ? ` ${problem.title}` : ""}`;
  }

  function beginTap(body, startedAt, predicted) {
    taps += 1;
    app.tap = {id: taps, action: body.type, predicted, status: predicted ? "pending" : "waiting", startedAt, drawMs: null, answerMs: null, reason: null};
    renderTap();
    return app.tap;
  }

  function finishTap(record, status, {answerAt, reason = null}) {
    record.status = status;
    record.answerMs = answerAt - record.startedAt;
    record.reason = reason;
    if (record === app.tap) renderTap();
  }

  function renderTap() {
    const line = $("tap-status");
    const record = app.tap;
    if (!record) return;
    const ms = (value) => (value === null ? "" : `${Math.round(value)} ms`);
    const text = {
      pending: `${record.action}: drawn from the prediction in ${ms(record.drawMs)}, waiting for the server…`,
      waiting: `${record.action}: no prediction, waiting for the server…`,
      confirmed: `${record.action}: confirmed (drawn in ${ms(record.drawMs)}, answered in ${ms(record.answerMs)})`,
      corrected: `${record.action}: corrected by the server (${record.reason}; drawn in ${ms(record.drawMs)}, answered in ${ms(record.answerMs)})`,
      applied: `${record.action}: applied (no prediction: drawn with the answer, in ${ms(record.answerMs)})`,
      refused: `${record.action}: refused (${record.reason}, in ${ms(record.answerMs)})`,
    }[record.status];
    line.textContent = text;
    line.dataset.status = record.status;
    line.dataset.tap = record.id;
    line.dataset.action = record.action;
    line.dataset.predicted = String(record.predicted);
    line.dataset.drawMs = record.drawMs === null ? "" : record.drawMs.toFixed(1);
    line.dataset.answerMs = record.answerMs === null ? "" : record.answerMs.toFixed(1);
  }

  async function reload() {
    try {
      const state = await api("GET", sessionPath());
      if (!isNewer(state)) return;
      setState(state);
      await refresh();
    } catch (error) {
      showProblem(error);
    }
  }

  // What the state implies: the actions on offer, the log and the graph (all three at once).
  // An interaction update adds to the log but changes neither the actions nor the graph.
  async function refresh({light = false} = {}) {
    if (light) return loadLog();
    await Promise.all([loadAvailable(), loadLog(), loadGraph()]);
  }

  // `${session}@${version}` of the state drawn: an answer read for another one is not shown.
  const drawnStamp = () => (app.state ? `${app.state.sessionId}@${app.state.version}` : "");

  async function loadAvailable() {
    const stamp = drawnStamp();
    try {
      const available = await api("GET", sessionPath("/actions/available"));
      if (drawnStamp() !== stamp) return; // a tap drew ahead meanwhile: its own refresh reads them
      app.available = available;
      $("actions-from").textContent = app.available.from
        ? `From ${app.available.from.feature} (${app.available.from.id}), nearest flow first:`
        : "Nothing is on screen.";
    } catch (error) {
      if (drawnStamp() !== stamp) return;
      app.available = null;
      $("actions-from").textContent = `The server did not list the available actions (${error.status || "no answer"}: ${error.message}).`;
    }
    keepingFocus($("actions"), renderActions);
    renderInteractive();
    keepingFocus($("phone"), refillCards, ".card.top");
  }

  // The phone's own buttons (back, close, tabs) depend on the actions on offer: draw them again.
  function refillCards() {
    if (!app.state) return;
    const cards = cardsOf(app.state.root);
    cards.forEach((card, index) => {
      const element = elements.get(card.screen.id);
      if (element) fillCard(element, card, index === cards.length - 1, app.state);
    });
  }

  async function loadLog() {
    const stamp = drawnStamp();
    try {
      const page = await api("GET", sessionPath("/actions?limit=1000"));
      if (drawnStamp() !== stamp) return;
      app.log = page.actions || [];
    } catch (error) {
      if (drawnStamp() !== stamp) return;
      app.log = [];
      showProblem(error);
    }
    renderLog();
  }

  async function loadGraph() {
    const graph = $("graph");
    const stamp = drawnStamp();
    try {
      const svgText = await api("GET", sessionPath(`/graph?format=svg`), {accept: "image/svg+xml"});
      if (drawnStamp() !== stamp) return;
      const svg = parseSVG(svgText);
      graph.replaceChildren(svg);
      graph.dataset.current = (svg.querySelector("g.node.current") || {}).id || "";
      scrollGraphToCurrent();
    } catch (error) {
      if (drawnStamp() !== stamp) return;
      graph.dataset.current = "";
      graph.replaceChildren(el("p", {class: "placeholder"},
        `No graph: ${error.status ? `${error.status} ` : ""}${error.message}`));
    }
  }

  // The SVG comes from our own server; it is still parsed as XML and stripped of anything that
  // could run, since flow and screen names in it come from uploaded definitions.
  function parseSVG(text) {
    const parsed = new DOMParser().parseFromString(String(text), "image/svg+xml");
    const root = parsed.documentElement;
    if (!root || root.nodeName !== "svg") throw new Error("the answer is not an SVG image");
    for (const node of root.querySelectorAll("script, foreignObject")) node.remove();
    for (const node of root.querySelectorAll("*")) {
      for (const attribute of Array.from(node.attributes)) {
        if (/^on/i.test(attribute.name) || /^\s*javascript:/i.test(attribute.value)) node.removeAttribute(attribute.name);
      }
    }
    const svg = document.importNode(root, true);
    // Scale to the panel: keep the viewBox, drop the fixed size Graphviz gives in points.
    const width = parseFloat(svg.getAttribute("width")) || 0;
    svg.removeAttribute("width");
    svg.removeAttribute("height");
    if (width) svg.style.maxWidth = `${Math.round(width * 1.34)}px`;
    svg.setAttribute("data-testid", "graph-svg");
    return svg;
  }

  function scrollGraphToCurrent() {
    const graph = $("graph");
    const current = graph.querySelector("g.node.current");
    if (!current || graph.scrollHeight <= graph.clientHeight) return;
    const box = current.getBoundingClientRect();
    const frame = graph.getBoundingClientRect();
    graph.scrollTop += box.top - frame.top - (frame.height - box.height) / 2;
  }

  async function showGraphText(format) {
    if (!app.session) return;
    const release = hold();
    try {
      const text = await api("GET", sessionPath(`/graph?format=${format}`), {accept: "text/plain"});
      $("text-dialog-title").textContent = `Session graph as ${format}`;
      $("text-dialog-body").textContent = typeof text === "string" ? text : JSON.stringify(text, null, 2);
      $("text-dialog").showModal();
    } catch (error) {
      showProblem(error);
    } finally {
      release();
    }
  }

  // ---------------------------------------------------------------- state

  // Draws `state`. `why` is kept in `app.draws` (for the browser test: a version drawn twice
  // shows there); a `correction` replaces what was drawn ahead with a cross-fade, whatever
  // action the server's state came from.
  function setState(state, {fresh = false, why = "answer", correction = false} = {}) {
    const previous = fresh ? null : app.state;
    app.state = state;
    if (app.session) app.session.version = state.version;
    app.draws.push({sessionId: state.sessionId, version: state.version, topId: state.top ? state.top.id : null, why});
    if (app.draws.length > 50) app.draws.shift();
    renderFacts();
    keepingFocus($("phone"), () => renderPhone(previous, state, {correction}), ".card.top");
    markActionsStale();
    renderStackList();
    renderTransition(previous, state);
    renderJSON();
    renderPendingLink();
    renderPendingActions();
    renderFollowLink();
    syncSlider();
  }

  // Whether `state` is not drawn yet: another session, or a later version of this one.
  function isNewer(state) {
    return !app.state || app.state.sessionId !== state.sessionId || state.version > app.state.version;
  }

  function renderFacts() {
    const state = app.state;
    $("fact-user").textContent = state.userId;
    $("fact-session").textContent = state.sessionId;
    $("fact-version").textContent = state.version;
    const flags = Object.entries(state.flags || {}).map(([key, details]) => `${key}: ${details.variant ?? JSON.stringify(details.value)}`);
    $("fact-flags").textContent = flags.length ? flags.join(", ") : "none";
    const experiments = Object.entries(state.experiments || {}).map(([key, variant]) => `${key}: ${variant}`);
    $("fact-experiments").textContent = experiments.length ? experiments.join(", ") : "none";
    const regular = app.context && app.context.traits && app.context.traits.horizontalSizeClass === "regular";
    $("device").classList.toggle("regular", Boolean(regular));
    $("device").dataset.platform = (app.context && app.context.attributes.platform) || "ios";
  }

  // The screens drawn, bottom to top, with what each needs to be drawn: the stacked flow it is
  // in (for a back button), the tabbed flow whose tab it is (for the tab bar) and how many
  // presentations it is under (for a sheet). The walk follows what `state.screens` lists:
  // every entry of a stack, the selected tab of a tab bar, then what a flow presents.
  function cardsOf(root) {
    const cards = [];
    const visit = (node, context) => {
      const tabbed = node.kind === "tabbed" ? node : context.tabbed;
      const entries = node.kind === "tabbed" ? [node.entries[node.selected || 0]].filter(Boolean) : node.entries || [];
      entries.forEach((entry, index) => {
        const canPop = node.kind === "stacked" && index > 0;
        if (entry.kind) {
          visit(entry, {...context, tabbed});
        } else {
          cards.push({
            screen: entry, flow: node.flow, flowId: node.id, tabbed, modal: context.modal, style: context.style,
            sheetStart: context.sheetStart && cards.every((card) => card.modal < context.modal),
            previous: canPop ? node.entries[index - 1] : null,
          });
        }
      });
      if (node.presented) {
        visit(node.presented, {tabbed: null, modal: context.modal + 1, style: node.presented.style || "sheet", sheetStart: true});
      }
    };
    if (root) visit(root, {tabbed: null, modal: 0, style: null, sheetStart: false});
    return cards;
  }

  const elements = new Map(); // screen id → its card element, kept across renders

  function renderPhone(previous, state, {correction = false} = {}) {
    const phone = $("phone");
    const cards = cardsOf(state.root);
    const wanted = new Set(cards.map((card) => card.screen.id));
    const oldTopId = previous && previous.top ? previous.top.id : null;
    const oldTop = oldTopId ? elements.get(oldTopId) : null;

    // Screens no longer shown: the old top may leave with an animation, the rest go at once.
    let leaving = null;
    for (const [id, element] of elements) {
      if (wanted.has(id)) continue;
      elements.delete(id);
      if (element === oldTop) leaving = element;
      else element.remove();
    }

    // Keep the elements of screens still shown (so they move instead of reappearing), in order.
    let before = null;
    const visible = cards.slice(-1 - PEEKS);
    cards.forEach((card, index) => {
      let element = elements.get(card.screen.id);
      if (!element) {
        element = el("div", {class: "card"});
        elements.set(card.screen.id, element);
        if (before) before.after(element); else phone.prepend(element);
      }
      const depth = cards.length - 1 - index; // 0 on top
      fillCard(element, card, depth === 0, state);
      element.hidden = !visible.includes(card);
      const offset = STATUS_BAR + Math.max(0, visible.indexOf(card)) * PEEK;
      element.style.top = `${offset}px`;
      element.style.setProperty("--depth", Math.min(depth, PEEKS));
      before = element;
    });
    if (leaving) phone.append(leaving); // over everything while it leaves

    const top = state.top;
    phone.dataset.topFeature = top ? top.feature : "";
    phone.dataset.topId = top ? top.id : "";
    phone.dataset.version = state.version;
    phone.dataset.depth = cards.length;
    phone.classList.toggle("empty", cards.length === 0);
    if (cards.length === 0) phone.dataset.message = "Nothing on screen";

    animateTransition(previous, state, leaving, top ? elements.get(top.id) : null, {correction});
    applyInteractionPreview();
  }

  function fillCard(element, card, isTop, state) {
    const {screen} = card;
    const received = resultReceipt(state, screen.id);
    element.className = ["card", isTop && "top", card.modal > 0 && "modal", card.sheetStart && "sheet-start", card.tabbed && "has-tabs",
      screen.handoff && "handoff", received && "received-result"]
      .filter(Boolean).join(" ");
    element.dataset.screenId = screen.id;
    element.dataset.feature = screen.feature;
    element.dataset.testid = `screen-${screen.id}`;
    element.setAttribute("aria-hidden", isTop ? "false" : "true");
    if (!isTop) element.style.transform = "";

    const back = availableAction("back");
    const navLeft = card.previous
      ? el("button", {type: "button", class: "nav-back", "data-testid": isTop ? "phone-back" : null, tabindex: isTop ? null : "-1",
          disabled: !(isTop && back), title: back ? "back" : "back is not available",
          onclick: () => back && tap(back).catch(() => {})}, `‹ ${shortName(card.previous.feature || card.previous.flow)}`)
      : card.sheetStart
        ? el("button", {type: "button", class: "nav-back", "data-testid": isTop ? "phone-close" : null, tabindex: isTop ? null : "-1",
            disabled: !(isTop && back), title: "back (dismisses the presented flow)",
            onclick: () => back && tap(back).catch(() => {})}, "Close")
        : el("span");
    const params = Object.entries(screen.params || {});
    element.replaceChildren(...[
      el("div", {class: "navbar"}, navLeft, el("span", {class: "nav-title"}, shortName(screen.feature)), el("span", {class: "nav-id"}, screen.id)),
      el("div", {class: "card-body"},
        el("div", {class: "feature", "data-testid": isTop ? "top-feature" : null}, screen.feature),
        screen.handoff
          ? el("div", {class: "handoff-banner", "data-testid": isTop ? "handoff" : null, "data-kind": screen.handoff},
              el("span", {class: "badge"}, "hand-off"), " native step ", el("code", {"data-testid": isTop ? "handoff-kind" : null}, screen.handoff),
              el("span", {class: "hint"}, ": the app runs it and posts its outcome"))
          : null,
        received
          ? el("div", {class: "result-banner", "data-testid": `result-${screen.id}`, title: "A result effect wrote this param"},
              el("span", {class: "badge"}, "result"), ` received into `, el("code", {}, received.into))
          : null,
        el("div", {class: "meta"}, `screen ${screen.id} · flow ${card.flow} (${card.flowId})${card.modal ? ` · presented ${card.style || ""}` : ""}`),
        params.length
          ? el("dl", {class: "params", "data-testid": isTop ? "top-params" : null},
              params.map(([name, value]) => [el("dt", {class: received && received.into === name ? "received" : null}, name),
                el("dd", {class: received && received.into === name ? "received" : null}, typeof value === "string" ? value : JSON.stringify(value))]))
          : el("p", {class: "no-params"}, "no params"),
        isTop && !state.interaction ? (screen.handoff ? handoffOutcomes(card) : screenButtons(card)) : null,
        isTop && state.interaction ? el("div", {class: "pending"}, `${state.interaction.action} pending at ${Math.round(state.interaction.progress * 100)}%`) : null),
      card.tabbed ? tabBar(card.tabbed, isTop) : null,
    ].filter(Boolean));
  }

  // The top screen's own buttons, as an app would draw them: one per action it offers (the
  // tab bar, back and the interaction actions have their own controls). A press submits the
  // action's form in the panel, so params typed there go with it.
  function screenButtons(card) {
    const actions = freshActions().filter((action) =>
      action.type !== "back" && !action.type.startsWith("interaction.") &&
      !(card.tabbed && action.handledBy === card.tabbed.flow && /(^|\.)selectTab$/.test(action.type)));
    if (actions.length === 0) return null;
    return el("div", {class: "screen-buttons"}, actions.map((action) =>
      el("button", {type: "button", class: "screen-button", "data-testid": `phone-action-${action.type}`,
        title: `${action.type} → ${action.handledBy}${(action.params || []).length ? " (params from the panel)" : ""}`,
        onclick: () => {
          const form = document.querySelector(`[data-testid="action-row-${CSS.escape(action.type)}"]`);
          if (form) form.requestSubmit();
        }}, shortName(action.type))));
  }

  // A hand-off on top: the app would run its native step (a purchase) and post its outcome.
  // The playground stands in for it: one form per outcome action on offer from the hand-off
  // (purchase.completed, purchase.cancelled, purchase.failed), with inputs for their params.
  function handoffOutcomes(card) {
    const actions = freshActions().filter((action) => action.type !== "back" && !action.type.startsWith("interaction."));
    if (actions.length === 0) return el("p", {class: "no-params", "data-testid": "handoff-no-outcomes"}, "No outcome action is on offer.");
    return el("div", {class: "handoff-outcomes", "data-testid": "handoff-outcomes"},
      el("p", {class: "hint"}, `Post the ${card.screen.handoff} step's outcome:`),
      actions.map((action) => actionForm(action, {prefix: "handoff", compact: true})));
  }

  // The receipt of a result written into screen `id` by the action that made `state`, if any.
  function resultReceipt(state, id) {
    const receipt = state && state.transition && state.transition.result;
    return receipt && receipt.id === id ? receipt : null;
  }

  function tabBar(tabbed, isTop) {
    const select = freshActions().find((action) =>
      action.handledBy === tabbed.flow && /(^|\.)selectTab$/.test(action.type));
    return el("nav", {class: "tabbar", "aria-label": `${tabbed.flow} tabs`, "data-testid": isTop ? "tabbar" : null},
      (tabbed.entries || []).map((entry, index) => {
        const selected = index === (tabbed.selected || 0);
        return el("button", {
          type: "button", class: `tab${selected ? " selected" : ""}`, "aria-pressed": selected ? "true" : "false",
          "data-testid": isTop ? `tab-${index}` : null, tabindex: isTop ? null : "-1",
          disabled: !isTop || !select || selected,
          title: select ? `${select.type} {index: ${index}}` : "no selectTab action is available",
          onclick: () => select && act({...actionFor(select), params: {index}}),
        }, el("span", {class: "tab-icon", "aria-hidden": "true"}), shortName(entry.feature || entry.flow));
      }));
  }

  // ---------------------------------------------------------------- transitions

  // A hidden tab (one following its session in the background) draws without animating: it
  // shows nothing, and its animations would only finish once it is shown, keeping it busy.
  function animate(element, keyframes, options = {}) {
    if (!element || !element.animate || document.hidden) return Promise.resolve();
    const duration = reducedMotion.matches ? 1 : options.duration || DURATION;
    const release = hold();
    const animation = element.animate(keyframes, {duration, easing: options.easing || "cubic-bezier(.2,.8,.2,1)", fill: "none"});
    return animation.finished.catch(() => {}).finally(release);
  }

  function leave(element, keyframes) {
    element.classList.add("leaving");
    element.setAttribute("aria-hidden", "true");
    return animate(element, keyframes).finally(() => element.remove());
  }

  function animateTransition(previous, state, leaving, entering, {correction = false} = {}) {
    const transition = state.transition;
    if (correction && previous) {
      // From what was drawn ahead to what is right: no action of the server's leads from one to
      // the other, so the screens cross-fade (nothing moves when the top screen stayed).
      if (leaving) leave(leaving, [{opacity: 1}, {opacity: 0}]);
      if (leaving && entering) animate(entering, [{opacity: 0}, {opacity: 1}]);
      return;
    }
    const applied = previous && previous.sessionId === state.sessionId && state.version > previous.version;
    if (!applied || !transition || transition.animated === false) {
      if (leaving) leaving.remove();
      if (!previous && entering) animate(entering, [{opacity: 0}, {opacity: 1}], {duration: 200});
      return;
    }
    const from = leaving ? (leaving.style.transform || "translate(0, 0)") : "translate(0, 0)";
    const fade = transition.style === "crossFade" || transition.type === "replaceRoot" || transition.type === "setRoot";
    if (fade) {
      if (leaving) leave(leaving, [{opacity: 1}, {opacity: 0}]);
      if (entering) animate(entering, [{opacity: 0}, {opacity: 1}]);
      return;
    }
    switch (transition.type) {
      case "push":
        if (leaving) leaving.remove();
        animate(entering, [{transform: "translateX(100%)"}, {transform: "translateX(0)"}]);
        break;
      case "pop":
      case "popTo":
        if (leaving) leave(leaving, [{transform: from}, {transform: "translateX(105%)"}]);
        if (entering) animate(entering, [{filter: "brightness(.85)"}, {filter: "none"}]);
        break;
      case "present":
        if (leaving) leaving.remove();
        animate(entering, [{transform: "translateY(100%)"}, {transform: "translateY(0)"}]);
        break;
      case "dismiss":
        if (leaving) leave(leaving, [{transform: from}, {transform: "translateY(105%)"}]);
        break;
      case "selectTab": {
        const forward = transition.to && transition.from && tabIndex(state, transition.to.id) > tabIndex(previous, transition.from.id);
        const shift = forward ? "24px" : "-24px";
        if (leaving) leave(leaving, [{opacity: 1}, {opacity: 0}]);
        animate(entering, [{opacity: 0, transform: `translateX(${shift})`}, {opacity: 1, transform: "translateX(0)"}], {duration: 220});
        break;
      }
      default:
        if (leaving) leave(leaving, [{opacity: 1}, {opacity: 0}]);
        animate(entering, [{opacity: 0}, {opacity: 1}]);
    }
  }

  function tabIndex(state, screenId) {
    const find = (node) => {
      if (!node) return -1;
      if (node.kind === "tabbed") {
        const index = (node.entries || []).findIndex((entry) => entry.id === screenId || (entry.kind && find(entry) >= 0));
        if (index >= 0) return index;
      }
      for (const entry of node.entries || []) if (entry.kind) { const found = find(entry); if (found >= 0) return found; }
      return find(node.presented);
    };
    return find(state && state.root);
  }

  // While an interaction is pending, the top screen follows its progress (as under a finger).
  function previewTransform(interaction, progress) {
    const type = interaction && interaction.transition ? interaction.transition.type : null;
    const moved = (progress * 100).toFixed(1);
    if (type === "pop" || type === "popTo") return `translateX(${moved}%)`;
    if (type === "dismiss") return `translateY(${moved}%)`;
    return "";
  }

  function applyInteractionPreview(progress) {
    const state = app.state;
    const top = state && state.top ? elements.get(state.top.id) : null;
    if (!top) return;
    const interaction = state.interaction;
    const value = progress ?? (interaction && handOnSlider() ? sliderProgress() : interaction ? interaction.progress : 0);
    const transform = interaction ? previewTransform(interaction, value) : "";
    if (!interaction && top.style.transform && top.style.transform !== "none") {
      // cancelled: spring back
      const from = top.style.transform;
      top.style.transform = "";
      animate(top, [{transform: from}, {transform: "translate(0, 0)"}], {duration: 200});
      return;
    }
    top.style.transform = transform;
  }

  function renderTransition(previous, state) {
    const transition = state.transition;
    const line = $("transition");
    if (!transition) {
      line.textContent = state.interaction ? `${state.interaction.action} pending` : "no transition";
      return;
    }
    const name = (screen) => (screen ? `${screen.feature} (${screen.id})` : "nothing");
    line.textContent = `${transition.type}${transition.style ? ` · ${transition.style}` : ""}${transition.interactive ? " · interactive" : ""}: ` +
      `${name(transition.from)} → ${name(transition.to)}${state.handledBy ? ` · handled by ${state.handledBy}` : ""}`;
  }

  function renderStackList() {
    const list = $("stack-list");
    const screens = (app.state.screens || []).slice().reverse();
    list.replaceChildren(...screens.map((screen, index) => el("li", {class: [index === 0 && "top", resultReceipt(app.state, screen.id) && "received-result"].filter(Boolean).join(" ")},
      el("code", {}, screen.feature), screen.handoff ? el("span", {class: "badge"}, "hand-off") : null,
      resultReceipt(app.state, screen.id) ? el("span", {class: "badge"}, `result → ${resultReceipt(app.state, screen.id).into}`) : null,
      ` ${screen.id} · ${screen.flow}`, compactJSON(screen.params) ? ` · ${compactJSON(screen.params)}` : "")));
  }

  // ---------------------------------------------------------------- JSON

  function highlightJSON(value) {
    const escaped = JSON.stringify(value, null, 2).replace(/[&<>]/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;"})[c]);
    return escaped.replace(/("(?:\\.|[^"\\])*")(\s*:)?|\b(true|false|null)\b|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/g,
      (match, string, colon, literal) => {
        if (string) return colon ? `<span class="j-key">${string}</span>${colon}` : `<span class="j-str">${string}</span>`;
        if (literal) return `<span class="j-lit">${literal}</span>`;
        return `<span class="j-num">${match}</span>`;
      });
  }

  function renderJSON() {
    $("state-json").innerHTML = highlightJSON(app.state);
  }

  // ---------------------------------------------------------------- log

  function renderLog() {
    const body = $("log");
    $("log-count").textContent = `${app.log.length} applied`;
    if (app.log.length === 0) {
      body.replaceChildren(el("tr", {class: "empty"}, el("td", {colspan: 6}, "No actions yet: press one.")));
      return;
    }
    body.replaceChildren(...app.log.map((entry) => el("tr", {"data-testid": "log-entry", "data-version": entry.version},
      el("td", {class: "num"}, entry.version),
      el("td", {}, el("code", {}, entry.type), entry.interactive ? el("span", {class: "badge"}, "interactive") : null),
      el("td", {}, entry.from || ""),
      el("td", {class: "params-cell"}, compactJSON(entry.params)),
      el("td", {}, entry.handledBy || ""),
      el("td", {}, entry.transition ? `${entry.transition.type}${entry.transition.style ? ` · ${entry.transition.style}` : ""}` : ""))));
    const scroll = body.closest(".log-scroll");
    scroll.scrollTop = scroll.scrollHeight;
  }

  // ---------------------------------------------------------------- actions

  // Whether the actions on offer were read for the state drawn (not for the one before a tap
  // drew ahead, or before the stream brought a version).
  function availableFresh() {
    const available = app.available;
    return Boolean(available && app.state && available.sessionId === app.state.sessionId && available.version === app.state.version);
  }

  // The actions the phone's own controls offer: only those read for the state drawn.
  function freshActions() {
    return availableFresh() ? app.available.actions || [] : [];
  }

  function availableAction(type) {
    return freshActions().find((action) => action.type === type);
  }

  // The panel keeps the list it has until the next one is read; it looks inactive meanwhile, and
  // while a tap drawn ahead waits for its answer, its buttons do nothing.
  function markActionsStale() {
    $("actions").dataset.stale = String(Boolean(app.available) && !availableFresh());
  }

  function actionFor(action) {
    const body = {type: action.type};
    if (action.from) body.from = action.from;
    return body;
  }

  // A sensible first value for a declared param, so one press does something.
  function defaultValue(action, param) {
    if (param.name === "progress") return "0.6";
    if (param.name === "velocity") return "";
    if (param.name === "content") return "Hello from the playground";
    if (param.name === "productId") return "pro.yearly";
    if (param.name === "transactionId") return `tx-${Date.now().toString(36)}`;
    if (param.name === "reason") return "card declined";
    if (param.name === "address") return action.type === "address.saved"
      ? '{"street": "Karl Johans gate 1", "city": "Oslo"}' : '{"street": "1 rue Neuve", "city": "Lyon"}';
    if (param.name === "index" && app.state) {
      const tabs = tabbedOnTop(app.state.root);
      return tabs ? String(((tabs.selected || 0) + 1) % Math.max(1, tabs.entries.length)) : "1";
    }
    if (param.type === "integer" || param.type === "number") return param.required ? "0" : "";
    return "";
  }

  function tabbedOnTop(root) {
    const cards = cardsOf(root);
    return cards.length ? cards[cards.length - 1].tabbed : null;
  }

  function paramInput(action, param, prefix = "param") {
    const id = `${prefix}-${action.type}-${param.name}`;
    const common = {id, name: param.name, "data-testid": id, "data-type": param.type};
    let input;
    switch (param.type) {
      case "boolean":
        input = el("input", {...common, type: "checkbox"});
        break;
      case "integer":
        input = el("input", {...common, type: "number", step: "1", inputmode: "numeric", value: defaultValue(action, param)});
        break;
      case "number":
        input = el("input", {...common, type: "number", step: "any", value: defaultValue(action, param)});
        break;
      default:
        input = el("input", {...common, type: "text", value: defaultValue(action, param), autocomplete: "off",
          placeholder: param.type === "string" ? "text" : `${param.type} (JSON)`});
    }
    if (param.required) input.required = true;
    return el("label", {class: "param", for: id},
      el("span", {class: "param-name"}, param.name, param.required ? el("abbr", {title: "required"}, "*") : null,
        el("span", {class: "param-type"}, param.type)),
      input);
  }

  // Reads the inputs of one action; null (and the input marked) when a required one is empty
  // or a value does not parse.
  function readParams(form, action) {
    const params = {};
    for (const param of action.params || []) {
      const input = form.elements[param.name];
      input.setCustomValidity("");
      if (param.type === "boolean") {
        params[param.name] = input.checked;
        continue;
      }
      const raw = input.value.trim();
      if (raw === "") {
        if (param.required) {
          input.setCustomValidity(`${param.name} is required`);
          input.reportValidity();
          return null;
        }
        continue;
      }
      let value = raw;
      if (param.type === "integer" || param.type === "number") {
        value = Number(raw);
        if (!Number.isFinite(value) || (param.type === "integer" && !Number.isInteger(value))) {
          input.setCustomValidity(`${param.name} must be ${param.type === "integer" ? "an integer" : "a number"}`);
          input.reportValidity();
          return null;
        }
      } else if (param.type !== "string") {
        try { value = JSON.parse(raw); } catch (error) {
          if (param.type !== "any") {
            input.setCustomValidity(`${param.name} must be JSON (${param.type})`);
            input.reportValidity();
            return null;
          }
        }
      }
      params[param.name] = value;
    }
    return params;
  }

  function renderActions() {
    markActionsStale();
    const container = $("actions");
    const actions = app.available ? app.available.actions || [] : [];
    if (app.session && app.session.deleted) {
      container.replaceChildren(el("p", {class: "placeholder", "data-testid": "session-deleted"}, "The session was deleted: start a new one."));
      return;
    }
    if (!app.available) {
      container.replaceChildren(el("p", {class: "placeholder"}, "Actions unknown."));
      return;
    }
    if (actions.length === 0) {
      container.replaceChildren(el("p", {class: "placeholder", "data-testid": "no-actions"}, "No action is available here."));
      return;
    }
    container.replaceChildren(...actions.map((action) => actionForm(action)));
  }

  // One action's form: its button and an input per declared param. `prefix` keeps the ids of a
  // second form of the same action (a hand-off's outcome on the phone) apart from the panel's:
  // `action-row-purchase.completed` in the panel, `handoff-row-purchase.completed` on the phone.
  function actionForm(action, {prefix = null, compact = false} = {}) {
    const testid = (name) => (prefix ? `${prefix}-${name}` : name);
    const form = el("form", {class: `action${compact ? " compact" : ""}`, "data-testid": `${prefix ? `${prefix}-row` : "action-row"}-${action.type}`, novalidate: true});
    const button = el("button", {type: "submit", class: prefix ? "action-button screen-button" : "action-button",
      "data-testid": testid(`action-${action.type}`), id: testid(`action-${action.type}`)}, prefix ? shortName(action.type) : action.type);
    form.append(
      el("div", {class: "action-head"}, button,
        el("span", {class: "action-meta"}, `→ ${action.handledBy}`, action.interactive ? el("span", {class: "badge"}, "interactive") : null)),
      ...(action.params || []).map((param) => paramInput(action, param, prefix ? `${prefix}-param` : "param")));
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const startedAt = performance.now();
      if (pendingPrediction()) return; // its buttons belong to the state before the one drawn ahead
      const params = readParams(form, action);
      if (params === null) return;
      const body = actionFor(action);
      if ((action.params || []).length) body.params = params;
      tap(action, body, startedAt).catch(() => {});
    });
    return form;
  }

  // ---------------------------------------------------------------- the interactive slider
  //
  // The slider is an edge swipe: its first move opens the interaction (the chosen action posted
  // with `interactive: true`), later moves send `interaction.update` (at most one in flight, the
  // latest value wins), and letting go sends `interaction.end` with the progress and the speed
  // of the last moves. `drag.phase` keeps these in order: idle → starting → open → ending → idle.

  const slider = () => $("interactive-slider");
  const drag = {phase: "idle", pointer: false, keyboard: false, samples: [], sent: null, inFlight: false, opening: null};

  function interactiveActions() {
    return app.available ? (app.available.actions || []).filter((action) => action.interactive) : [];
  }

  function sliderProgress() {
    return Number(slider().value) / 100;
  }

  function renderInteractive() {
    const section = $("interactive");
    const state = app.state;
    const interaction = state && state.interaction;
    const offered = interactiveActions();
    section.hidden = !interaction && offered.length === 0;
    const select = $("interactive-action");
    const current = select.value;
    if (interaction) {
      select.replaceChildren(el("option", {value: interaction.action}, interaction.action));
      select.disabled = true;
    } else {
      select.replaceChildren(...offered.map((action) => el("option", {value: action.type}, `${action.type} → ${action.handledBy}`)));
      // Prefer the flow's own action over the generic back.
      const preferred = offered.find((action) => action.type === current) || offered.find((action) => action.type !== "back") || offered[0];
      if (preferred) select.value = preferred.type;
      select.disabled = offered.length < 2;
    }
    syncSlider();
  }

  // The slider, the buttons and the status line follow the state, unless a hand is on the slider.
  function syncSlider() {
    const state = app.state;
    if (!state) return;
    const interaction = state.interaction;
    if (!interaction && drag.phase === "open") drag.phase = "idle"; // ended elsewhere (a button, the panel)
    $("interaction-end").disabled = !interaction;
    $("interaction-cancel").disabled = !interaction;
    if (drag.phase === "idle") slider().value = interaction ? Math.round(interaction.progress * 100) : 0;
    const status = $("interactive-status");
    if (interaction) {
      const progress = Math.round(interaction.progress * 100);
      const preview = interaction.transition ? `${interaction.transition.type} to ${interaction.transition.to ? interaction.transition.to.feature : "nothing"}` : "";
      status.textContent = `${interaction.action} pending at ${progress}%${preview ? ` (would ${preview})` : ""}: ` +
        `letting go ${interaction.progress > FINISH_PROGRESS ? "finishes" : "cancels unless flicked"}.`;
    } else {
      status.textContent = "No interaction pending.";
    }
    document.body.dataset.interaction = interaction ? "pending" : "none";
  }

  function handOnSlider() {
    return drag.phase === "starting" || drag.phase === "open" || drag.phase === "ending";
  }

  function openInteraction() {
    const type = $("interactive-action").value;
    const action = interactiveActions().find((candidate) => candidate.type === type);
    if (!action) return;
    drag.phase = "starting";
    drag.sent = null;
    drag.opening = act({...actionFor(action), interactive: true})
      .then(() => {
        if (drag.phase !== "starting") return; // let go already: endInteraction takes it from here
        drag.phase = "open";
        applyInteractionPreview(sliderProgress());
        sendProgress();
      })
      .catch(() => {
        drag.phase = "idle";
        syncSlider();
      })
      .finally(() => { drag.opening = null; });
  }

  // Sends the slider's latest value; at most one update is in flight.
  function sendProgress() {
    if (drag.phase !== "open" || drag.inFlight) return;
    const progress = sliderProgress();
    if (drag.sent === progress) return;
    drag.inFlight = true;
    drag.sent = progress;
    act({type: "interaction.update", params: {progress}})
      .catch(() => { drag.phase = "idle"; })
      .finally(() => {
        drag.inFlight = false;
        sendProgress();
      });
  }

  function onSliderInput() {
    drag.samples.push({progress: sliderProgress(), at: performance.now()});
    if (drag.samples.length > 8) drag.samples.shift();
    if (drag.phase === "idle") {
      if (app.state && app.state.interaction) drag.phase = "open"; // one left pending: continue it
      else return openInteraction();
    }
    if (drag.phase === "open") {
      applyInteractionPreview(sliderProgress());
      sendProgress();
    }
  }

  // Points per second over the last moves, the phone being as many points wide as it is pixels.
  function velocity() {
    const samples = drag.samples;
    if (samples.length < 2) return 0;
    const last = samples[samples.length - 1];
    if (performance.now() - last.at > 120) return 0; // held still before letting go
    const first = samples.find((sample) => last.at - sample.at < 150) || samples[0];
    const seconds = (last.at - first.at) / 1000;
    if (seconds <= 0) return 0;
    return Math.round(((last.progress - first.progress) / seconds) * $("phone").clientWidth);
  }

  // End (or, with `cancel`, cancel) the interaction once its opening and updates went out.
  function finishInteraction({cancel = false, speed = null} = {}) {
    if (drag.phase === "ending") return Promise.resolve();
    const progress = sliderProgress();
    const velocityNow = speed ?? velocity();
    drag.samples = [];
    drag.phase = "ending";
    return (drag.opening || Promise.resolve()).then(() => {
      if (!app.state || !app.state.interaction) return null;
      const action = cancel ? {type: "interaction.cancel"} : {type: "interaction.end", params: {progress, velocity: velocityNow}};
      return act(action).catch(() => {});
    }).finally(() => {
      drag.phase = "idle";
      drag.sent = null;
      syncSlider();
    });
  }

  function wireSlider() {
    const input = slider();
    input.addEventListener("pointerdown", () => {
      drag.pointer = true;
      drag.keyboard = false;
      drag.samples = [];
    });
    input.addEventListener("keydown", (event) => {
      drag.keyboard = true;
      if (event.key === "Enter" && handOnSlider()) { event.preventDefault(); finishInteraction({speed: 0}); }
      if (event.key === "Escape" && handOnSlider()) { event.preventDefault(); finishInteraction({cancel: true}); }
    });
    input.addEventListener("input", onSliderInput);
    // A mouse or a finger letting go ends the interaction; the keyboard ends it with Enter.
    const letGo = () => {
      if (!drag.pointer) return;
      drag.pointer = false;
      if (drag.phase === "starting" || drag.phase === "open") finishInteraction();
    };
    input.addEventListener("pointerup", letGo);
    input.addEventListener("pointercancel", letGo);
    input.addEventListener("change", () => { if (!drag.keyboard) letGo(); });
    $("interaction-end").addEventListener("click", () => finishInteraction({speed: 0}));
    $("interaction-cancel").addEventListener("click", () => finishInteraction({cancel: true}));
  }

  // ---------------------------------------------------------------- live events
  //
  // One EventSource on the current session. A ticket reopens its stream only within a short
  // window after the stream ended, so the page does not count on EventSource reconnecting by
  // itself (after a longer outage it would get a 401 and stop): on any error it closes the
  // stream, asks for a fresh ticket and opens a new one after a delay.
  // The stream's states are drawn through the request queue, after the page's own requests, and
  // only when newer than what the page shows; while several wait, only the newest is drawn.

  const RECONNECT_DELAYS = [500, 1000, 2000, 5000, 10000]; // ms, then the last one again
  const live = {generation: 0, source: null, timer: null, failures: 0, waiting: null, queued: false, release: null};

  function setStreamStatus(status, text = status) {
    const element = $("stream-status");
    element.dataset.status = status;
    element.textContent = text;
  }

  // Follows the current session (and stops following any other).
  function follow() {
    stopFollowing();
    if (!app.session || app.session.deleted) return;
    connect(live.generation, app.session, {first: true});
  }

  function stopFollowing(status = "off") {
    live.generation += 1;
    if (live.source) live.source.close();
    live.source = null;
    clearTimeout(live.timer);
    live.timer = null;
    live.failures = 0;
    live.waiting = null;
    if (live.release) live.release(); // a first connection never answered: the page is not busy with it
    live.release = null;
    setStreamStatus(status, status === "deleted" ? "session deleted" : status);
  }

  // Gets a ticket and opens the stream. The first connection holds the page busy until the
  // stream's first state is drawn, so "idle" after a session starts means it is followed.
  async function connect(generation, session, {first = false} = {}) {
    const release = first ? hold() : () => {};
    if (first) live.release = release;
    const current = () => generation === live.generation;
    const path = `/v1/sessions/${encodeURIComponent(session.id)}`;
    setStreamStatus(first ? "connecting" : "reconnecting");
    let ticket;
    try {
      ({ticket} = await api("POST", `${path}/events/ticket`, {token: session.token}));
    } catch (error) {
      release();
      if (!current()) return;
      if (error instanceof Problem && error.status === 404) return sessionDeleted(session);
      if (error instanceof Problem && error.status === 401) return stopFollowing("refused");
      return reconnectLater(generation, session);
    }
    if (!current()) return release();
    const source = new EventSource(`${path}/events?ticket=${encodeURIComponent(ticket)}`);
    live.source = source;
    source.addEventListener("state", (event) => {
      if (!current()) return;
      let state;
      try { state = JSON.parse(event.data); } catch (error) { return; }
      live.failures = 0;
      setStreamStatus("live");
      // An event is an answer too: the simulated network delays it like the others (in order,
      // as the delay is the same for each unless the slider moved).
      const use = () => {
        app.streamedVersion = state.version; // for the browser test: the stream brought it
        receive(generation, state);
        release(); // the draw just queued holds the page from here
      };
      if (app.latency > 0) {
        const held = hold();
        setTimeout(() => { use(); held(); }, app.latency);
      } else {
        use();
      }
    });
    source.addEventListener("deleted", () => {
      source.close();
      release();
      if (current()) sessionDeleted(session);
    });
    source.addEventListener("error", () => {
      // Closed before EventSource retries with the same, spent, ticket.
      source.close();
      release();
      if (!current()) return;
      live.source = null;
      reconnectLater(generation, session);
    });
  }

  function reconnectLater(generation, session) {
    const delay = RECONNECT_DELAYS[Math.min(live.failures, RECONNECT_DELAYS.length - 1)];
    live.failures += 1;
    setStreamStatus("reconnecting", `reconnecting in ${Math.round(delay / 100) / 10} s`);
    clearTimeout(live.timer);
    live.timer = setTimeout(() => {
      live.timer = null;
      if (generation === live.generation) connect(generation, session);
    }, delay);
  }

  function receive(generation, state) {
    const waiting = live.waiting;
    if (waiting && waiting.generation === generation && waiting.state.version >= state.version) return;
    live.waiting = {generation, state};
    if (live.queued) return;
    live.queued = true;
    enqueue(async () => {
      live.queued = false;
      const {generation: from, state: next} = live.waiting || {};
      live.waiting = null;
      if (!next || from !== live.generation || !app.session || next.sessionId !== app.session.id || !isNewer(next)) return;
      // A pending interaction that only moved changes neither the actions nor the graph.
      const moved = app.state && app.state.interaction && next.interaction && app.state.interaction.action === next.interaction.action;
      setState(next);
      await refresh({light: Boolean(moved)});
    }).catch(() => {});
  }

  function sessionDeleted(session) {
    stopFollowing("deleted");
    handOver.forget(session.id);
    if (!app.session || app.session.id !== session.id) return;
    app.session.deleted = true;
    app.available = null;
    renderActions();
    renderInteractive();
    refillCards();
    renderFollowLink();
    showProblem(new Problem(0, {title: "Session deleted",
      detail: `Session ${session.id} was deleted (by another tab or client). Start a new session to go on.`}));
  }

  // ---------------------------------------------------------------- following in another tab
  //
  // The link opens `/?follow=<id>`; the token waits in localStorage under the session id for the
  // new tab, which takes it out at once (and keeps it in its own sessionStorage, so a reload of
  // that tab still follows). One that no tab took is removed after HANDOVER_LIFETIME.

  const HANDOVER_LIFETIME = 60000; // ms
  const handOver = {
    key: (id) => `flowstack.follow.${id}`,
    offer(session, context) {
      const key = handOver.key(session.id);
      try {
        localStorage.setItem(key, JSON.stringify({token: session.token, context, at: Date.now()}));
      } catch (error) { return; } // storage disabled: the new tab says it has no token
      setTimeout(() => handOver.sweep(), HANDOVER_LIFETIME + 1000);
    },
    take(id) {
      const key = handOver.key(id);
      let value = null;
      try {
        value = localStorage.getItem(key) || sessionStorage.getItem(key);
        localStorage.removeItem(key);
        if (value) sessionStorage.setItem(key, value);
      } catch (error) { /* storage disabled */ }
      try {
        const handed = JSON.parse(value);
        return handed && typeof handed.token === "string" ? handed : null;
      } catch (error) {
        return null;
      }
    },
    forget(id) {
      try {
        localStorage.removeItem(handOver.key(id));
        sessionStorage.removeItem(handOver.key(id));
      } catch (error) { /* storage disabled */ }
    },
    // Removes hand-overs no tab took in time.
    sweep() {
      try {
        for (let index = localStorage.length - 1; index >= 0; index -= 1) {
          const key = localStorage.key(index);
          if (!key || !key.startsWith("flowstack.follow.")) continue;
          let at = 0;
          try { at = JSON.parse(localStorage.getItem(key)).at || 0; } catch (error) { /* unreadable: remove */ }
          if (Date.now() - at > HANDOVER_LIFETIME) localStorage.removeItem(key);
        }
      } catch (error) { /* storage disabled */ }
    },
  };

  function renderFollowLink() {
    const usable = Boolean(app.session && !app.session.deleted);
    $("follow-line").hidden = !usable;
    if (usable) $("follow-link").href = `/?follow=${encodeURIComponent(app.session.id)}`;
  }

  // ---------------------------------------------------------------- deep links

  function followLink(event) {
    event.preventDefault();
    const input = $("link-uri");
    const uri = input.value.trim();
    if (!uri) {
      input.focus();
      return;
    }
    act({type: "link", params: {uri}}).catch(() => {});
  }

  function renderPendingLink() {
    const pendingLink = app.state && app.state.pendingLink;
    $("pending-link").hidden = !pendingLink;
    if (!pendingLink) return;
    $("pending-link-uri").textContent = pendingLink.uri;
    $("pending-link-pattern").textContent = pendingLink.pattern || "";
  }

  // Actions a guard holds back (outermost first): each resumes when its guard's flow is done
  // and the guard holds, or is dropped when that flow is cancelled.
  function renderPendingActions() {
    const pending = (app.state && app.state.pendingActions) || [];
    $("pending-actions").hidden = pending.length === 0;
    $("pending-actions-list").replaceChildren(...pending.map((entry) => el("li", {"data-testid": "pending-action", "data-type": entry.action.type},
      el("code", {}, entry.action.type), ` from ${entry.source}`, compactJSON(entry.action.params) ? ` · ${compactJSON(entry.action.params)}` : "",
      " · waits for ", el("code", {}, entry.guard.flow), ` (${entry.guard.flowId})`)));
  }

  // ---------------------------------------------------------------- start

  function init() {
    $("form-user").value = randomUserId();
    $("form-country").value = "US";
    $("session-form").addEventListener("submit", (event) => {
      event.preventDefault();
      startSession();
    });
    $("random-user").addEventListener("click", () => { $("form-user").value = randomUserId(); });
    $("problem-close").addEventListener("click", clearProblem);
    for (const link of document.querySelectorAll("[data-format]")) {
      link.addEventListener("click", (event) => {
        event.preventDefault();
        showGraphText(link.dataset.format);
      });
    }
    wireSlider();
    const latency = $("latency-slider");
    const setLatency = () => {
      app.latency = Number(latency.value) || 0;
      $("latency-value").textContent = `${app.latency} ms`;
    };
    latency.addEventListener("input", setLatency);
    setLatency();
    $("link-form").addEventListener("submit", followLink);
    $("pending-link-cancel").addEventListener("click", () => act({type: "link.cancel"}).catch(() => {}));
    // Written on the press itself (a click, a middle click, Enter), just before the tab opens.
    const offer = (event) => {
      if (event.type === "auxclick" && event.button !== 1) return;
      if (app.session && !app.session.deleted) handOver.offer(app.session, app.context);
    };
    $("follow-link").addEventListener("click", offer);
    $("follow-link").addEventListener("auxclick", offer);
    handOver.sweep();
    document.body.dataset.state = "idle";
    const followed = new URLSearchParams(location.search).get("follow");
    if (followed) followSession(followed);
    else startSession();
  }

  init();
})();
