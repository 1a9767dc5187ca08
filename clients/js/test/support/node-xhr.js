// An XMLHttpRequest for node over node:http, as browsers and React Native report a response
// arriving: readyState 1 → 2 → 3 (with `progress` at every piece of text) → 4, `responseText`
// growing, `status` 0 and `error` when the connection fails. Only what `openXHREventStream` uses.
import http from 'node:http';

/** Every request made through `NodeXHR`, in order: method, url, headers, and the request itself. */
export const xhrRequests = /** @type {{method: string, url: string, headers: Record<string, string>, xhr: NodeXHR}[]} */ ([]);

export class NodeXHR {
  constructor() {
    this.readyState = 0;
    this.status = 0;
    this.responseText = '';
    /** @type {(() => void) | null} */ this.onprogress = null;
    /** @type {(() => void) | null} */ this.onreadystatechange = null;
    /** @type {(() => void) | null} */ this.onerror = null;
    /** @type {Record<string, string>} */ this.headers = {};
    this.method = 'GET';
    this.url = '';
    /** @type {http.ClientRequest | undefined} */ this.request = undefined;
    this.aborted = false;
  }

  /** @param {string} method @param {string} url */
  open(method, url) {
    this.method = method;
    this.url = url;
    this.state(1);
  }

  /** @param {string} name @param {string} value */
  setRequestHeader(name, value) {
    this.headers[name] = value;
  }

  send() {
    xhrRequests.push({ method: this.method, url: this.url, headers: { ...this.headers }, xhr: this });
    const request = http.request(this.url, { method: this.method, headers: this.headers }, (response) => {
      if (this.aborted) return;
      this.status = response.statusCode ?? 0;
      this.state(2);
      response.setEncoding('utf8');
      response.on('data', (/** @type {string} */ piece) => {
        if (this.aborted) return;
        this.responseText += piece;
        this.state(3);
        this.onprogress?.();
      });
      response.on('end', () => {
        if (!this.aborted) this.state(4);
      });
      response.on('error', () => this.fail());
    });
    request.on('error', () => this.fail());
    request.end();
    this.request = request;
  }

  /** As browsers do: DONE with status 0 and its `readystatechange` at once, then UNSENT. */
  abort() {
    if (this.aborted) return;
    this.aborted = true;
    this.request?.destroy();
    const open = this.readyState > 0 && this.readyState < 4;
    this.status = 0;
    if (open) this.state(4);
    this.readyState = 0;
  }

  fail() {
    if (this.aborted || this.readyState === 4) return;
    this.status = 0;
    this.state(4);
    this.onerror?.();
  }

  /** @param {number} readyState */
  state(readyState) {
    this.readyState = readyState;
    this.onreadystatechange?.();
  }
}
