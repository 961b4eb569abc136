// The link to the server: one session over any number of WebSockets, as the terminal
// client keeps it. Requests carry an id and are matched to their reply by `re`; every other
// message is an event. When the socket drops it reconnects by itself (backoff with jitter),
// says hello with the same token, and resends every unanswered request that is safe to
// repeat: a `move` always is (its `n` makes a repeat a no-op that still gets its state).

const { encode, decode } = globalThis.MessagePack;
const TOKEN_KEY = "solitaire-race.token";
const NAME_KEY = "solitaire-race.name";
const BACKOFF_FIRST_MS = 500;
const BACKOFF_MAX_MS = 10000;

export const store = {
  get token() { return localStorage.getItem(TOKEN_KEY); },
  set token(value) {
    if (value) localStorage.setItem(TOKEN_KEY, value);
    else localStorage.removeItem(TOKEN_KEY);
  },
  get name() { return localStorage.getItem(NAME_KEY); },
  set name(value) { localStorage.setItem(NAME_KEY, value); },
};

export function serverUrl() {
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  return `${scheme}://${location.host}/ws`;
}

export class ServerError extends Error {
  constructor(code, msg) {
    super(msg);
    this.code = code;
  }
}

export class Connection {
  constructor({ onEvent, onStatus, onWelcome }) {
    this.onEvent = onEvent;
    this.onStatus = onStatus; // (online: bool, text)
    this.onWelcome = onWelcome; // (welcome, again)
    this.ids = 1;
    this.pending = new Map(); // id -> {message, resolve, reject, resend}
    this.ws = null;
    this.greetedWs = null; // the socket whose welcome came: only its messages are handled
    this.online = false;
    this.welcomed = false;
    this.attempt = 0;
    this.timer = null;
    this.name = null;
  }

  // Opens the session as `name`; resolves with the welcome, rejects with the hello's error.
  start(name) {
    this.name = name;
    return new Promise((resolve, reject) => {
      this.firstWelcome = { resolve, reject };
      this.open();
    });
  }

  open() {
    clearTimeout(this.timer);
    let ws;
    try {
      ws = new WebSocket(serverUrl());
    } catch (err) {
      this.lost(String(err));
      return;
    }
    ws.binaryType = "arraybuffer";
    this.ws = ws;
    ws.onopen = () => this.hello(ws, store.token);
    ws.onmessage = (event) => this.receive(ws, event.data);
    ws.onclose = (event) => {
      if (this.ws === ws) this.lost(event.code ? `code ${event.code}` : "closed");
    };
  }

  hello(ws, token) {
    const hello = { t: "hello", v: 1, name: this.name, legal: true, id: 0 };
    if (token) hello.token = token;
    ws.send(encode(hello));
  }

  receive(ws, data) {
    let message;
    try {
      message = decode(new Uint8Array(data));
    } catch {
      return; // not a message: nothing to do with it
    }
    if (!message || typeof message !== "object") return;
    if (ws !== this.greetedWs) {
      this.greeted(ws, message);
      return;
    }
    const request = message.re !== undefined ? this.pending.get(message.re) : undefined;
    if (request) {
      this.pending.delete(message.re);
      if (message.t === "error") request.reject(new ServerError(message.code, message.msg));
      else request.resolve(message);
      return;
    }
    if (message.re !== undefined && message.t !== "error") return; // a late duplicate reply
    this.onEvent(message);
  }

  greeted(ws, message) {
    if (message.t === "error" && message.re === 0) {
      if (message.code === "auth_failed" && store.token) {
        store.token = null; // the server forgot this player: become a new one
        this.hello(ws, null);
        return;
      }
      const first = this.firstWelcome;
      this.firstWelcome = null;
      ws.onclose = null;
      ws.close();
      this.ws = null;
      if (first) first.reject(new ServerError(message.code, message.msg));
      else this.lost(message.msg);
      return;
    }
    if (message.t !== "welcome") return;
    if (ws !== this.ws) return; // an old socket's late words
    const again = this.welcomed;
    this.welcomed = true;
    this.greetedWs = ws;
    this.online = true;
    this.attempt = 0;
    store.token = message.token;
    store.name = message.name;
    this.player = message.player;
    this.name = message.name;
    this.onStatus(true, again ? "Reconnected." : "");
    this.onWelcome(message, again);
    // What the last socket left unanswered goes again, in the order it was asked.
    for (const [id, request] of [...this.pending.entries()].sort((a, b) => a[0] - b[0])) {
      this.send({ ...request.message, id });
    }
    if (this.firstWelcome) {
      this.firstWelcome.resolve(message);
      this.firstWelcome = null;
    }
  }

  lost(reason) {
    this.online = false;
    this.ws = null;
    for (const [id, request] of this.pending) {
      if (!request.resend) {
        this.pending.delete(id);
        request.reject(new ServerError("offline", "the connection dropped before the answer"));
      }
    }
    const delay = Math.min(BACKOFF_MAX_MS, BACKOFF_FIRST_MS * 2 ** this.attempt);
    this.attempt += 1;
    const wait = delay * (0.75 + Math.random() * 0.5);
    this.onStatus(false, `Offline (${reason}): reconnecting in ${(wait / 1000).toFixed(1)} s…`);
    this.timer = setTimeout(() => this.open(), wait);
    if (this.firstWelcome && this.attempt > 3) {
      this.firstWelcome.reject(new ServerError("offline", `the server cannot be reached (${reason})`));
      this.firstWelcome = null;
    }
  }

  // Reconnects now (after an import or a new name): a new hello with what is stored.
  restart(name) {
    if (name) this.name = name;
    this.welcomed = false;
    const ws = this.ws;
    this.ws = null;
    if (ws) {
      ws.onclose = null;
      ws.close();
    }
    return new Promise((resolve, reject) => {
      this.firstWelcome = { resolve, reject };
      this.open();
    });
  }

  send(message) {
    if (this.ws && this.online && this.ws.readyState === WebSocket.OPEN) {
      this.ws.send(encode(message));
    }
  }

  // The reply to `message` (rejects with ServerError). `resend`: safe to repeat after a
  // drop (moves, gets); otherwise a drop fails it, so nothing is done twice.
  request(message, { resend = false } = {}) {
    const id = this.ids++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { message, resolve, reject, resend });
      if (this.online) this.send({ ...message, id });
      else if (!resend) {
        this.pending.delete(id);
        reject(new ServerError("offline", "you are offline; try again once reconnected"));
      }
    });
  }
}
