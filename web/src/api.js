// The studio's only way out: same-origin requests to the server's public HTTP API
// (docs/server.md) with the signed-in bearer token.  A refusal becomes an ApiError carrying
// the server's own message, which the studio shows as it is.
import { parseJson, toJson } from "./json.js";

const TOKEN_KEY = "omnigraph.studio.token";

export class ApiError extends Error {
  constructor(status, code, message, body) {
    super(message);
    this.status = status;
    this.code = code;
    this.body = body;
  }
}

export const token = {
  get: () => sessionStorage.getItem(TOKEN_KEY),
  set: (t) => sessionStorage.setItem(TOKEN_KEY, t),
  clear: () => sessionStorage.removeItem(TOKEN_KEY),
};

export async function api(path, { method = "GET", body } = {}) {
  const headers = {};
  const t = token.get();
  if (t) headers.authorization = `Bearer ${t}`;
  if (body !== undefined) headers["content-type"] = "application/json";
  let resp;
  try {
    resp = await fetch(path, { method, headers, body: body === undefined ? undefined : toJson(body), credentials: "omit", cache: "no-store" });
  } catch (e) {
    throw new ApiError(0, "network", `the server did not answer (${e.message})`);
  }
  const text = await resp.text();
  let json = null;
  try { json = text ? parseJson(text) : null; } catch { /* not JSON */ }
  if (!resp.ok) {
    const msg = json && json.error ? json.error : text || resp.statusText;
    throw new ApiError(resp.status, json && json.code, msg, json);
  }
  return json;
}

export const g = (graph, rest) => `/graphs/${encodeURIComponent(graph)}/${rest}`;
