// The page: a racer's whole client. Views are sections of index.html shown one at a time;
// the server is the only judge of moves (its `legal` list drives the highlights, its errors
// are shown as they come), and the only source of every name and number on the page.
import { el, $, clear, clock, title, copyText, setText, setHidden, GAMES } from "./util.js";
import { Connection, ServerError, store, serverUrl } from "./net.js";
import { Board } from "./board.js";
import { exportCode, importCode } from "./account.js";
import { shareText } from "./share.js";

const EXAMPLES = { quatorze: "e.g. c0-c20", doublets: "e.g. r3-f, deal", bakers_game: "e.g. t3-r0, t1-f", hopscotch: "e.g. w-f0, r1-f2, deal" };
const CURRENT_KEY = "solitaire-race.current"; // the game this tab shows, kept over a reload

const app = {
  conn: null,
  me: null, // {player, name}
  active: [], // unfinished games from the last welcome
  game: null, // the state of the game shown
  race: null, // {code, game, host, players, start, progress: Map, result, rematch}
  watching: null, // {code, lobby, start, seats: Map, progress: Map, result}
  pending: [], // move strings not yet acknowledged, oldest first
  sending: false,
  scores: new Map(), // n -> score of the game shown (the daily's share picture)
  board: null,
  goFlash: 0,
  queued: null, // {game, rating, since} while waiting for a quick race
};

// ---------------------------------------------------------------- views and notices

function show(name) {
  for (const section of document.querySelectorAll("main > section.view")) {
    section.hidden = section.id !== `view-${name}`;
  }
}

function notice(text, error = false) {
  const node = $("#notice");
  setText(node, text || "");
  node.classList.toggle("error", Boolean(error));
}

const errorText = (err) => (err instanceof ServerError ? err.message : String(err && err.message ? err.message : err));

function setStatus(online, text) {
  const banner = $("#offline");
  if (online) {
    banner.hidden = true;
    if (text) notice(text);
  } else {
    banner.hidden = false;
    banner.textContent = `${text} Moves you make now are kept and sent once the connection is back.`;
  }
  renderPending();
}

// ---------------------------------------------------------------- start-up

function fillGames() {
  for (const id of ["create-game", "quick-game", "daily-game", "practice-game", "boards-game"]) {
    clear($(`#${id}`), GAMES.map((g) => el("option", { value: g, text: title(g) })));
  }
}

async function boot() {
  fillGames();
  wire();
  app.board = new Board($("#board"), { onMove: playMove });
  app.conn = new Connection({ onEvent: onEvent, onStatus: setStatus, onWelcome: onWelcome });
  setInterval(tick, 250);
  if (!store.name) {
    show("name");
    $("#name-input").focus();
    return;
  }
  await connect(store.name);
}

async function connect(name) {
  show("loading");
  try {
    await app.conn.start(name);
  } catch (err) {
    show("name");
    $("#name-input").value = name;
    $("#name-error").textContent = errorText(err);
    return;
  }
  await route();
}

function onWelcome(welcome, again) {
  app.me = { player: welcome.player, name: welcome.name };
  app.active = welcome.active || [];
  $("#who").textContent = `Playing as ${welcome.name}`;
  if (!again) return;
  // Back after a drop: carry on with what the server holds now.
  for (const state of app.active) if (app.game && state.gid === app.game.gid) applyState(state);
  if (app.race && app.race.code) app.conn.request({ t: "join", race: app.race.code }).then(onEvent, () => {});
  if (app.watching) app.conn.request({ t: "watch", race: app.watching.code }).then(onEvent, () => {});
}

async function route() {
  const match = location.pathname.match(/^\/r\/([^/]+)\/?$/);
  if (match) {
    await openRace(decodeURIComponent(match[1]));
    return;
  }
  const current = sessionStorage.getItem(CURRENT_KEY);
  const state = app.active.find((s) => s.gid === current);
  if (state) {
    resumeGame(state);
    return;
  }
  home();
}

function home() {
  app.race = null;
  app.watching = null;
  app.game = null;
  sessionStorage.removeItem(CURRENT_KEY);
  if (location.pathname !== "/play") history.replaceState(null, "", "/play");
  const box = $("#resume");
  const games = app.active;
  box.hidden = games.length === 0;
  clear(
    box,
    el("h2", { text: "Your games in progress" }),
    el(
      "ul",
      {},
      games.map((s) =>
        el(
          "li",
          {},
          `${title(s.game)} · ${s.kind}${s.race ? ` ${s.race}` : ""}${s.date ? ` ${s.date}` : ""} · score ${s.score} `,
          el("button", { type: "button", text: "Resume", onclick: () => resumeGame(s) }),
        ),
      ),
    ),
  );
  show("home");
  listChallenges();
}

async function listChallenges() {
  // One's challenges (asynchronous races): open ones with the finished seats' scores so far
  // (once one has played), closed ones with their standings. Not said by an older server.
  let reply;
  try {
    reply = await app.conn.request({ t: "challenges" });
  } catch (err) {
    return;
  }
  const box = $("#challenges");
  box.hidden = reply.races.length === 0;
  const when = (ms) => new Date(ms).toISOString().slice(0, 16).replace("T", " ") + " UTC";
  clear(
    box,
    el("h2", { id: "challenges-title", text: "Your challenges" }),
    el(
      "ul",
      {},
      reply.races.map((c) =>
        el(
          "li",
          {},
          el("a", { href: `/r/${encodeURIComponent(c.race)}`, text: `${title(c.game)} ${c.race}` }),
          ` · ${c.seats}/${c.max_players} seats · ${c.open ? `open until ${when(c.closes_at_ms)}` : `closed ${when(c.closes_at_ms)}`}`,
          c.open && !c.played ? " · not played yet" : "",
          (c.standings || []).length
            ? el("ol", {}, c.standings.map((s) => el("li", { text: `${s.name}: ${s.score} points, ${s.moves} moves, ${clock(s.time_ms)}` })))
            : null,
        ),
      ),
    ),
  );
}

function resumeGame(state) {
  if (state.race) {
    openRace(state.race);
    return;
  }
  startGame(state);
}

// ---------------------------------------------------------------- races

function raceLink(code) {
  return `${location.origin}/r/${encodeURIComponent(code)}`;
}

async function openRace(code) {
  code = code.trim().toUpperCase();
  const links = code.match(/\/r\/([^/?#]+)/);
  if (links) code = links[1];
  try {
    const lobby = await app.conn.request({ t: "join", race: code });
    enterRace(lobby);
  } catch (err) {
    if (err.code === "race_started" || err.code === "race_full") {
      notice(`${errorText(err)} You are watching it.`);
      await watchRace(code);
      return;
    }
    home();
    notice(`Race ${code}: ${errorText(err)}`, true);
  }
}

function enterRace(lobby) {
  const code = lobby.race;
  if (!app.race || app.race.code !== code) {
    app.race = { code, progress: new Map(), start: null, result: null, rematch: null };
    app.game = null;
    app.pending = [];
  }
  app.watching = null;
  history.replaceState(null, "", `/r/${encodeURIComponent(code)}`);
  sessionStorage.removeItem(CURRENT_KEY);
  onLobby(lobby);
  const mine = app.active.find((s) => s.race === code);
  if (mine) startGame(mine);
}

function onLobby(lobby) {
  if (app.watching && app.watching.code === lobby.race) {
    app.watching.lobby = lobby;
    renderWatch();
    return;
  }
  if (!app.race || app.race.code !== lobby.race) return;
  const race = app.race;
  const before = race.host;
  Object.assign(race, { game: lobby.game, host: lobby.host, players: lobby.players });
  if (before && before !== lobby.host && lobby.host === app.me.player) {
    notice("The host left: you are the host now, and may start the race.");
  }
  if (!race.start && !race.result) renderLobby();
  else renderOpponents();
}

function renderLobby() {
  const race = app.race;
  show("lobby");
  $("#lobby-title").textContent = `${title(race.game)} · race ${race.code}`;
  const host = race.players.find((p) => p.player === race.host);
  $("#lobby-sub").textContent = race.startsAt
    ? `A quick race, rated: ${race.players.length} seated. It starts by itself.`
    : `In the lobby: ${race.players.length} seated. Share the link; the host starts the race.`;
  $("#lobby-link").value = raceLink(race.code);
  $("#lobby-link").closest(".share").hidden = !!race.startsAt; // nobody else may join a quick race
  clear(
    $("#lobby-seats"),
    race.players.map((p) =>
      el("li", {}, p.name, p.player === race.host ? el("span", { class: "badge", text: "host" }) : null, p.player === app.me.player ? el("span", { class: "badge me", text: "you" }) : null),
    ),
  );
  const isHost = race.host === app.me.player && !race.startsAt;
  $("#start-button").hidden = !isHost;
  if (race.startsAt) {
    const left = Math.max(0, Math.ceil((race.startsAt - Date.now()) / 1000));
    $("#lobby-wait").textContent = `Starting in ${left} s…`;
  } else {
    $("#lobby-wait").textContent = isHost ? "" : `Waiting for ${host ? host.name : "the host"} to start the race…`;
  }
}

async function startRace() {
  try {
    onStart(await app.conn.request({ t: "start", race: app.race.code })); // the host's start is the reply
  } catch (err) {
    notice(errorText(err), true);
  }
}

function onStart(start) {
  if (app.watching && app.watching.code === start.race) {
    app.watching.start = start;
    renderWatch();
    return;
  }
  if (!app.race || app.race.code !== start.race) return;
  app.race.start = { ...start, received: Date.now() };
  if (start.async && !app.race.async) {
    app.race.async = true;
    learnWindow(start.race);
  }
  app.goFlash = Date.now();
  if (app.game) renderGame();
  else {
    show("game");
    renderGame();
  }
}

function onProgress(progress) {
  if (app.watching && app.watching.code === progress.race) {
    app.watching.progress.set(progress.player, progress);
    renderWatch();
    return;
  }
  if (!app.race || app.race.code !== progress.race) return;
  app.race.progress.set(progress.player, { ...progress, received: Date.now() });
  renderOpponents();
}

async function learnWindow(code) {
  // An asynchronous race: until when it stays open (what the page says once one's own run
  // is over). An older server does not list challenges: then it is not said.
  try {
    const reply = await app.conn.request({ t: "challenges" });
    const entry = reply.races.find((c) => c.race === code);
    if (entry && app.race && app.race.code === code) app.race.closesAt = entry.closes_at_ms;
  } catch (err) {
    return;
  }
  renderOpponents();
}

function raceOpenNote(race) {
  if (!race.async || race.result || !app.game || !app.game.finished) return "";
  const until = race.closesAt ? ` until ${new Date(race.closesAt).toISOString().slice(0, 16).replace("T", " ")} UTC` : "";
  return `Your run is over. The race is still open${until}: the standings come when everyone has played, or then.`;
}

function renderOpponents() {
  const race = app.race;
  const aside = $("#opponents");
  setHidden(aside, !race);
  if (!race || !race.players) return;
  clear(
    $("#opponents-rows"),
    race.players.map((p) => {
      const mine = p.player === app.me.player;
      let pr = race.progress.get(p.player);
      // In a challenge one's own figures come with one's states, not as progress.
      if (mine && race.async && app.game) pr = { score: app.game.score, moves: app.game.n, elapsed_ms: app.game.elapsed_ms, won: app.game.won, finished: app.game.finished, over: app.game.over };
      let status = "playing";
      if (pr) status = pr.won ? "won" : pr.finished ? "finished" : pr.over ? "no moves left" : "playing";
      if (pr && pr.ghost) status = pr.finished ? `ghost, ${status}` : "ghost";
      if (!pr && race.async) status = "plays later";
      if (!race.start) status = "waiting";
      return el(
        "tr",
        { class: mine ? "me" : undefined },
        el("td", { text: mine ? `${p.name} (you)` : p.name }),
        el("td", { text: pr ? String(pr.score) : "0" }),
        el("td", { text: pr ? String(pr.moves) : "0" }),
        el("td", { text: pr ? clock(pr.elapsed_ms) : "0:00" }),
        el("td", { text: status }),
      );
    }),
  );
  setText($("#race-open"), raceOpenNote(race));
}

function standingsRows(result) {
  return result.standings.map((s, i) =>
    el(
      "tr",
      { class: s.player === (app.me && app.me.player) ? "me" : undefined },
      el("td", { text: String(s.rank) }),
      el("td", { text: s.name }),
      el("td", { text: String(s.score) }),
      el("td", { text: String(s.moves) }),
      el("td", { text: clock(s.time_ms) }),
      el("td", { text: s.won ? "won" : s.resigned ? "resigned" : "" }),
      el("td", {}, el("a", { href: `/replay/${encodeURIComponent(result.race)}:${i + 1}`, text: `Replay ${s.name}` })),
    ),
  );
}

function onResult(result) {
  if (app.watching && app.watching.code === result.race) {
    app.watching.result = result;
    renderWatch();
    return;
  }
  if (!app.race || app.race.code !== result.race) return;
  app.race.result = result;
  show("game");
  renderGame();
  $("#result").hidden = false;
  clear($("#result-rows"), standingsRows(result));
  const first = result.standings[0];
  $("#game-title").textContent = `${title(result.game)} · race ${result.race} · over`;
  const mine = result.rating && app.me && result.rating[app.me.player];
  const rated = mine ? ` Your rating: ${mine.before} → ${mine.after}.` : "";
  notice((first ? `${first.name} wins the race.` : "The race is over.") + rated);
}

async function rematch() {
  try {
    const reply = await app.conn.request({ t: "rematch", race: app.race.code });
    if (reply.t === "created") {
      app.race = { code: reply.race, progress: new Map(), start: null, result: null, game: reply.game, players: [] };
      app.game = null;
      history.replaceState(null, "", `/r/${encodeURIComponent(reply.race)}`);
    } else if (reply.t === "lobby") {
      enterRace(reply);
    }
  } catch (err) {
    notice(errorText(err), true);
  }
}

function onRematch(event) {
  $("#rematch-note").replaceChildren(
    `${event.name} asked for a rematch. `,
    el("button", { type: "button", text: "Take your seat", onclick: () => openRace(event.next) }),
  );
}

async function createRace(event) {
  event.preventDefault();
  const message = {
    t: "create",
    game: $("#create-game").value,
    max_players: Number($("#create-seats").value) || 4,
  };
  const minutes = Number($("#create-time").value);
  if (minutes > 0) message.time_limit_s = Math.round(minutes * 60);
  const bots = Number($("#create-bots").value);
  if (bots > 0) {
    message.bots = bots;
    message.bot_strength = $("#create-strength").value;
  }
  if (!$("#create-spectators").checked) message.spectators = false;
  const challenge = $("#create-async").checked;
  if (challenge) message.async = true;
  try {
    const created = await app.conn.request(message);
    if (challenge) {
      // A challenge has no lobby to wait in: joining deals one's own run at once.
      notice(`Challenge ${created.race}: share ${raceLink(created.race)}; friends play it when they like.`);
      await openRace(created.race);
      return;
    }
    app.race = { code: created.race, game: created.game, host: app.me.player, players: [app.me], progress: new Map(), start: null, result: null };
    app.game = null;
    app.pending = [];
    history.replaceState(null, "", `/r/${encodeURIComponent(created.race)}`);
    renderLobby();
  } catch (err) {
    notice(errorText(err), true);
  }
}

// ---------------------------------------------------------------- quick races

async function quickRace(event) {
  event.preventDefault();
  try {
    const queued = await app.conn.request({ t: "queue", game: $("#quick-game").value });
    // The server's clock says since when; the page counts from now (clocks differ).
    app.queued = { game: queued.game, rating: queued.rating, since: Date.now() };
    renderQueue();
  } catch (err) {
    notice(errorText(err), true);
  }
}

async function unqueue() {
  try {
    await app.conn.request({ t: "unqueue" });
  } catch (err) {
    notice(errorText(err), true);
  }
  app.queued = null;
  renderQueue();
}

function renderQueue() {
  const q = app.queued;
  $("#quick-wait").hidden = !q;
  $("#unqueue-button").hidden = !q;
  $("#quick-button").disabled = !!q;
  if (q) {
    const waited = clock(Date.now() - q.since);
    $("#quick-wait").textContent = `Waiting for a ${title(q.game)} race at rating ${q.rating}… ${waited}`;
  }
}

function onQueued(message) {
  if (message.bot) notice(`Nobody near your rating yet: a ${message.bot} bot races you (unrated).`);
}

function onMatched(message) {
  app.queued = null;
  renderQueue();
  app.race = { code: message.race, game: message.game, players: [], progress: new Map(), start: null, result: null, startsAt: message.starts_at_ms };
  app.game = null;
  app.pending = [];
}

// ---------------------------------------------------------------- watching

async function watchRace(code) {
  code = code.trim().toUpperCase();
  app.watching = { code, lobby: null, start: null, seats: new Map(), progress: new Map(), result: null };
  app.race = null;
  app.game = null;
  try {
    const lobby = await app.conn.request({ t: "watch", race: code });
    app.watching.lobby = lobby;
    history.replaceState(null, "", `/r/${encodeURIComponent(code)}`);
    show("watch");
    renderWatch();
  } catch (err) {
    app.watching = null;
    home();
    notice(`Race ${code}: ${errorText(err)}`, true);
  }
}

function renderWatch() {
  const w = app.watching;
  if (!w || !w.lobby) return;
  show("watch");
  $("#watch-title").textContent = `Watching ${title(w.lobby.game)} · race ${w.code}`;
  $("#watch-sub").textContent = w.result ? "The race is over." : w.start ? "Running: every board is what its player sees." : `In the lobby: ${w.lobby.players.length} seated.`;
  clear(
    $("#watch-seats"),
    w.lobby.players.map((p) => {
      const seat = w.seats.get(p.player);
      const pr = w.progress.get(p.player);
      const box = el("div", { class: "board mini" });
      if (seat) new Board(box, { interactive: false }).show(seat.view, [], false);
      return el(
        "section",
        { class: "card-box seat", "aria-label": `${p.name}'s board` },
        el("h2", { text: p.name }),
        el("p", { class: "figures", text: pr ? `score ${pr.score} · moves ${pr.moves} · ${clock(pr.elapsed_ms)}${pr.finished ? " · finished" : ""}` : "waiting" }),
        box,
      );
    }),
  );
  $("#watch-result").hidden = !w.result;
  if (w.result) clear($("#watch-result-rows"), standingsRows(w.result));
}

// ---------------------------------------------------------------- a game

function startGame(state) {
  if (!app.game || app.game.gid !== state.gid) {
    app.pending = [];
    app.scores = new Map();
  }
  if (state.kind !== "race") {
    app.race = null;
    sessionStorage.setItem(CURRENT_KEY, state.gid);
    if (location.pathname !== "/play") history.replaceState(null, "", "/play");
  }
  $("#result").hidden = true;
  $("#share").hidden = true;
  $("#rematch-note").textContent = "";
  applyState(state);
  show("game");
}

function applyState(state) {
  if (app.game && app.game.gid === state.gid && state.n < app.game.n && state.kind !== "practice") return;
  const wasFinished = app.game && app.game.gid === state.gid && app.game.finished;
  app.game = { ...state, received: Date.now(), legal: state.legal || [] };
  app.scores.set(state.n, state.score);
  renderGame();
  if (state.finished && !wasFinished && state.kind === "daily") dailyFinished(state);
}

function playable() {
  const g = app.game;
  if (!g || g.finished) return false;
  return g.kind !== "race" || Boolean(app.race && app.race.start);
}

function renderGame() {
  const g = app.game;
  const race = app.race;
  if (!g) {
    if (race) {
      $("#game-title").textContent = `${title(race.game)} · race ${race.code}`;
      clear($("#board"));
    }
    renderOpponents();
    return;
  }
  let heading = `${title(g.game)} · ${g.kind === "race" ? `race ${g.race}` : g.kind === "daily" ? `daily ${g.date}` : "practice"}`;
  if (g.finished) heading += g.won ? " · won" : " · finished";
  setText($("#game-title"), heading);
  const max = g.view.max_score !== undefined ? g.view.max_score : "?";
  const redeals = g.view.redeals_left !== undefined ? ` · redeals left ${g.view.redeals_left}` : "";
  setText($("#game-score"), `score ${g.score}/${max}${redeals} · moves ${g.view.moves}`);
  app.board.show(g.view, g.legal, playable());
  const input = $("#move-input");
  const example = EXAMPLES[g.game] || "";
  if (input.placeholder !== example) input.placeholder = example;
  const practice = g.kind === "practice";
  setHidden($("#hint-button"), !practice);
  setHidden($("#undo-button"), !practice);
  const resign = $("#resign-button");
  if (resign.disabled !== g.finished) resign.disabled = g.finished;
  setText($("#legal-moves"), g.finished ? (g.won ? "Won!" : "This game is over.") : g.legal.length ? `Legal moves: ${g.legal.join(" ")}` : "");
  renderOpponents();
  renderPending();
  tick();
}

function renderPending() {
  const node = $("#pending");
  if (!node) return;
  const offline = app.conn && !app.conn.online;
  setText(node, app.pending.length ? `Pending: ${app.pending.join(", ")}${offline ? " (sent once reconnected)" : " (sending…)"}` : "");
}

function playMove(move) {
  move = move.trim();
  if (!move) return;
  if (!app.game) return;
  if (app.game.finished) {
    notice("This game is over.", true);
    return;
  }
  if (app.game.kind === "race" && !(app.race && app.race.start)) {
    notice("The race has not started yet.", true);
    return;
  }
  app.pending.push(move);
  // The move goes out first (pump sends before its first await); the page's own news of
  // it is written after, so the round trip does not wait for it.
  pump();
  renderPending();
}

// One move in flight at a time, each with the `n` it is meant for: if the link drops, the
// same request goes again once reconnected and the server's retransmission rule makes the
// repeat harmless.
async function pump() {
  if (app.sending || !app.pending.length || !app.game) return;
  app.sending = true;
  const move = app.pending[0];
  const { gid, n } = app.game;
  try {
    const state = await app.conn.request({ t: "move", gid, n, m: move }, { resend: true });
    app.pending.shift();
    notice("");
    applyState(state);
  } catch (err) {
    const dropped = app.pending.length;
    app.pending = [];
    notice(`${move}: ${errorText(err)}${dropped > 1 ? ` (${dropped - 1} later move${dropped > 2 ? "s" : ""} not sent)` : ""}`, true);
    if (err.code === "out_of_order") {
      app.conn.request({ t: "get", gid }, { resend: true }).then(applyState, () => {});
    }
    renderGame();
  } finally {
    app.sending = false;
    renderPending();
    if (app.pending.length) pump();
  }
}

async function gameRequest(message) {
  try {
    const reply = await app.conn.request(message);
    if (reply.t === "state") applyState(reply);
    return reply;
  } catch (err) {
    notice(errorText(err), true);
    return null;
  }
}

async function resign() {
  if (!app.game || app.game.finished) return;
  if (!confirm("Resign this game? It ends as it stands.")) return;
  await gameRequest({ t: "resign", gid: app.game.gid });
}

async function hint() {
  const reply = await gameRequest({ t: "hint", gid: app.game.gid });
  if (!reply) return;
  const words = { won: "a winning line", gave_up: "the best line found", unwinnable: "this deal cannot be won from here" };
  notice(reply.move ? `Hint: ${reply.move} (${words[reply.verdict] || reply.verdict})` : "No move left.");
  if (reply.move && reply.move.includes("-")) app.board.select(reply.move.split("-")[0]);
}

// ---------------------------------------------------------------- daily and practice

async function daily(event) {
  event.preventDefault();
  const game = $("#daily-game").value;
  try {
    const reply = await app.conn.request({ t: "daily", game });
    if (reply.status === "finished") {
      notice(`You have played today's ${title(game)} challenge.`);
      await leaderboard(game, reply.date);
      return;
    }
    if (reply.status === "in_progress") {
      await dealDaily(game);
      return;
    }
    $("#confirm-title").textContent = `${title(game)} · daily challenge ${reply.date}`;
    $("#confirm-text").textContent =
      "One ranked attempt a day, the same deal for everybody. Its clock starts when the cards are dealt, and it counts however it ends. Deal it now?";
    $("#confirm-yes").onclick = () => dealDaily(game);
    show("confirm");
  } catch (err) {
    notice(errorText(err), true);
  }
}

async function dealDaily(game) {
  try {
    startGame(await app.conn.request({ t: "daily", game, confirm: true }));
  } catch (err) {
    notice(errorText(err), true);
  }
}

async function dailyFinished(state) {
  try {
    const board = await app.conn.request({ t: "leaderboard", game: state.game, date: state.date, around_me: true, limit: 5 });
    if (!board.me) return;
    $("#share-text").textContent = shareText(state.game, state.date, board.me, board.total, app.scores);
    $("#share").hidden = false;
  } catch (err) {
    notice(errorText(err), true);
  }
}

async function practice(event) {
  event.preventDefault();
  try {
    const message = { t: "practice", game: $("#practice-game").value };
    const seed = Number($("#practice-seed").value);
    if (Number.isInteger(seed) && seed > 0) message.seed = seed;
    startGame(await app.conn.request(message));
  } catch (err) {
    notice(errorText(err), true);
  }
}

async function leaderboard(game, date) {
  try {
    const message = { t: "leaderboard", game, limit: 20, around_me: true };
    if (date) message.date = date;
    const board = await app.conn.request(message);
    show("board");
    $("#lb-title").textContent = `${title(board.game)} · ${board.date === "all" ? "all time" : `daily ${board.date}`}`;
    $("#lb-sub").textContent = `${board.total} player${board.total === 1 ? "" : "s"}${board.me ? ` · you are #${board.me.rank}` : ""}`;
    $("#lb-page").href = `/leaderboard/${encodeURIComponent(board.game)}/${encodeURIComponent(board.date)}`;
    clear(
      $("#lb-rows"),
      board.entries.map((e) =>
        el(
          "tr",
          { class: board.me && e.player === board.me.player ? "me" : undefined },
          el("td", { text: String(e.rank) }),
          el("td", {}, e.name, e.new ? el("span", { class: "badge", title: "a player made on this day", text: "new" }) : null),
          el("td", { text: String(e.score) }),
          el("td", { text: String(e.moves) }),
          el("td", { text: board.date === "all" ? `${e.days_won || 0} days won` : clock(e.time_ms) }),
          el("td", { text: e.won ? "✓" : "" }),
        ),
      ),
    );
  } catch (err) {
    notice(errorText(err), true);
  }
}

// ---------------------------------------------------------------- events and the clock

function onEvent(message) {
  switch (message.t) {
    case "lobby":
      if (app.race && app.race.code === message.race && !app.race.players.length) enterRace(message);
      else onLobby(message);
      break;
    case "start":
      onStart(message);
      break;
    case "state":
      if (app.game && app.game.gid === message.gid) applyState(message);
      else if (message.kind === "race" && app.race && app.race.code === message.race) startGame(message);
      break;
    case "progress":
      onProgress(message);
      break;
    case "result":
      onResult(message);
      break;
    case "seat":
      if (app.watching && app.watching.code === message.race) {
        const before = app.watching.seats.get(message.player);
        if (!before || before.n <= message.n) app.watching.seats.set(message.player, message);
        renderWatch();
      }
      break;
    case "rematch":
      onRematch(message);
      break;
    case "queued":
      onQueued(message);
      break;
    case "matched":
      onMatched(message);
      break;
    case "error":
      notice(message.msg, true);
      break;
    default:
      break; // a message this page does not know: a newer server's
  }
}

function tick() {
  if (app.queued) renderQueue();
  const r = app.race;
  if (r && r.startsAt && !r.start && !r.result && r.players && r.players.length) renderLobby();
  const g = app.game;
  const node = $("#game-clock");
  if (!node) return;
  const countdown = $("#countdown");
  const race = app.race;
  if (race && race.start && Date.now() - app.goFlash < 1500) {
    setHidden(countdown, false);
    setText(countdown, "Go!");
  } else setHidden(countdown, true);
  if (!g) {
    setText(node, "");
    return;
  }
  let elapsed = g.elapsed_ms;
  if (!g.finished && (g.kind !== "race" || (race && race.start))) elapsed += Date.now() - g.received;
  let text = clock(elapsed);
  if (race && race.start && race.start.ends_at_ms) {
    const total = race.start.ends_at_ms - race.start.starts_at_ms;
    const raceElapsed = g.finished ? Date.now() - race.start.received : elapsed;
    text += ` · ${clock(Math.max(0, total - raceElapsed))} left`;
  }
  setText(node, text);
}

// ---------------------------------------------------------------- the controls

function wire() {
  $("#name-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const name = $("#name-input").value.trim();
    if (!name) return;
    $("#name-error").textContent = "";
    connect(name);
  });
  const doImport = async (code) => {
    try {
      const { token, name } = importCode(code, serverUrl());
      store.token = token;
      store.name = name;
      if (app.conn.welcomed) await app.conn.restart(name);
      else await app.conn.start(name);
      notice(`You are ${name} in this browser now.`);
      await route();
    } catch (err) {
      notice(errorText(err), true);
    }
  };
  $("#import-first").addEventListener("submit", (e) => {
    e.preventDefault();
    doImport($("#import-first-code").value);
  });
  $("#import-form").addEventListener("submit", (e) => {
    e.preventDefault();
    if (confirm("Import this player? The one this browser has now is lost unless you exported its code.")) doImport($("#import-code").value);
  });
  $("#rename-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    const name = $("#rename-input").value.trim();
    if (!name) return;
    try {
      await app.conn.restart(name);
      notice(`You are ${app.me.name} now.`);
    } catch (err) {
      notice(errorText(err), true);
      await app.conn.restart(store.name);
    }
  });
  $("#export-button").addEventListener("click", () => {
    $("#export-code").value = exportCode(serverUrl(), store.token, store.name);
    $("#export-out").hidden = false;
  });
  $("#export-copy").addEventListener("click", async () => {
    notice((await copyText($("#export-code").value)) ? "Recovery code copied." : "Select the code and copy it.");
  });
  $("#create-form").addEventListener("submit", createRace);
  $("#quick-form").addEventListener("submit", quickRace);
  $("#unqueue-button").addEventListener("click", unqueue);
  $("#join-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const code = $("#join-code").value;
    if (code.trim()) openRace(code);
  });
  $("#watch-button").addEventListener("click", () => {
    const code = $("#join-code").value;
    if (code.trim()) watchRace(code.replace(/^.*\/r\//, ""));
  });
  $("#daily-form").addEventListener("submit", daily);
  $("#confirm-no").addEventListener("click", home);
  $("#practice-form").addEventListener("submit", practice);
  $("#boards-form").addEventListener("submit", (e) => {
    e.preventDefault();
    leaderboard($("#boards-game").value, $("#boards-date").value);
  });
  $("#copy-link").addEventListener("click", async () => {
    notice((await copyText($("#lobby-link").value)) ? "Link copied: send it to your friends." : "Select the link and copy it.");
  });
  $("#start-button").addEventListener("click", startRace);
  $("#move-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const input = $("#move-input");
    playMove(input.value.toLowerCase());
    input.value = "";
  });
  $("#resign-button").addEventListener("click", resign);
  $("#hint-button").addEventListener("click", hint);
  $("#undo-button").addEventListener("click", () => gameRequest({ t: "undo", gid: app.game.gid }));
  $("#rematch-button").addEventListener("click", rematch);
  $("#share-copy").addEventListener("click", async () => {
    notice((await copyText($("#share-text").textContent)) ? "Copied: paste it in a chat." : "Select the text and copy it.");
  });
  window.addEventListener("keydown", (e) => {
    if (e.key === "/" && !["INPUT", "TEXTAREA"].includes(document.activeElement.tagName) && !$("#view-game").hidden) {
      e.preventDefault();
      $("#move-input").focus();
    }
  });
}

boot();
