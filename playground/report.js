// FlowStack experiment report: a thin client of GET /v1/experiments/{key}/report.
//
// The page computes nothing: it lists the experiments (GET /v1/experiments), asks for a report
// with the metric and baseline chosen, and draws what the server answers: each variant's rate,
// its uplift over the baseline with the 95% interval as a bar around 0, the p-value, the chance
// to win, and the sample-ratio check (a warning when the sessions do not match the weights).
// The routes are admin routes: the token is typed once and kept in this tab's sessionStorage,
// never in a URL. `document.body.dataset.state` is "busy" while a request runs and "idle"
// otherwise; scripts/browser.py waits on it. `?experiment=KEY` (and `metric`, `baseline`)
// preselect a report. The experiment's status is shown with the moves open from it (start,
// stop, conclude with a winner), each a PATCH of its status with the admin token.
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  const {hold, Problem, showProblem, clearProblem, el} = window.FlowStackCommon;
  const TOKEN_KEY = "flowstack.adminToken";

  const page = {
    experiments: [], // keys
    revisions: {}, // key → the revision listed, sent back in If-Match when changing its status
    report: null, // the last report drawn
  };
  // For the console and the browser test.
  window.FlowStackReport = page;

  // ---------------------------------------------------------------- HTTP

  // The admin routes, with the token this tab was given.
  function api(path) {
    return window.FlowStackCommon.request("GET", path, {token: sessionStorage.getItem(TOKEN_KEY)});
  }

  async function run(task) {
    const release = hold();
    try {
      await task();
    } catch (error) {
      showProblem(error);
    } finally {
      release();
    }
  }

  // ---------------------------------------------------------------- DOM helpers

  function fillSelect(select, values, selected, label = (value) => value) {
    select.replaceChildren(...values.map((value) => el("option", {value}, label(value))));
    if (values.includes(selected)) select.value = selected;
    select.disabled = values.length === 0;
  }

  // ---------------------------------------------------------------- formatting

  const percent = (value, digits = 1) => `${(value * 100).toFixed(digits)}%`;
  const signedPercent = (value, digits = 1) => `${value > 0 ? "+" : value < 0 ? "−" : ""}${Math.abs(value * 100).toFixed(digits)}%`;
  const pValue = (value) => (value < 0.0001 ? "< 0.0001" : value.toFixed(4));

  // ---------------------------------------------------------------- loading

  async function loadExperiments({wanted} = {}) {
    const answer = await api("/v1/experiments");
    page.experiments = (answer.experiments || []).map((experiment) => experiment.key);
    page.revisions = Object.fromEntries((answer.experiments || []).map((experiment) => [experiment.key, experiment.revision]));
    const chosen = wanted || $("experiment-select").value || page.experiments[0];
    fillSelect($("experiment-select"), page.experiments, chosen);
    $("refresh-report").disabled = page.experiments.length === 0;
    if (page.experiments.length === 0) {
      page.report = null;
      renderEmpty("No experiment yet: PUT /v1/experiments/{key} makes one (see the README's A/B test).");
      return;
    }
  }

  async function loadReport({metric, baseline} = {}) {
    const key = $("experiment-select").value;
    if (!key) return;
    const query = new URLSearchParams();
    if (metric) query.set("metric", metric);
    if (baseline) query.set("baseline", baseline);
    const suffix = query.toString() ? `?${query}` : "";
    const report = await api(`/v1/experiments/${encodeURIComponent(key)}/report${suffix}`);
    page.report = report;
    clearProblem();
    fillSelect($("metric-select"), report.metrics || [], report.metric);
    fillSelect($("baseline-select"), (report.variants || []).map((variant) => variant.key), report.baseline);
    renderReport(report);
    renderLifecycle(report);
  }

  // ---------------------------------------------------------------- lifecycle

  // Moves the experiment along its lifecycle with PATCH (a merge patch of its status), only if
  // it is still at the revision this page listed (If-Match: a 412 says someone changed it).
  async function moveExperiment(change) {
    const key = $("experiment-select").value;
    if (!key) return;
    await window.FlowStackCommon.request("PATCH", `/v1/experiments/${encodeURIComponent(key)}`, {
      body: change, token: sessionStorage.getItem(TOKEN_KEY), headers: {"If-Match": `"${page.revisions[key]}"`},
    });
    await loadExperiments({wanted: key});
    await loadReport({metric: $("metric-select").value, baseline: $("baseline-select").value});
  }

  const STATUS_TEXT = {
    draft: "A draft: stored, assigns no session until it is started.",
    running: "Running: new sessions are put into a variant.",
    stopped: "Stopped: new sessions get the live versions; sessions already in it keep their variant.",
    concluded: "Concluded: the winner's pinned flow versions were made live; final.",
  };

  // Status and winner, and the moves open from that status: start (a draft or a stopped one),
  // stop (running), conclude with a winner (running or stopped); none once concluded.
  function renderLifecycle(report) {
    const status = report.status || "running";
    $("lifecycle").hidden = false;
    $("experiment-status").textContent = status;
    $("experiment-status").dataset.status = status;
    $("experiment-status-text").textContent =
      status === "concluded" && report.winner ? `${STATUS_TEXT.concluded} Winner: ${report.winner}.` : STATUS_TEXT[status] || "";
    $("start-experiment").hidden = !(status === "draft" || status === "stopped");
    $("start-experiment").textContent = status === "stopped" ? "Restart" : "Start";
    $("stop-experiment").hidden = status !== "running";
    const concludable = status === "running" || status === "stopped";
    $("conclude-controls").hidden = !concludable;
    $("conclude-experiment").hidden = !concludable;
    if (concludable) {
      const variants = (report.variants || []).map((variant) => variant.key);
      fillSelect($("winner-select"), variants, $("winner-select").value);
      $("conclude-experiment").textContent = `Conclude: make ${$("winner-select").value} live`;
    }
  }

  // ---------------------------------------------------------------- drawing

  function renderEmpty(text) {
    $("lifecycle").hidden = true;
    $("report-rows").replaceChildren();
    $("report-empty").textContent = text;
    $("report-empty").hidden = false;
    $("report-subtitle").textContent = "";
    setSRM("none", "");
  }

  function setSRM(status, text) {
    $("srm").dataset.status = status;
    $("srm").textContent = text;
  }

  function renderReport(report) {
    $("report-empty").hidden = true;
    $("report-subtitle").textContent = `${report.experiment} · metric ${report.metric} · baseline ${report.baseline}`;
    const srm = report.srm || {};
    if (srm.warning) setSRM("warning", `⚠ ${srm.warning}`);
    else if (typeof srm.pValue === "number") setSRM("ok", `Sample ratio: the sessions match the weights (p = ${srm.pValue.toFixed(4)}).`);
    else setSRM("unknown", `Sample ratio: ${srm.reason || "not checked"}.`);

    const intervals = report.variants.map((variant) => variant.comparison).filter((c) => c && Array.isArray(c.ci));
    const scale = intervalScale(intervals);
    $("report-rows").replaceChildren(...report.variants.map((variant) => row(report, variant, scale)));
  }

  // One scale for every row, always including 0, with a little room on each side.
  function intervalScale(comparisons) {
    let low = 0;
    let high = 0;
    for (const comparison of comparisons) {
      low = Math.min(low, comparison.ci[0]);
      high = Math.max(high, comparison.ci[1]);
    }
    if (high - low < 1e-9) { low -= 0.1; high += 0.1; }
    const room = (high - low) * 0.06;
    return {low: low - room, high: high + room};
  }

  const position = (scale, value) => `${(((value - scale.low) / (scale.high - scale.low)) * 100).toFixed(3)}%`;

  function row(report, variant, scale) {
    const key = variant.key;
    const comparison = variant.comparison;
    const cells = [
      el("td", {class: "variant-key"}, key),
      el("td", {class: "num"}, typeof variant.weight === "number" ? percent(variant.weight, 0) : "–"),
      el("td", {class: "num", "data-testid": `sessions-${key}`}, variant.sessions),
      el("td", {class: "num", "data-testid": `conversions-${key}`}, variant.conversions),
      el("td", {class: "num", "data-testid": `rate-${key}`}, variant.rate === null ? "–" : percent(variant.rate)),
    ];
    if (!comparison) {
      cells.push(el("td", {class: "num"}, ""), el("td", {}, ""), el("td", {class: "num"}, ""), el("td", {}, ""));
    } else if (comparison.error) {
      cells.push(el("td", {class: "reason", colspan: "4", "data-testid": `reason-${key}`, title: comparison.error}, comparison.reason));
    } else {
      const [lower, upper] = comparison.ci;
      const side = lower > 0 ? "win" : upper < 0 ? "lose" : "flat";
      const bar = el("div", {class: "ci-bar", "data-testid": `ci-bar-${key}`, dataset: {lower: String(lower), upper: String(upper), side},
                             role: "img", "aria-label": `95% interval from ${signedPercent(lower)} to ${signedPercent(upper)}`},
        el("span", {class: "zero", style: `left: ${position(scale, 0)}`}),
        el("span", {class: "range", style: `left: ${position(scale, lower)}; width: calc(${position(scale, upper)} - ${position(scale, lower)})`}),
        el("span", {class: "point", style: `left: ${position(scale, comparison.uplift)}`}));
      cells.push(
        el("td", {class: `num ${comparison.uplift > 0 ? "up" : comparison.uplift < 0 ? "down" : ""}`, "data-testid": `uplift-${key}`},
           signedPercent(comparison.uplift)),
        el("td", {}, bar, el("div", {class: "ci-text"}, `${signedPercent(lower)} … ${signedPercent(upper)}`)),
        el("td", {class: "num", "data-testid": `p-value-${key}`}, pValue(comparison.pValue)),
        el("td", {"data-testid": `chance-${key}`},
           el("div", {class: "chance"}, el("span", {class: "meter", "aria-hidden": "true"}, el("span", {style: `width: ${percent(comparison.chanceToWin, 2)}`})),
              percent(comparison.chanceToWin))));
    }
    return el("tr", {class: key === report.baseline ? "baseline" : "", "data-testid": `variant-row-${key}`}, cells);
  }

  // ---------------------------------------------------------------- wiring

  // Tells the page's other panels (rollouts.js) that the token was accepted: they load then,
  // with the same token, and never with one the server refused.
  const loaded = () => document.dispatchEvent(new Event("flowstack:report-loaded"));

  function init() {
    const params = new URLSearchParams(location.search);
    const stored = sessionStorage.getItem(TOKEN_KEY);
    if (stored) $("admin-token").value = stored;

    $("token-form").addEventListener("submit", (event) => {
      event.preventDefault();
      sessionStorage.setItem(TOKEN_KEY, $("admin-token").value.trim());
      run(async () => {
        clearProblem();
        await loadExperiments();
        await loadReport();
        loaded();
      });
    });
    $("experiment-select").addEventListener("change", () => run(() => loadReport()));
    $("metric-select").addEventListener("change", () =>
      run(() => loadReport({metric: $("metric-select").value, baseline: $("baseline-select").value})));
    $("baseline-select").addEventListener("change", () =>
      run(() => loadReport({metric: $("metric-select").value, baseline: $("baseline-select").value})));
    $("refresh-report").addEventListener("click", () =>
      run(async () => {
        const metric = $("metric-select").value;
        const baseline = $("baseline-select").value;
        await loadExperiments();
        await loadReport({metric, baseline});
        loaded();
      }));
    $("problem-close").addEventListener("click", clearProblem);
    $("start-experiment").addEventListener("click", () => run(() => moveExperiment({status: "running"})));
    $("stop-experiment").addEventListener("click", () => run(() => moveExperiment({status: "stopped"})));
    $("winner-select").addEventListener("change", () => {
      $("conclude-experiment").textContent = `Conclude: make ${$("winner-select").value} live`;
    });
    $("conclude-experiment").addEventListener("click", () =>
      run(() => moveExperiment({status: "concluded", winner: $("winner-select").value})));

    if (stored) {
      run(async () => {
        await loadExperiments({wanted: params.get("experiment")});
        await loadReport({metric: params.get("metric"), baseline: params.get("baseline")});
        loaded();
      });
    }
    document.body.dataset.state = window.FlowStackCommon.busy() ? "busy" : "idle";
  }

  init();
})();
