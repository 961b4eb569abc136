// Small helpers shared by the modules. Everything a server or a player wrote is put in the
// page as text (textContent), never as HTML.

export const GAMES = ["quatorze", "doublets", "bakers_game", "hopscotch"];
export const TITLES = {
  doublets: "Doublets",
  quatorze: "Quatorze",
  bakers_game: "Baker's Game",
  hopscotch: "Hopscotch",
};
export const MAX_SCORE = { doublets: 48, quatorze: 52, bakers_game: 52, hopscotch: 48 };

export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "text") node.textContent = value;
    else if (key === "class") node.className = value;
    // Through the CSSOM: the page's CSP allows no style attribute.
    else if (key === "style") for (const [k, v] of Object.entries(value)) node.style.setProperty(k, v);
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export const $ = (selector, root = document) => root.querySelector(selector);

// Writes only what differs: setting a text or a flag to the value it has still mutates the
// DOM (a new text node, an attribute record), and each mutation costs the next frame style
// and layout work. A move's redraw touches many such lines whose value rarely changes.
export function setText(node, text) {
  if (node.textContent !== text) node.textContent = text;
}

export function setHidden(node, hidden) {
  if (node.hidden !== hidden) node.hidden = hidden;
}

export function clear(node, ...children) {
  node.replaceChildren(...children.flat().filter((c) => c !== null && c !== undefined));
  return node;
}

// Minutes and seconds (hours when needed), as the terminal client shows a clock.
export function clock(ms) {
  const seconds = Math.floor(Math.max(ms, 0) / 1000);
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  const pad = (x) => String(x).padStart(2, "0");
  return h ? `${h}:${pad(m)}:${pad(s)}` : `${m}:${pad(s)}`;
}

export const title = (game) => TITLES[game] || String(game);

export async function copyText(text) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    return false; // no clipboard (an insecure origin): the text is on the page to select
  }
}
