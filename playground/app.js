// FlowStack playground: a session drawn as a phone, run by FlowStack's JavaScript client.
//
// The page is the client's first user (clients/js, served by the server under /sdk/ and imported
// here with no build step): `FlowSession` starts or resumes the session, keeps it in this
// browser's localStorage (`KeyValueSessionStore`), runs the session's bundle on the local engine,
// so every tap, with params or not, is drawn at once, and posts it in the background with
// `If-Match` and an idempotency key. The client's events say what the server made of it: a
// confirmation draws nothing more, a correction (another device acted first, a refusal) fades the
// phone to the server's state. Versions committed elsewhere (another tab, another client) come
// through the client's event stream; `/?follow=<session id>` opens a tab on an existing session,
// its token handed over through localStorage since it must never be in a URL.
//
// The page holds no navigation logic of its own and no second path for taps: what it draws is the
// client's state, the actions it offers are the local engine's. It still reads from the server
// what only the server has: the action log and the session graph, once the client has nothing on
// the wire. The offline switch makes the client offline (taps queue, shown at once; switched back,
// they go as one batch); the latency slider makes the network slow on purpose, in the page itself,
// for the client's requests as for the page's own. `document.body.dataset.state` is "busy" while
// the client has taps on the wire, a read or an animation runs, and "idle" otherwise;
// scripts/browser.py waits on it.
import * as sdk from "/sdk/index.js";

const {FlowSession, KeyValueSessionStore, SessionKey, EventStreamParser, localEngine, randomKey} = sdk;

(() => {
  const $ = (id) => document.getElementById(id);
  const {hold, Problem, showProblem, clearProblem, el} = window.FlowStackCommon;
  const reducedMotion = window.matchMedia("(prefers-reduced-motion: reduce)");
  const DURATION = 320; // ms, one transition
  const PEEK = 22; // px of each screen behind the top one that stays visible
  const PEEKS = 4; // screens drawn behind the top one; deeper ones are only listed
  const STATUS_BAR = 32; // px at the top of the phone left to the status bar
  const FINISH_PROGRESS = 0.5; // as the server decides interaction.end (for the status line only)
  const LAST_USER = "flowstack.playground.user"; // the user whose session a reload resumes

  const app = {
    session: null, // {id, token, userId, version, deleted?}
    client: null, // the FlowSession drawn
    context: null, // {attributes, traits} the session was started with
    state: null, // the state document drawn (the client's shown state)
    actions: [], // what the local engine offers on the state drawn (with params)
    log: [],
    graphFormat: "svg",
    latency: 0, // ms the page waits before each request and before using each answer
    tap: null, // the last tap: {id, key, action, local, status, drawMs, answerMs, reason}
    tapTimes: [], // ms from each tap drawn by the local engine to its stack drawn (the last 1,000)
    draws: [], // the last states drawn, {sessionId, version, topId, why}: a version drawn twice shows here
    corrections: 0, // corrections faded in
    listAnimations: [], // the last list changes animated: {version, screen, id, change} (for the browser test)
  };
  // For the console and the browser test: the live session, its state and what is on offer.
  window.FlowStackPlayground = app;

  // ---------------------------------------------------------------- busy / idle

  // The page's own reads run one after the other; a failed one does not stop the next.
  let chain = Promise.resolve();
  function enqueue(task) {
    const release = hold();
    const run = chain.then(task);
    chain = run.catch(() => {});
    return run.finally(release);
  }

  // While the client has taps on the wire (or fetches the bundle), the page is busy; once it has
  // nothing left to send, the page reads the log and the graph of the version the server
  // confirmed, then is idle. Offline, the queue waits and the page is idle.
  const sync = {release: null, watching: false, refreshed: ""};

  function track() {
    setTimeout(syncBusy, 0); // after the client's own turn: a drain starts right after its events
  }

  function syncBusy() {
    const client = app.client;
    renderQueue();
    const busy = Boolean(client) && !client.closed && !client.isOffline && !client.isSettled;
    if (busy) {
      if (!sync.release) sync.release = hold();
      if (!sync.watching) {
        sync.watching = true;
        client.settled().then(() => {
          sync.watching = false;
          syncBusy();
        });
      }
      return;
    }
    if (client && !client.closed && !client.isOffline && !(app.session && app.session.deleted)) {
      const confirmed = client.confirmedState;
      const stamp = `${confirmed.sessionId}@${confirmed.version}`;
      if (stamp !== sync.refreshed) {
        sync.refreshed = stamp;
        refresh(); // holds the page itself until the log and the graph are drawn
      }
    }
    if (sync.release) sync.release();
    sync.release = null;
  }

  // ---------------------------------------------------------------- HTTP

  // The page's own reads (the log, the graph) with this session's token unless told otherwise,
  // after the simulated delay, handing the answer (or the failure) over only after the delay again.
  async function api(method, path, {body, token = app.session && app.session.token, accept = "application/json"} = {}) {
    await networkDelay();
    let answer;
    try {
      answer = await window.FlowStackCommon.request(method, path, {body, token, accept});
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

  // The `fetch` the client is given: the slider's delay before each request and before its
  // answer is used; an event stream's events are each delayed too, and watched for the status
  // line (live, reconnecting) and for the session being deleted. `generation` is the session's:
  // a stream of a session the page left changes nothing.
  function pageFetch(generation) {
    return async (input, init) => {
      const stream = /\/events(\?|$)/.test(String(input));
      if (stream && generation === sessions.generation) setStreamStatus(sessions.streamed ? "reconnecting" : "connecting");
      await networkDelay();
      let response;
      try {
        response = await fetch(input, init);
      } catch (error) {
        await networkDelay();
        throw error;
      }
      if (!stream || response.status !== 200 || !response.body) {
        await networkDelay();
        return response;
      }
      return watchedStream(response, generation);
    };
  }

  function watchedStream(response, generation) {
    const decoder = new TextDecoder();
    const parser = new EventStreamParser();
    const current = () => generation === sessions.generation;
    const body = response.body.pipeThrough(new TransformStream({
      async transform(chunk, controller) {
        if (app.latency > 0) await new Promise((resolve) => setTimeout(resolve, app.latency));
        for (const event of parser.feed(decoder.decode(chunk, {stream: true}))) {
          if (!current()) continue;
          if (event.event === "state") {
            sessions.streamed = true;
            setStreamStatus("live");
            try { app.streamedVersion = JSON.parse(event.data).version; } catch (error) { /* the client ignores it too */ }
          } else if (event.event === "deleted") {
            setTimeout(() => current() && sessionDeleted(app.session), 0);
          }
        }
        controller.enqueue(chunk);
      },
      flush() {
        if (current() && app.client && app.client.following) setStreamStatus("reconnecting");
      },
    }));
    return new Response(body, {status: response.status, statusText: response.statusText, headers: response.headers});
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

  // ---------------------------------------------------------------- sessions

  const store = new KeyValueSessionStore(window.localStorage);
  const sessions = {generation: 0, streamed: false, unsubscribe: []};

  function formContext() {
    const country = $("form-country").value.trim().toUpperCase();
    const attributes = {platform: $("form-platform").value};
    if (country) attributes.country = country;
    return {userId: $("form-user").value.trim(), attributes, traits: {horizontalSizeClass: $("form-size").value}};
  }

  // The engine the client runs the bundle on; it tells the page when a bundle is loaded, so the
  // actions on offer are drawn again (the client loads one after a version made elsewhere).
  const engine = localEngine(sdk);
  const engineFactory = {
    fromBundle(text) {
      const loaded = engine.fromBundle(text);
      setTimeout(engineChanged, 0);
      return loaded;
    },
  };

  // Starts (or, with `resume`, resumes from the store) the session of `context.userId` on the
  // client and draws it; the session the page showed before is closed (it stays on the server).
  async function openSession(context, {resume = false} = {}) {
    const generation = ++sessions.generation;
    const previous = app.session;
    closeClient();
    // One session kept per page: a new one replaces what the store kept for this user, and for
    // the user shown before (a tab following that session keeps its token for itself).
    if (!resume) await store.remove(new SessionKey(location.origin, context.userId));
    if (previous && previous.userId !== context.userId) await store.remove(new SessionKey(location.origin, previous.userId));
    const client = await FlowSession.start({
      server: location.origin, userId: context.userId, attributes: context.attributes, traits: context.traits,
      store, engine: engineFactory, fetch: pageFetch(generation), newKey: () => (lastKey = randomKey()),
    });
    if (generation !== sessions.generation) {
      client.close();
      return;
    }
    app.client = client;
    app.context = {attributes: context.attributes, traits: context.traits};
    app.session = {id: client.sessionId, token: client.token, userId: context.userId, version: client.state.version};
    app.log = [];
    sync.refreshed = "";
    clearProblem();
    try { localStorage.setItem(LAST_USER, JSON.stringify(context)); } catch (error) { /* storage disabled */ }
    let fresh = true;
    sessions.unsubscribe = [
      client.subscribe(clientEvent),
      client.subscribeStates((state) => {
        drawn(state, {fresh});
        fresh = false;
      }),
    ];
    $("offline-switch").checked = false;
    renderOffline();
    setStreamStatus("connecting");
    client.follow({ticket: true});
    track();
  }

  function closeClient() {
    for (const stop of sessions.unsubscribe) stop();
    sessions.unsubscribe = [];
    sessions.streamed = false;
    if (app.client) app.client.close();
    app.client = null;
    setStreamStatus("off");
  }

  function startSession({resume = false, context = formContext()} = {}) {
    if (!context.userId) {
      $("form-user").focus();
      return Promise.resolve();
    }
    const release = hold();
    return openSession(context, {resume})
      .then(() => leaveFollowedAddress())
      .catch(showProblem)
      .finally(release);
  }

  // A tab opened on `/?follow=<id>` that starts its own session no longer needs that address
  // (a reload would go back to the old session) nor the token it kept for it.
  function leaveFollowedAddress() {
    const followed = new URLSearchParams(location.search).get("follow");
    if (followed === null || (app.session && app.session.id === followed)) return;
    handOver.forget(followed);
    history.replaceState(null, "", "/");
  }

  // Opens a session started in another tab (`/?follow=<id>`) with the token that tab handed over:
  // it goes into the store as this user's session (unless the store has it already, with taps of
  // its own), so the client resumes it.
  async function followSession(id) {
    const handed = handOver.take(id);
    if (!handed) {
      showProblem(new Problem(0, {title: "No token for this session",
        detail: `This browser holds no token for session ${id}: open the tab with “Follow in a new tab” on the page ` +
          "that started it (a token never travels in a URL), or start a new session."}));
      renderFollowLink();
      return;
    }
    const release = hold();
    try {
      const state = await api("GET", `/v1/sessions/${encodeURIComponent(id)}`, {token: handed.token});
      const key = new SessionKey(location.origin, state.userId);
      const kept = await store.load(key);
      if (!kept || kept.sessionId !== id) {
        await store.save({server: location.origin, sessionId: id, token: handed.token, userId: state.userId, queue: []});
      }
      $("form-user").value = state.userId;
      const context = handed.context || {attributes: {}, traits: {}};
      await openSession({userId: state.userId, attributes: context.attributes, traits: context.traits}, {resume: true});
    } catch (error) {
      showProblem(error);
      if (error instanceof Problem && (error.status === 401 || error.status === 404)) handOver.forget(id);
    } finally {
      release();
    }
  }

  // ---------------------------------------------------------------- taps
  //
  // A press posts nothing itself: `client.send` applies the action on the local engine, which
  // draws the next state at once (through the state listener below), keeps the tap in the store
  // and posts it in the background (several waiting taps go as one batch). What the server made
  // of it comes as the client's events: confirmed (nothing is drawn again), corrected (the phone
  // fades to the server's state), or, offline, the tap waits in the queue.

  let taps = 0;
  let lastKey = null; // the idempotency key the client made last (the tap's, read right after send)
  let tapping = null; // the tap being drawn now, inside `send`
  let drawReason = null; // why the next state the client publishes changes: "corrected", "remote", "restarted"
  const open = new Map(); // key → tap record, until the server answered it

  function tap(body, startedAt = performance.now()) {
    const client = app.client;
    if (!client || (app.session && app.session.deleted)) return Promise.resolve(null);
    taps += 1;
    // Without its engine (a version made elsewhere drops it until the bundle is read again) the
    // client draws a tap from the server's predictions when it can, and otherwise waits.
    const drawnBy = client.hasLocalEngine ? "engine" : "prediction";
    const record = {id: taps, key: null, action: body.type, local: false, drawnBy: "answer", status: "waiting", startedAt, drawMs: null, answerMs: null, reason: null};
    app.tap = record;
    tapping = record;
    lastKey = null;
    let sent;
    try {
      sent = client.send(body); // the local engine draws it before this returns
    } finally {
      tapping = null;
    }
    record.key = lastKey;
    const queued = client.pending.find((item) => item.key === record.key);
    if (queued && queued.expected) {
      record.local = true;
      record.drawnBy = drawnBy;
      record.status = client.isOffline ? "queued" : "pending";
      open.set(record.key, record);
    }
    renderTap();
    renderQueue();
    track();
    return sent.then((state) => {
      if (!record.local) finish(record, "applied");
      return state;
    }, (error) => {
      // The local engine refused it (nothing was posted), or a tap that waited was refused.
      open.delete(record.key);
      finish(record, "refused", refusalReason(error));
      showProblem(problemOf(error));
      return null;
    });
  }

  function finish(record, status, reason = null) {
    if (record.answerMs !== null && status !== "refused") return;
    record.status = status;
    record.answerMs = performance.now() - record.startedAt;
    record.reason = reason;
    if (record === app.tap) renderTap();
  }

  // What the client reports: each open tap the server answered is confirmed or corrected; a
  // correction or another device's version is drawn by the state listener, which is told why.
  function clientEvent(event) {
    if (event.type === "corrected") {
      drawReason = "corrected";
      const correction = event.correction;
      for (const item of correction.taps) {
        const record = open.get(item.key);
        open.delete(item.key);
        if (record) finish(record, "corrected", correctionReason(correction));
      }
      if (correction.reason === "refused" && correction.problem) {
        showProblem(new Problem(Number(correction.problem.status) || 409, correction.problem, "POST " + sessionPath("/actions")));
      }
    } else if (event.type === "remote") {
      drawReason = "remote";
    } else if (event.type === "restarted") {
      drawReason = "restarted";
      app.session = {id: app.client.sessionId, token: app.client.token, userId: app.session.userId, version: event.restart.state.version};
      for (const item of event.restart.dropped) {
        const record = open.get(item.key);
        open.delete(item.key);
        if (record) finish(record, "corrected", `the session was gone: ${event.restart.reason}`);
      }
    } else if (event.type === "offline" || event.type === "online") {
      renderOffline();
    }
    const pending = new Set((app.client ? app.client.pending : []).map((item) => item.key));
    for (const [key, record] of open) {
      if (pending.has(key)) {
        record.status = app.client.isOffline ? "queued" : "pending";
        if (record === app.tap) renderTap();
        continue;
      }
      open.delete(key);
      finish(record, "confirmed");
    }
    track();
  }

  // The client's state changed: a tap drawn by the local engine, a correction, another device's
  // version, a new session.
  function drawn(navigation, {fresh = false} = {}) {
    const why = tapping ? "tap" : drawReason || (fresh ? "start" : "answer");
    drawReason = null;
    setState(navigation.document, {fresh, why, correction: why === "corrected"});
    if (tapping) {
      tapping.drawMs = performance.now() - tapping.startedAt;
      app.tapTimes.push(tapping.drawMs);
      if (app.tapTimes.length > 1000) app.tapTimes.shift();
    }
  }

  // The engine's refusal, or the server's, as the page's problem box shows it.
  function problemOf(error) {
    if (error instanceof Problem) return error;
    if (error && error.name === "FlowError") {
      return new Problem(error.status || 422, {title: "Refused by the local engine (nothing was posted)", detail: error.message,
        code: error.code, chain: error.chain});
    }
    if (error && error.name === "ActionRefused") return new Problem(error.status, error.problem || {title: error.message});
    return new Problem(0, {title: "The client failed", detail: String(error && error.message || error)});
  }

  function refusalReason(error) {
    const problem = problemOf(error);
    return `${problem.status || "no answer"}${problem.problem.code ? ` ${problem.problem.code}` : ""}`;
  }

  // Why the server did not take what was drawn, in a few words.
  function correctionReason(correction) {
    const problem = correction.problem || {};
    if (correction.reason === "versionMismatch") {
      return `412: another client acted first${problem.currentVersion !== undefined ? `, the session is at version ${problem.currentVersion}` : ""}`;
    }
    if (correction.reason === "refused") return `${problem.status || 409}${problem.code ? ` ${problem.code}` : problem.title ? ` ${problem.title}` : ""}`;
    return "the server answered another state";
  }

  function renderTap() {
    const line = $("tap-status");
    const record = app.tap;
    if (!record) return;
    const ms = (value) => (value === null ? "" : `${value < 10 ? value.toFixed(1) : Math.round(value)} ms`);
    const by = record.drawnBy === "engine" ? "by the local engine" : "from the server's prediction";
    const text = {
      pending: `${record.action}: drawn ${by} in ${ms(record.drawMs)}, waiting for the server…`,
      queued: `${record.action}: drawn ${by} in ${ms(record.drawMs)}, queued while offline`,
      waiting: `${record.action}: no local engine yet, waiting for the server…`,
      confirmed: `${record.action}: confirmed (drawn in ${ms(record.drawMs)}, answered in ${ms(record.answerMs)})`,
      corrected: `${record.action}: corrected by the server (${record.reason}; drawn in ${ms(record.drawMs)}, answered in ${ms(record.answerMs)})`,
      applied: `${record.action}: applied (no local engine: drawn with the answer, in ${ms(record.answerMs)})`,
      refused: `${record.action}: refused (${record.reason}, in ${ms(record.answerMs)})`,
    }[record.status];
    line.textContent = text;
    line.dataset.status = record.status;
    line.dataset.tap = record.id;
    line.dataset.action = record.action;
    line.dataset.drawnBy = record.drawnBy;
    line.dataset.drawMs = record.drawMs === null ? "" : record.drawMs.toFixed(2);
    line.dataset.answerMs = record.answerMs === null ? "" : record.answerMs.toFixed(1);
  }

  // ---------------------------------------------------------------- offline

  // The switch makes the client offline: taps are drawn and queued (the count shows), nothing is
  // posted, the stream stops; switched back, the queue goes as one batch and the stream resumes.
  function setOffline(offline) {
    if (!app.client) return;
    app.client.setOffline(offline);
    renderOffline();
    if (offline) setStreamStatus("offline");
    track();
  }

  function renderOffline() {
    const offline = Boolean(app.client && app.client.isOffline);
    document.body.dataset.offline = String(offline);
    $("offline-status").textContent = !app.client ? "" : offline
      ? (app.client.forcedOffline ? "offline (switched off): taps are queued" : "offline: the server does not answer; taps are queued")
      : "online";
    renderQueue();
  }

  function renderQueue() {
    const count = app.client ? app.client.pendingCount : 0;
    const line = $("queue-length");
    line.dataset.count = String(count);
    line.textContent = count === 0 ? "nothing queued" : `${count} tap${count === 1 ? "" : "s"} not yet confirmed`;
  }

  // What the state implies that only the server has: the log and the graph of the version it
  // confirmed (the actions on offer are the local engine's).
  function refresh() {
    return enqueue(() => Promise.all([loadLog(), loadGraph()]));
  }

  // A bundle was loaded: the actions on offer are the local engine's from now on.
  function engineChanged() {
    if (!app.state) return;
    renderAvailable();
    track();
  }

  function renderAvailable({cards = true} = {}) {
    if (cards) app.actions = app.client && !(app.session && app.session.deleted) ? app.client.availableActions : [];
    const top = app.state && app.state.top;
    $("actions-from").textContent = !app.client ? "" : top
      ? `From ${top.feature} (${top.id}), nearest flow first${app.client.hasLocalEngine ? "" : " (no local engine yet)"}:`
      : "Nothing is on screen.";
    keepingFocus($("actions"), renderActions);
    renderInteractive();
    if (cards) keepingFocus($("phone"), refillCards, ".card.top");
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

  // The server's log and graph, read once the client has nothing on the wire: they are drawn as
  // read (reads run one after the other, so the last one read is the newest).
  async function loadLog() {
    if (!app.session) return;
    try {
      const page = await api("GET", sessionPath("/actions?limit=1000"));
      app.log = page.actions || [];
    } catch (error) {
      app.log = [];
      showProblem(error);
    }
    renderLog();
  }

  async function loadGraph() {
    const graph = $("graph");
    if (!app.session) return;
    try {
      const svgText = await api("GET", sessionPath(`/graph?format=svg`), {accept: "image/svg+xml"});
      const svg = parseSVG(svgText);
      graph.replaceChildren(svg);
      graph.dataset.current = (svg.querySelector("g.node.current") || {}).id || "";
      scrollGraphToCurrent();
    } catch (error) {
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
    if (correction) app.corrections += 1;
    app.draws.push({sessionId: state.sessionId, version: state.version, topId: state.top ? state.top.id : null, why});
    if (app.draws.length > 50) app.draws.shift();
    // The local engine's actions for this state, before the cards (their back and tab buttons) are drawn.
    app.actions = app.client && !(app.session && app.session.deleted) ? app.client.availableActions : [];
    keepingFocus($("phone"), () => renderPhone(previous, state, {correction}), ".card.top");
    renderStackList();
    renderTransition(previous, state);
    syncSlider();
    renderPanelsSoon();
  }

  // The panels around the phone (the session's facts, the actions with their forms, the state's
  // JSON, the pending link and actions, the follow link) are drawn in a task of their own right after the stack, so
  // a tap's stack is on screen without waiting for them; taps in a row draw them once. The page
  // is busy until they are drawn.
  let panels = null;
  function renderPanelsSoon() {
    if (panels) return;
    panels = hold();
    setTimeout(() => {
      const release = panels;
      panels = null;
      try {
        if (app.state) {
          renderFacts();
          renderAvailable({cards: false});
          renderJSON();
          renderPendingLink();
          renderPendingActions();
          renderFollowLink();
        }
      } finally {
        release();
      }
    }, 0);
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
  // in (for a back button), the tabbed flow whose tab it is (for the tab bar), how many
  // presentations it is under (for a sheet) and the flows its actions bubble through, its own
  // last (for its list's row taps). The walk follows what `state.screens` lists:
  // every entry of a stack, the selected tab of a tab bar, then what a flow presents.
  function cardsOf(root) {
    const cards = [];
    const visit = (node, context) => {
      const tabbed = node.kind === "tabbed" ? node : context.tabbed;
      const flows = [...context.flows, node.flow];
      const entries = node.kind === "tabbed" ? [node.entries[node.selected || 0]].filter(Boolean) : node.entries || [];
      entries.forEach((entry, index) => {
        const canPop = node.kind === "stacked" && index > 0;
        if (entry.kind) {
          visit(entry, {...context, tabbed, flows});
        } else {
          cards.push({
            screen: entry, flow: node.flow, flowId: node.id, tabbed, modal: context.modal, style: context.style, flows,
            sheetStart: context.sheetStart && cards.every((card) => card.modal < context.modal),
            previous: canPop ? node.entries[index - 1] : null,
          });
        }
      });
      if (node.presented) {
        visit(node.presented, {tabbed: null, modal: context.modal + 1, style: node.presented.style || "sheet", sheetStart: true, flows});
      }
    };
    if (root) visit(root, {tabbed: null, modal: 0, style: null, sheetStart: false, flows: []});
    return cards;
  }

  const elements = new Map(); // screen id → its card element, kept across renders

  function renderPhone(previous, state, {correction = false} = {}) {
    const phone = $("phone");
    const cards = cardsOf(state.root);
    const changes = listChangesToAnimate(previous, state, {correction});
    const listsBefore = new Map(); // screen id → where its list's rows were drawn, for the lists that animate
    const wanted = new Set(cards.map((card) => card.screen.id));
    const oldTopId = previous && previous.top ? previous.top.id : null;
    const oldTop = oldTopId ? elements.get(oldTopId) : null;

    // Screens no longer shown: the old top may leave with an animation, the rest go at once.
    let leaving = null;
    for (const [id, element] of elements) {
      if (wanted.has(id)) continue;
      elements.delete(id);
      if (element === oldTop) {
        // Marked at once, its animation starts at the next frame: it takes no press meanwhile.
        leaving = element;
        element.classList.add("leaving");
        element.setAttribute("aria-hidden", "true");
      } else {
        element.remove();
      }
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
      if (changes.has(card.screen.id)) listsBefore.set(card.screen.id, listGeometry(element));
      fillCard(element, card, depth === 0, state);
      element.hidden = !visible.includes(card);
      const offset = STATUS_BAR + Math.max(0, visible.indexOf(card)) * PEEK;
      element.style.top = `${offset}px`;
      element.style.setProperty("--depth", Math.min(depth, PEEKS));
      before = element;
    });
    // A screen leaving stays where it is (moving it would move the focus off the button just
    // pressed, at a cost): `.card.leaving` draws it over the others while it leaves.

    const top = state.top;
    phone.dataset.topFeature = top ? top.feature : "";
    phone.dataset.topId = top ? top.id : "";
    phone.dataset.version = state.version;
    phone.dataset.depth = cards.length;
    phone.classList.toggle("empty", cards.length === 0);
    if (cards.length === 0) phone.dataset.message = "Nothing on screen";

    animateSoon(() => {
      animateTransition(previous, state, leaving, top ? elements.get(top.id) : null, {correction});
      animateLists(state, changes, listsBefore);
    });
    applyInteractionPreview();
  }

  // A card's content is drawn once for what it shows (its signature) and copied after: a tab
  // bar's screens come back as they were (as a tab bar controller keeps its tabs' views), and the
  // screens under the top are not drawn again while they stay the same. The phone's buttons carry
  // what they do in data attributes (`pressPhone` reads them), so a copy needs no listeners of
  // its own. Screens with a list (their rows animate) or a hand-off (its forms) are drawn each time.
  const drawnFor = new WeakMap(); // element → the signature of the content it holds
  const copies = new Map(); // signature → a detached element holding that content, newest last
  const COPIES = 64;

  // Fills `element` with what `draw()` returns, or with a copy of what it returned before for
  // the same signature; a null signature draws each time.
  function fillOnce(element, signature, draw) {
    if (signature !== null && drawnFor.get(element) === signature) return;
    const copy = signature === null ? undefined : copies.get(signature);
    if (copy) {
      element.replaceChildren(...copy.cloneNode(true).childNodes);
    } else {
      element.replaceChildren(...draw());
      if (signature !== null) {
        copies.set(signature, element.cloneNode(true));
        if (copies.size > COPIES) copies.delete(copies.keys().next().value);
      }
    }
    drawnFor.set(element, signature);
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

    fillOnce(element, cardSignature(card, isTop, state, received), () => cardContent(card, isTop, state, received));
  }

  // Everything `cardContent` draws from, as one string; null for a card drawn each time.
  function cardSignature(card, isTop, state, received) {
    const {screen} = card;
    if (screen.sections || screen.handoff) return null;
    const tabbed = card.tabbed && [card.tabbed.flow, card.tabbed.selected || 0, (card.tabbed.entries || []).map((entry) => entry.feature || entry.flow)];
    const previous = card.previous && (card.previous.feature || card.previous.flow);
    const actions = freshActions().map((action) => [action.type, action.handledBy, (action.params || []).length]);
    return JSON.stringify(["card", screen.id, screen.feature, screen.params || null, card.flow, card.flowId, card.modal, card.style || null,
      Boolean(card.sheetStart), tabbed || null, previous || null, isTop, isTop ? state.interaction || null : null,
      received ? received.into : null, actions]);
  }

  function cardContent(card, isTop, state, received) {
    const {screen} = card;
    const back = availableAction("back");
    const navLeft = card.previous
      ? el("button", {type: "button", class: "nav-back", "data-testid": isTop ? "phone-back" : null, tabindex: isTop ? null : "-1",
          disabled: !(isTop && back), title: back ? "back" : "back is not available", "data-press": "back"},
          `‹ ${shortName(card.previous.feature || card.previous.flow)}`)
      : card.sheetStart
        ? el("button", {type: "button", class: "nav-back", "data-testid": isTop ? "phone-close" : null, tabindex: isTop ? null : "-1",
            disabled: !(isTop && back), title: "back (dismisses the presented flow)", "data-press": "back"}, "Close")
        : el("span");
    const params = Object.entries(screen.params || {});
    return [
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
        screen.sections ? listView(card, isTop && !state.interaction) : null,
        isTop && !state.interaction ? (screen.handoff ? handoffOutcomes(card) : screenButtons(card)) : null,
        isTop && state.interaction ? el("div", {class: "pending"}, `${state.interaction.action} pending at ${Math.round(state.interaction.progress * 100)}%`) : null),
      card.tabbed ? tabBar(card.tabbed, isTop) : null,
    ].filter(Boolean);
  }

  // A press of the phone's back, close, screen or tab buttons (drawn by `cardContent`).
  function pressPhone(event) {
    const button = event.target instanceof Element ? event.target.closest("button[data-press]") : null;
    if (!button || button.disabled || !$("phone").contains(button)) return;
    const press = button.dataset.press;
    if (press === "back") {
      const back = availableAction("back");
      if (back) tap(actionFor(back));
    } else if (press === "form") {
      const form = document.querySelector(`[data-testid="action-row-${CSS.escape(button.dataset.type)}"]`);
      if (form) form.requestSubmit();
    } else if (press === "tab") {
      const select = tabSelection(button.dataset.flow);
      if (select) tap({...actionFor(select), params: {index: Number(button.dataset.index)}});
    }
  }

  // The selectTab action of the tabbed flow `flow`, if it is on offer.
  function tabSelection(flow) {
    return freshActions().find((action) => action.handledBy === flow && /(^|\.)selectTab$/.test(action.type));
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
        "data-press": "form", "data-type": action.type}, shortName(action.type))));
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
    const select = tabSelection(tabbed.flow);
    return el("nav", {class: "tabbar", "aria-label": `${tabbed.flow} tabs`, "data-testid": isTop ? "tabbar" : null},
      (tabbed.entries || []).map((entry, index) => {
        const selected = index === (tabbed.selected || 0);
        return el("button", {
          type: "button", class: `tab${selected ? " selected" : ""}`, "aria-pressed": selected ? "true" : "false",
          "data-testid": isTop ? `tab-${index}` : null, tabindex: isTop ? null : "-1",
          disabled: !isTop || !select || selected,
          title: select ? `${select.type} {index: ${index}}` : "no selectTab action is available",
          "data-press": "tab", "data-flow": tabbed.flow, "data-index": index,
        }, el("span", {class: "tab-icon", "aria-hidden": "true"}), shortName(entry.feature || entry.flow));
      }));
  }

  // ---------------------------------------------------------------- lists

  const MAX_ROWS = 500; // rows drawn per list; a longer list says how many more it has
  const ROW_TEXT = 90; // characters of a row's values drawn on it

  // The row-tap actions a row of `kind` on `card` sends, first the one a tap sends, then the
  // others (as an app's swipe actions): the available actions whose `rowKinds` hold the kind, as
  // the engine lists them for the screen on top (nearest flow first, a kind a nearer flow refuses
  // left out). Rows of the screens under it take no taps.
  function rowActions(card, kind) {
    if (card.screen.id !== (app.state && app.state.top && app.state.top.id)) return [];
    return app.actions
      .filter((action) => action.rowKinds && action.rowKinds.some((listed) => listed.normalize("NFC") === kind.normalize("NFC")))
      .map((action) => ({type: action.type, handledBy: action.handledBy}));
  }

  // A row's values in one short line: strings as they are, anything else as JSON.
  function rowText(values) {
    const text = Object.values(values || {})
      .map((value) => (typeof value === "string" ? value : JSON.stringify(value)))
      .join(" · ");
    if (!text) return "(no values)";
    return text.length > ROW_TEXT ? `${text.slice(0, ROW_TEXT - 1)}…` : text;
  }

  // A screen's list drawn as a table: each section's title over its rows, each row its kind and
  // its values. On the top screen a row is a button that sends the row tap (drawn at once by the
  // local engine, like any tap), and each further row action of its kind has a small button.
  function listView(card, interactive) {
    const {screen} = card;
    const actions = new Map(); // kind → its row actions
    const actionsOf = (kind) => {
      if (!actions.has(kind)) actions.set(kind, rowActions(card, kind));
      return actions.get(kind);
    };
    let budget = MAX_ROWS;
    let hidden = 0;
    const sections = screen.sections.map((section) => {
      const rows = section.rows.slice(0, Math.max(0, budget));
      budget -= rows.length;
      hidden += section.rows.length - rows.length;
      return el("section", {class: "list-section", "data-section-id": section.id, "data-testid": interactive ? `section-${section.id}` : null},
        el("h3", {class: "section-title"}, section.title || section.id,
          section.indexTitle ? el("span", {class: "section-index", title: "index title"}, section.indexTitle) : null),
        section.rows.length === 0 ? el("p", {class: "no-rows"}, "no rows") : null,
        el("ul", {class: "rows"}, rows.map((row) => {
          const [first, ...others] = actionsOf(row.kind);
          return el("li", {class: "row", "data-row-id": row.id, "data-kind": row.kind},
            el("button", {type: "button", class: "row-tap", "data-testid": interactive ? `row-${row.id}` : null,
              tabindex: interactive ? null : "-1", disabled: !(interactive && first),
              title: first ? `${first.type} {row: ${row.id}} → ${first.handledBy}` : `no rule takes a tap on a ${row.kind} row here`,
              onclick: () => first && tap({type: first.type, from: screen.id, row: row.id})},
              el("span", {class: "row-text"}, rowText(row.values)),
              el("code", {class: "row-kind"}, row.kind)),
            others.map((action) => el("button", {type: "button", class: "row-action",
              "data-testid": interactive ? `row-${row.id}-${action.type}` : null, tabindex: interactive ? null : "-1",
              disabled: !interactive, title: `${action.type} {row: ${row.id}} → ${action.handledBy}`,
              onclick: () => tap({type: action.type, from: screen.id, row: row.id})}, shortName(action.type))));
        })));
    });
    return el("div", {class: "list", "data-testid": interactive ? "top-list" : null},
      sections,
      hidden ? el("p", {class: "no-rows"}, `… ${hidden} more rows`) : null);
  }

  // The list changes of `state`'s transition, by screen id, when they lead from what is drawn:
  // the version right after the one drawn, in the same session. A jump (versions missed, a new
  // session) or a correction (what was drawn ahead was wrong) just redraws.
  function listChangesToAnimate(previous, state, {correction = false} = {}) {
    const changes = new Map();
    const transition = state.transition;
    if (correction || !previous || !transition || !Array.isArray(transition.lists) || transition.animated === false) return changes;
    if (previous.sessionId !== state.sessionId || state.version !== previous.version + 1) return changes;
    for (const list of transition.lists) changes.set(list.id, list);
    return changes;
  }

  // Where a card's sections and rows are drawn before it is drawn again, with their elements
  // (the ones that leave are put back to leave) and what each followed.
  function listGeometry(card) {
    const rows = new Map();
    const sections = new Map();
    let previousSection = null;
    for (const section of card.querySelectorAll(".list-section:not(.ghost)")) {
      const id = section.dataset.sectionId;
      sections.set(id, {rect: section.getBoundingClientRect(), node: section, after: previousSection});
      let previousRow = null;
      for (const row of section.querySelectorAll(".row:not(.ghost)")) {
        rows.set(row.dataset.rowId, {rect: row.getBoundingClientRect(), node: row, section: id, after: previousRow});
        previousRow = row.dataset.rowId;
      }
      previousSection = id;
    }
    return {rows, sections};
  }

  function noteListAnimation(state, screen, id, change) {
    app.listAnimations.push({version: state.version, screen, id, change});
    if (app.listAnimations.length > 100) app.listAnimations.shift();
  }

  // Runs `keyframes` on `node`, marked `data-animating` meanwhile (what the browser test reads).
  function animateListItem(node, mark, keyframes, options) {
    node.dataset.animating = mark;
    return animate(node, keyframes, options).finally(() => { delete node.dataset.animating; });
  }

  // An element that is no longer in the list, put back where it was, leaves (it takes no press).
  function ghostOut(node, place) {
    node.classList.add("ghost");
    node.setAttribute("aria-hidden", "true");
    for (const part of [node, ...node.querySelectorAll("[data-testid]")]) part.removeAttribute("data-testid");
    for (const button of node.querySelectorAll("button")) button.disabled = true;
    place(node);
    const height = node.getBoundingClientRect().height;
    node.dataset.animating = "out";
    animate(node, [{opacity: 1, height: `${height}px`}, {opacity: 0, height: "0px", transform: "translateX(24px)"}])
      .finally(() => node.remove());
  }

  // Animates each card's list from how it was drawn to how it is now, as a table view applies a
  // batch update: deleted sections and rows leave from where they were, inserted ones come in,
  // moved ones move from their old place (FLIP), then reloaded ones flash. With reduced motion
  // the animations last a millisecond (see `animate`), and the changes are still marked.
  function animateLists(state, changes, before) {
    for (const [screenId, list] of changes) {
      const card = elements.get(screenId);
      const old = before.get(screenId);
      const view = card && card.querySelector(".list");
      if (!view || !old || card.hidden) continue;
      const section = (id) => view.querySelector(`.list-section[data-section-id="${CSS.escape(id)}"]`);
      const row = (id, ghosts = false) => view.querySelector(`.row${ghosts ? "" : ":not(.ghost)"}[data-row-id="${CSS.escape(id)}"]`);

      for (const {id} of list.sections.deleted) {
        const was = old.sections.get(id);
        if (!was) continue;
        ghostOut(was.node, (node) => {
          const after = was.after && view.querySelector(`.list-section[data-section-id="${CSS.escape(was.after)}"]`);
          if (after) after.after(node); else view.prepend(node);
        });
        noteListAnimation(state, screenId, id, "sectionDeleted");
      }
      for (const {id} of list.rows.deleted) {
        const was = old.rows.get(id);
        const home = was && section(was.section);
        if (!home) continue;
        ghostOut(was.node, (node) => {
          const after = was.after && home.querySelector(`.row[data-row-id="${CSS.escape(was.after)}"]`);
          if (after) after.after(node); else home.querySelector(".rows").prepend(node);
        });
        noteListAnimation(state, screenId, id, "deleted");
      }

      // Moves, measured once the leaving elements are back in place.
      const moves = [...list.sections.moved.map(({id}) => [section(id), old.sections.get(id), "sectionMoved", id]),
        ...list.rows.moved.map(({id}) => [row(id), old.rows.get(id), "moved", id])];
      for (const [node, was, change, id] of moves) {
        if (!node || !was || was.rect.height === 0) continue;
        const now = node.getBoundingClientRect();
        const dy = was.rect.top - now.top;
        const dx = was.rect.left - now.left;
        animateListItem(node, "move", [{transform: `translate(${dx}px, ${dy}px)`}, {transform: "translate(0, 0)"}]);
        noteListAnimation(state, screenId, id, change);
      }

      const comings = [...list.sections.inserted.map(({id}) => [section(id), "sectionInserted", id]),
        ...list.rows.inserted.map(({id}) => [row(id), "inserted", id])];
      for (const [node, change, id] of comings) {
        if (!node) continue;
        const height = node.getBoundingClientRect().height;
        animateListItem(node, "in", [{opacity: 0, height: "0px", transform: "translateX(-24px)"}, {opacity: 1, height: `${height}px`, transform: "translateX(0)"}]);
        noteListAnimation(state, screenId, id, change);
      }

      const flash = [{boxShadow: "inset 0 0 0 999px rgba(255, 214, 90, .55)"}, {boxShadow: "inset 0 0 0 999px rgba(255, 214, 90, 0)"}];
      for (const {id} of list.sections.reloaded) {
        const node = section(id);
        const title = node && node.querySelector(".section-title");
        if (!title) continue;
        animateListItem(title, "reload", flash, {duration: DURATION * 2});
        noteListAnimation(state, screenId, id, "sectionReloaded");
      }
      for (const {id} of list.rows.reloaded) {
        const node = row(id);
        if (!node) continue;
        animateListItem(node, "reload", flash, {duration: DURATION * 2});
        noteListAnimation(state, screenId, id, "reloaded");
      }
    }
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

  // Runs `start` (which starts a transition's animations) at the next frame: starting an
  // animation makes the browser compute the whole page's style at once, which is that frame's
  // work anyway, so a tap's stack is in the page without waiting for it. A hidden tab has no
  // frames: it runs at once (and animates nothing). The page is busy until it ran.
  function animateSoon(start) {
    if (document.hidden) return start();
    const release = hold();
    requestAnimationFrame(() => {
      try {
        start();
      } finally {
        release();
      }
    });
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
      `${name(transition.from)} → ${name(transition.to)}${state.handledBy ? ` · handled by ${state.handledBy}` : ""}` +
      (transition.lists || []).map((list) => ` · list ${list.id}: ${listSummary(list)}`).join("");
  }

  // One list's changes in a few words: "+1 row, −1 section".
  function listSummary(list) {
    const parts = [];
    for (const [level, noun] of [["sections", "section"], ["rows", "row"]]) {
      for (const [change, sign] of [["inserted", "+"], ["deleted", "−"], ["moved", "↕"], ["reloaded", "⟳"]]) {
        const count = list[level][change].length;
        if (count) parts.push(`${sign}${count} ${noun}${count > 1 ? "s" : ""}`);
      }
    }
    return parts.join(", ") || "unchanged";
  }

  function renderStackList() {
    const screens = (app.state.screens || []).slice().reverse();
    const result = app.state.transition && app.state.transition.result;
    const signature = JSON.stringify(["stack", screens, result ? [result.id, result.into] : null]);
    fillOnce($("stack-list"), signature, () => screens.map((screen, index) => {
      const received = resultReceipt(app.state, screen.id);
      return el("li", {class: [index === 0 && "top", received && "received-result"].filter(Boolean).join(" ")},
        el("code", {}, screen.feature), screen.handoff ? el("span", {class: "badge"}, "hand-off") : null,
        received ? el("span", {class: "badge"}, `result → ${received.into}`) : null,
        ` ${screen.id} · ${screen.flow}`, compactJSON(screen.params) ? ` · ${compactJSON(screen.params)}` : "");
    }));
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

  // The actions the local engine offers on the state drawn (the phone's own controls and the
  // panel); none while the client has no engine and a tap waits for its answer.
  // The actions a press posts as they are: a row tap (`rowKinds`) is sent from its row in the
  // phone's list, with the row, never from a button or a form that has none.
  function freshActions() {
    return app.actions.filter((action) => !action.rowKinds);
  }

  function availableAction(type) {
    return freshActions().find((action) => action.type === type);
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
    const container = $("actions");
    const actions = app.actions;
    if (app.session && app.session.deleted) {
      container.replaceChildren(el("p", {class: "placeholder", "data-testid": "session-deleted"}, "The session was deleted: start a new one."));
      return;
    }
    if (!app.client) {
      container.replaceChildren(el("p", {class: "placeholder"}, "Actions unknown."));
      return;
    }
    if (actions.length === 0) {
      container.replaceChildren(el("p", {class: "placeholder", "data-testid": "no-actions"}, "No action is available here."));
      return;
    }
    // A row tap is sent from its row in the phone's list (a form would send it with no row).
    const plain = freshActions();
    const rowTaps = actions.filter((action) => action.rowKinds);
    container.replaceChildren(...plain.map((action) => actionForm(action)),
      ...rowTaps.map((action) => el("p", {class: "row-tap-note", "data-testid": `row-tap-${action.type}-${action.rowKinds.join("+")}`},
        el("code", {}, action.type), ` — tap a ${action.rowKinds.join(" or ")} row in the phone's list`)));
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
      const params = readParams(form, action);
      if (params === null) return;
      const body = actionFor(action);
      if ((action.params || []).length) body.params = params;
      tap(body, startedAt);
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
    return freshActions().filter((action) => action.interactive);
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
    drag.opening = tap({...actionFor(action), interactive: true})
      .then((state) => {
        if (!state) throw new Error("the interaction did not open");
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
    // Drawn at once by the local engine; the next one goes once this one is kept (the client
    // sends the updates made meanwhile together).
    tap({type: "interaction.update", params: {progress}})
      .then((state) => { if (!state) drag.phase = "idle"; })
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
      return tap(action);
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
  // The client follows the session's event stream (a ticket per connection, as a browser must:
  // the token never goes in a URL) and draws what other devices commit; the page only watches the
  // stream go by (`pageFetch`) for the status line and for the session being deleted.

  function setStreamStatus(status, text = status) {
    const element = $("stream-status");
    element.dataset.status = status;
    element.textContent = text;
  }

  function sessionDeleted(session) {
    if (!session || !app.session || app.session.id !== session.id || app.session.deleted) return;
    sessions.generation += 1;
    handOver.forget(session.id);
    app.session.deleted = true;
    closeClient();
    store.remove(new SessionKey(location.origin, session.userId)).catch(() => {});
    setStreamStatus("deleted", "session deleted");
    app.actions = [];
    renderActions();
    renderInteractive();
    refillCards();
    renderFollowLink();
    renderOffline();
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
    tap({type: "link", params: {uri}});
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
    $("phone").addEventListener("click", pressPhone);
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
    $("pending-link-cancel").addEventListener("click", () => tap({type: "link.cancel"}));
    $("offline-switch").addEventListener("change", (event) => setOffline(event.target.checked));
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
    if (followed) {
      followSession(followed);
      return;
    }
    // A reload resumes the session of the last user from the store (with its queued taps);
    // a first visit starts one for a new user.
    const last = lastContext();
    if (!last) {
      startSession();
      return;
    }
    $("form-user").value = last.userId;
    $("form-country").value = last.attributes.country || "";
    $("form-platform").value = last.attributes.platform || "ios";
    $("form-size").value = last.traits.horizontalSizeClass || "compact";
    startSession({resume: true, context: last});
  }

  // The user (and attributes) the page last started or resumed a session for, if it reads.
  function lastContext() {
    try {
      const context = JSON.parse(localStorage.getItem(LAST_USER));
      return context && typeof context.userId === "string" && context.attributes && context.traits ? context : null;
    } catch (error) {
      return null;
    }
  }

  init();
})();

