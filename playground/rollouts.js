// FlowStack report page, rollouts: a thin client of GET /v1/releases (each release's `rollout`).
//
// Computes nothing: for every release with a rollout it draws the server's state, percentage,
// per-side figures (sessions; refused actions, dead ends and conversions with their rates) and
// the verdict in words. Loaded with the experiments (the same admin token, the same "Load"
// and "Refresh"); a server without releases shows why in the panel instead.
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  const {hold, showProblem, el} = window.FlowStackCommon;
  const TOKEN_KEY = "flowstack.adminToken";
  const page = {releases: []};
  window.FlowStackRollouts = page;

  const percent = (value) => `${(value * 100).toFixed(1)}%`;
  const rate = (count, sessions) => (sessions > 0 ? percent(count / sessions) : "–");

  async function load() {
    const token = sessionStorage.getItem(TOKEN_KEY);
    if (!token) return;
    let answer;
    try {
      answer = await window.FlowStackCommon.request("GET", "/v1/releases", {token});
    } catch (error) {
      if (error && error.status === 404) return render([], "This server has no releases route.");
      throw error;
    }
    page.releases = (answer.releases || []).filter((release) => release.rollout);
    render(page.releases, "No release was rolled out yet: POST /v1/releases/{id}/activate with a rollout (see the README's Rollouts).");
  }

  function render(releases, emptyText) {
    $("rollouts-empty").textContent = emptyText;
    $("rollouts-empty").hidden = releases.length > 0;
    $("rollout-list").replaceChildren(...releases.map(card));
  }

  function side(name, label, arm) {
    return el("tr", {"data-testid": `rollout-arm-${name}`},
      el("td", {}, label),
      el("td", {class: "num"}, arm.sessions),
      el("td", {class: "num"}, `${arm.refused} (${rate(arm.refused, arm.sessions)})`),
      el("td", {class: "num"}, `${arm.deadEnds} (${rate(arm.deadEnds, arm.sessions)})`),
      el("td", {class: "num"}, `${arm.conversions} (${rate(arm.conversions, arm.sessions)})`));
  }

  function card(release) {
    const rollout = release.rollout;
    const arms = rollout.arms || {};
    const flows = Object.entries(rollout.flows || {}).map(([name, version]) => `${name} v${version}`).join(", ");
    const metric = (rollout.plan && rollout.plan.guardrails && rollout.plan.guardrails.metric) || "onboarded";
    return el("article", {class: "rollout", "data-testid": `rollout-${release.id}`, dataset: {state: rollout.state}},
      el("h3", {},
        `Release ${release.id}`, " ",
        el("span", {class: "rollout-state", "data-testid": `rollout-state-${release.id}`}, rollout.state), " ",
        el("span", {class: "muted", "data-testid": `rollout-percentage-${release.id}`}, `${rollout.percentage}% of new sessions`)),
      el("p", {class: "hint"}, release.description || "", flows ? ` · ${flows}` : ""),
      el("p", {class: "verdict", "data-testid": `rollout-verdict-${release.id}`}, rollout.verdict),
      el("table", {class: "report"},
        el("thead", {}, el("tr", {},
          el("th", {}, "side"), el("th", {class: "num"}, "sessions"), el("th", {class: "num"}, "refused actions"),
          el("th", {class: "num"}, "dead ends"), el("th", {class: "num"}, metric))),
        el("tbody", {},
          side("new", "release", arms.new || {sessions: 0, refused: 0, deadEnds: 0, conversions: 0}),
          side("old", "before it", arms.old || {sessions: 0, refused: 0, deadEnds: 0, conversions: 0}))));
  }

  function reload() {
    const release = hold();
    load().catch(showProblem).finally(release);
  }

  function init() {
    // After the experiments' load (report.js, the same token), and only once it succeeded: a
    // token the server refused is never tried here, so a wrong one shows one 401, not two.
    // (Guessing from the page's busy state raced with report.js's own request.)
    document.addEventListener("flowstack:report-loaded", reload);
    $("refresh-rollouts").addEventListener("click", reload);
  }

  init();
})();
