// Recovery codes, as `solitaire account export` writes them: "sr1." and the URL-safe
// base64 (no padding) of {"server", "token", "name"} as compact JSON. The code is a password;
// the page shows it only when its player asks.
const PREFIX = "sr1.";

function toBase64Url(text) {
  let binary = "";
  for (const byte of new TextEncoder().encode(text)) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function fromBase64Url(body) {
  const padded = body.replace(/-/g, "+").replace(/_/g, "/") + "=".repeat((4 - (body.length % 4)) % 4);
  const binary = atob(padded);
  return new TextDecoder().decode(Uint8Array.from(binary, (c) => c.charCodeAt(0)));
}

export function exportCode(server, token, name) {
  return PREFIX + toBase64Url(JSON.stringify({ server, token, name }));
}

// The server's WebSocket URL as the terminal client keeps it (ws://host:port/ws).
function normalise(url) {
  url = url.trim();
  if (!url.includes("://")) url = `ws://${url}`;
  let [scheme, rest] = url.split("://", 2);
  scheme = { http: "ws", https: "wss" }[scheme] || scheme;
  if (!rest.includes("/")) rest += "/ws";
  return `${scheme}://${rest}`;
}

export function importCode(code, server) {
  code = code.replace(/\s+/g, "");
  if (!code.startsWith(PREFIX)) throw new Error(`not a recovery code: it starts with ${PREFIX}`);
  let data;
  try {
    data = JSON.parse(fromBase64Url(code.slice(PREFIX.length)));
  } catch {
    throw new Error("not a recovery code: it is damaged (copy all of it)");
  }
  const ok = (v, max) => typeof v === "string" && v.length >= 1 && v.length <= max;
  if (!data || !ok(data.server, 2048) || !ok(data.token, 128) || !ok(data.name, 24)) {
    throw new Error("not a recovery code: it lacks the server, token or name");
  }
  const own = new URL(normalise(server));
  const theirs = new URL(normalise(data.server));
  if (own.host !== theirs.host) throw new Error(`this code is for the server at ${theirs.host}, not this one`);
  return { token: data.token, name: data.name };
}
