// FlowStack replay: a thin client of POST /v1/replays (and POST /v1/releases/{id}/replay).
//
// The page computes nothing: it lists the flows (GET /v1/flows) with a version picker each
// ("as recorded" or a stored version), posts the replay, and draws the per-flow table the server
// answers, with where sessions first diverged, were refused or got stuck. The token is typed once
// and kept in this tab's sessionStorage, never in a URL. `document.body.dataset.state` is "busy"
// while a request runs and "idle" otherwise; scripts/browser.py waits on it.
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  const {hold, showProblem, clearProblem, el} = window.FlowStackCommon;
  const TOKEN_KEY = "flowstack.adminToken";

  const page = {flows: [], report: null};
  window.FlowStackReplay = page;

  const token = () => sessionStorage.getItem(TOKEN_KEY);

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

  async function loadFlows() {
    const answer = await window.FlowStackCommon.request("GET", "/v1/flows", {token: token()});
    page.flows = answer.flows || [];
    $("flow-versions").replaceChildren(...page.flows.map((flow) => {
      const options = [el("option", {value: ""}, "as recorded")];
      for (let version = 1; version <= flow.latestVersion; version += 1) {
        options.push(el("option", {value: String(version)}, `${version}${version === flow.liveVersion ? " (live)" : ""}`));
      }
      return el("label", {}, flow.name, el("select", {"data-flow": flow.name, "data-testid": `version-${flow.name}`}, ...options));
    }));
    $("run-replay").disabled = false;
  }

  async function replay() {
    const flows = {};
    for (const select of $("flow-versions").querySelectorAll("select")) {
      if (select.value) flows[select.dataset.flow] = Number(select.value);
    }
    const body = {days: Number($("days").value), sample: Number($("sample").value)};
    const release = $("release").value.trim();
    const path = release ? `/v1/releases/${encodeURIComponent(release)}/replay` : "/v1/replays";
    if (!release) body.flows = flows;
    const report = await window.FlowStackCommon.request("POST", path, {token: token(), body});
    page.report = report;
    clearProblem();
    render(report);
  }

  function render(report) {
    const totals = report.totals || {};
    const versions = Object.entries(report.versions || {}).map(([name, version]) => `${name} ${version}`).join(", ");
    $("report-subtitle").textContent = `${totals.sessions} sessions on ${versions || "their own versions"} · `
      + `${totals.same} same, ${totals.diverged} diverged, ${totals.refused} refused, ${totals.deadEnd} dead ends, `
      + `${totals.skipped} skipped · ${report.durationMs} ms`;
    const rows = Object.entries(report.flows || {}).map(([name, counts]) => {
      const where = [
        ...(counts.firstDivergence || []).map((item) => `diverges at ${item.screen} → ${item.replayedScreen ?? "no screen"}: ${item.count}`),
        ...(counts.refusals || []).map((item) => `refuses ${item.action} on ${item.screen} (${item.code}): ${item.count}`),
        ...(counts.deadEnds || []).map((item) => `stuck on ${item.screen}: ${item.count}`),
      ];
      return el("tr", {"data-testid": `replay-row-${name}`},
        el("td", {class: "variant-key"}, name),
        ...["sessions", "same", "diverged", "refused", "deadEnd", "notReached"].map((key) =>
          el("td", {class: "num", "data-testid": `${key}-${name}`}, String(counts[key] ?? 0))),
        el("td", {"data-testid": `where-${name}`}, ...where.map((line) => el("div", {}, line))));
    });
    $("replay-rows").replaceChildren(...rows);
    $("report-empty").hidden = rows.length > 0;
    if (rows.length === 0) $("report-empty").textContent = "No recorded session in that window.";
  }

  function init() {
    const stored = token();
    if (stored) $("admin-token").value = stored;
    $("token-form").addEventListener("submit", (event) => {
      event.preventDefault();
      sessionStorage.setItem(TOKEN_KEY, $("admin-token").value.trim());
      run(async () => { clearProblem(); await loadFlows(); });
    });
    $("replay-form").addEventListener("submit", (event) => {
      event.preventDefault();
      run(replay);
    });
    $("problem-close").addEventListener("click", clearProblem);
    if (stored) run(loadFlows);
    document.body.dataset.state = window.FlowStackCommon.busy() ? "busy" : "idle";
  }

  init();
})();
