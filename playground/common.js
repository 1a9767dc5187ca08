// Shared by the playground's pages (index.html, report.html): the busy/idle state the browser
// test waits on, HTTP calls whose failures are problem documents, showing a problem, and
// building DOM nodes. Loaded before each page's own script, it defines `window.FlowStackCommon`.
"use strict";

window.FlowStackCommon = (() => {
  const $ = (id) => document.getElementById(id);

  // `document.body.dataset.state` is "busy" while anything holds it, "idle" otherwise.
  let pending = 0;
  function hold() {
    pending += 1;
    document.body.dataset.state = "busy";
    let released = false;
    return () => {
      if (released) return;
      released = true;
      pending -= 1;
      if (pending === 0) document.body.dataset.state = "idle";
    };
  }

  // Whether anything holds the page now.
  const busy = () => pending > 0;

  // A failed request: its status, the problem document (or what stood for one), the request.
  class Problem extends Error {
    constructor(status, body, request) {
      const problem = typeof body === "object" && body !== null ? body : {title: `HTTP ${status}`, detail: String(body || "")};
      super(problem.detail || problem.title || `HTTP ${status}`);
      this.status = status;
      this.problem = problem;
      this.request = request;
    }
  }

  // One request; JSON answers are parsed, anything but 2xx throws a Problem. `headers` adds
  // to the usual ones (If-Match, say).
  async function request(method, path, {body, token, accept = "application/json", headers: extra = {}} = {}) {
    const headers = {...extra, Accept: accept};
    if (token) headers.Authorization = `Bearer ${token}`;
    if (body !== undefined) headers["Content-Type"] = "application/json";
    let response;
    try {
      response = await fetch(path, {method, headers, body: body === undefined ? undefined : JSON.stringify(body), cache: "no-store"});
    } catch (error) {
      throw new Problem(0, {title: "The server did not answer", detail: `${method} ${path}: ${error.message}`}, `${method} ${path}`);
    }
    const text = await response.text();
    let data = text;
    if ((response.headers.get("Content-Type") || "").includes("json")) {
      try { data = JSON.parse(text); } catch (error) { /* keep the text */ }
    }
    if (!response.ok) throw new Problem(response.status, data, `${method} ${path}`);
    return data;
  }

  // Shows a problem in the page's #problem box: title and status, detail, code, chain, request,
  // and each field error with its pointer.
  function showProblem(error) {
    const problem = error instanceof Problem ? error.problem : {title: "Error", detail: String(error && error.message || error)};
    const status = error instanceof Problem && error.status ? ` (${error.status})` : "";
    $("problem-title").textContent = `${problem.title || "Error"}${status}`;
    const extra = [];
    if (problem.code) extra.push(`code ${problem.code}`);
    if (Array.isArray(problem.chain)) extra.push(`chain ${problem.chain.join(" → ")}`);
    if (error instanceof Problem && error.request) extra.push(error.request);
    $("problem-detail").textContent = [problem.detail, extra.length ? `[${extra.join("; ")}]` : ""].filter(Boolean).join(" ");
    $("problem-errors").replaceChildren(...(problem.errors || []).map((item) => el("li", {}, `${item.pointer || ""} ${item.detail || ""}`.trim())));
    $("problem").hidden = false;
  }

  function clearProblem() {
    $("problem").hidden = true;
  }

  // `el("button", {class, dataset, onclick, disabled: true}, "text", child…)`.
  function el(tag, attributes = {}, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attributes)) {
      if (value === undefined || value === null || value === false) continue;
      if (name === "class") node.className = value;
      else if (name === "dataset") Object.assign(node.dataset, value);
      else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
      else node.setAttribute(name, value === true ? "" : value);
    }
    for (const child of children.flat(Infinity)) {
      if (child === undefined || child === null || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  return {hold, busy, Problem, request, showProblem, clearProblem, el};
})();
