// A game's board drawn as cards from the server's public view, laid out as AisleRiot lays
// out each table. The board holds no rules: where a picked card may go comes from the
// `legal` list of the server's state. Moves by click or tap (pick a card, then a pile), by
// drag and drop (pointer events: mouse, pen and touch alike) and by keyboard (every top
// card and empty pile is a button).
import { el, clear } from "./util.js";
import { cardName, rankGlyph, suitGlyph, isRed } from "./cards.js";

const range = (prefix, n) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

// Rows of pile codes (null: a gap); `fan`: piles whose cards are all shown, overlapping.
const LAYOUTS = {
  doublets: { cols: 7, rows: [["s", "w", null, "f", null, null, null], range("r", 7)], fan: [] },
  quatorze: { cols: 6, grid: true },
  bakers_game: {
    cols: 8,
    rows: [["r0", "r1", "r2", "r3", "fC", "fD", "fH", "fS"], range("t", 8)],
    fan: range("t", 8),
  },
  hopscotch: {
    cols: 6,
    rows: [["s", "w", "f0", "f1", "f2", "f3"], [null, null, "r0", "r1", "r2", "r3"]],
    fan: range("r", 4),
  },
};

const PILE_NAMES = { s: "stock", w: "waste", f: "foundation" };
export function pileName(code) {
  if (PILE_NAMES[code]) return PILE_NAMES[code];
  const kind = { r: "reserve", t: "column", c: "cell", f: "foundation" }[code[0]];
  return `${kind} ${code}`;
}

// The pile a move names: Baker's Game's foundations are all "f" in a move.
const moveCode = (game, code) => (game === "bakers_game" && code[0] === "f" ? "f" : code);

// The corner (rank and suit) shows even where a fanned pile overlaps the card.
function cardFace(card) {
  return [
    el("span", { class: "corner", "aria-hidden": "true", text: `${rankGlyph(card)}${suitGlyph(card)}` }),
    el("span", { class: "pip", "aria-hidden": "true", text: suitGlyph(card) }),
  ];
}

const EMPTY_HINTS = { fC: "♣", fD: "♦", fH: "♥", fS: "♠" };

export class Board {
  constructor(root, { onMove, interactive = true }) {
    this.root = root;
    this.onMove = onMove;
    this.interactive = interactive;
    this.view = null;
    this.legal = [];
    this.selected = null;
    this.drag = null;
    this.suppressClick = false;
    if (interactive) {
      root.addEventListener("pointerdown", (e) => this.pointerDown(e));
      root.addEventListener("pointermove", (e) => this.pointerMove(e));
      root.addEventListener("pointerup", (e) => this.pointerUp(e));
      root.addEventListener("pointercancel", () => this.endDrag());
      root.addEventListener("click", (e) => this.click(e));
      root.addEventListener("keydown", (e) => {
        if (e.key === "Escape") this.select(null);
      });
    }
  }

  show(view, legal, playable) {
    this.view = view;
    this.legal = legal || [];
    this.playable = playable;
    if (!playable) this.selected = null;
    this.render();
  }

  pile(code) {
    const piles = this.view.piles || {};
    return piles[code];
  }

  // Where the card on `code` may go, from the legal list.
  targets(code) {
    const game = this.view.game;
    const out = new Set();
    for (const move of this.legal) {
      const [src, dst] = move.split("-");
      if (dst === undefined) continue;
      if (game === "quatorze") {
        if (src === code) out.add(dst);
        if (dst === code) out.add(src);
      } else if (src === code) {
        if (game === "bakers_game" && dst === "f") {
          const cards = this.pile(code);
          out.add(`f${cards[cards.length - 1][1]}`);
        } else out.add(dst);
      }
    }
    return out;
  }

  select(code) {
    this.selected = code;
    this.render();
  }

  activate(code) {
    if (!this.interactive || !this.playable) return;
    if (code === "s") {
      this.selected = null;
      this.onMove("deal"); // sent before the page redraws anything
      this.render();
      return;
    }
    const game = this.view.game;
    if (this.selected === null) {
      const cards = this.pile(code);
      if (Array.isArray(cards) && cards.length) this.select(code);
      return;
    }
    if (this.selected === code) {
      this.select(null);
      return;
    }
    const move = `${moveCode(game, this.selected)}-${moveCode(game, code)}`;
    this.selected = null;
    this.onMove(move); // sent before the page redraws anything
    this.render();
  }

  click(event) {
    if (this.suppressClick) {
      this.suppressClick = false;
      return;
    }
    const pile = event.target.closest("[data-pile]");
    if (pile && event.target.closest("button")) this.activate(pile.dataset.pile);
  }

  pointerDown(event) {
    if (!this.playable || event.button > 0) return;
    const button = event.target.closest("button.card.face");
    const pile = event.target.closest("[data-pile]");
    if (!button || !pile) return;
    this.drag = { code: pile.dataset.pile, x: event.clientX, y: event.clientY, ghost: null, button };
  }

  pointerMove(event) {
    const drag = this.drag;
    if (!drag) return;
    const dx = event.clientX - drag.x;
    const dy = event.clientY - drag.y;
    if (!drag.ghost) {
      if (Math.hypot(dx, dy) < 6) return;
      this.selected = drag.code;
      this.render();
      const ghost = drag.button.cloneNode(true);
      ghost.className += " ghost";
      ghost.removeAttribute("aria-label");
      ghost.removeAttribute("style");
      ghost.setAttribute("aria-hidden", "true");
      const box = drag.button.getBoundingClientRect();
      ghost.style.width = `${box.width}px`;
      ghost.style.height = `${box.height}px`;
      drag.offset = [drag.x - box.left, drag.y - box.top];
      document.body.append(ghost);
      drag.ghost = ghost;
      try {
        this.root.setPointerCapture(event.pointerId);
      } catch {
        // a synthetic pointer: nothing to capture
      }
    }
    drag.ghost.style.left = `${event.clientX - drag.offset[0]}px`;
    drag.ghost.style.top = `${event.clientY - drag.offset[1]}px`;
  }

  pointerUp(event) {
    const drag = this.drag;
    if (!drag || !drag.ghost) {
      this.drag = null;
      return;
    }
    drag.ghost.remove();
    this.drag = null;
    this.suppressClick = true;
    setTimeout(() => (this.suppressClick = false), 0);
    const under = document.elementFromPoint(event.clientX, event.clientY);
    const pile = under && under.closest("[data-pile]");
    if (pile && this.root.contains(pile) && pile.dataset.pile !== drag.code) {
      this.selected = drag.code;
      this.activate(pile.dataset.pile);
    } else this.select(null);
  }

  endDrag() {
    if (this.drag && this.drag.ghost) this.drag.ghost.remove();
    this.drag = null;
  }

  // The piles in table order: [code or null for a gap, fanned].
  slots(layout) {
    if (layout.grid) {
      const out = [];
      for (let row = 0; row < 5; row++) {
        for (let col = 0; col < 5; col++) out.push([`c${row * 5 + col}`, false]);
        out.push([row === 0 ? "s" : null, false]);
      }
      return out;
    }
    return layout.rows.flat().map((code) => [code, layout.fan.includes(code)]);
  }

  // Only the piles whose cards changed are built again; selection and highlights are
  // classes, set only where they change, so a pick keeps the focused button (and costs no
  // rebuild) and a move's redraw touches the two piles it moved between and little else.
  render() {
    const view = this.view;
    if (!view) return;
    const layout = LAYOUTS[view.game];
    const interactive = this.interactive && this.playable;
    const piles = view.piles || {};
    const hidden = view.hidden || {};
    const sig = (code) => `${interactive}|${hidden[code]}|${(piles[code] || []).join()}`;
    if (!this.grid || this.gridGame !== view.game || !this.root.contains(this.grid)) {
      this.grid = el("div", { class: `table ${view.game}`, style: { "--cols": String(layout.cols) } });
      this.gridGame = view.game;
      this.slotList = this.slots(layout).filter(([code]) => code);
      this.nodes = new Map();
      this.sigs = new Map();
      this.marks = new Map(); // code -> "selected|target" as last set
      for (const [code, fanned] of this.slots(layout)) {
        const node = code ? this.pileNode(code, fanned) : el("div", { class: "gap" });
        if (code) {
          this.nodes.set(code, node);
          this.sigs.set(code, sig(code));
        }
        this.grid.append(node);
      }
      clear(this.root, this.grid);
    }
    for (const [code, fanned] of this.slotList) {
      const now = sig(code);
      if (this.sigs.get(code) !== now) {
        const node = this.pileNode(code, fanned);
        this.nodes.get(code).replaceWith(node);
        this.nodes.set(code, node);
        this.sigs.set(code, now);
        this.marks.delete(code); // a new node: its marks are all to set
      }
    }
    const targets = this.selected ? this.targets(this.selected) : new Set();
    for (const [code, node] of this.nodes) {
      const selected = this.selected === code;
      const target = targets.has(code);
      const mark = `${selected}|${target}`;
      if (this.marks.get(code) === mark) continue;
      this.marks.set(code, mark);
      node.classList.toggle("selected", selected);
      node.classList.toggle("target", target);
      const top = node.querySelector("button.card.face");
      if (top) top.setAttribute("aria-pressed", selected ? "true" : "false");
    }
  }

  pileNode(code, fanned) {
    const view = this.view;
    const interactive = this.interactive && this.playable;
    const classes = ["pile"];
    if (fanned) classes.push("fan");
    const node = el("div", { class: classes.join(" "), "data-pile": code, role: "group", "aria-label": pileName(code) });
    const hidden = (view.hidden || {})[code];
    if (hidden !== undefined) {
      const label = `${pileName(code)}: ${hidden} face-down card${hidden === 1 ? "" : "s"}`;
      if (hidden > 0) {
        const attrs = { class: "card back", "aria-label": label };
        node.append(interactive ? el("button", { type: "button", ...attrs }) : el("span", { role: "img", ...attrs }));
      } else {
        const attrs = { class: "card empty", "aria-label": `${pileName(code)}, empty` };
        node.append(interactive ? el("button", { type: "button", ...attrs }) : el("span", { role: "img", ...attrs }));
      }
      node.append(el("span", { class: "count", "aria-hidden": "true", text: String(hidden) }));
      return node;
    }
    const cards = view.piles[code] || [];
    const shown = fanned ? cards : cards.slice(-1);
    if (!shown.length) {
      const attrs = { class: "card empty", "aria-label": `${pileName(code)}, empty`, "data-hint": EMPTY_HINTS[code] };
      node.append(interactive ? el("button", { type: "button", ...attrs }) : el("span", { role: "img", ...attrs }));
    }
    shown.forEach((card, i) => {
      const top = i === shown.length - 1;
      const attrs = {
        class: `card face ${isRed(card) ? "red" : "black"}`,
        "aria-label": cardName(card),
        style: fanned ? { "--i": String(i) } : undefined,
        "data-card": card,
      };
      node.append(
        top && interactive
          ? el("button", { type: "button", ...attrs }, cardFace(card))
          : el("span", { role: "img", ...attrs }, cardFace(card)),
      );
    });
    if (fanned) node.style.setProperty("--n", String(Math.max(shown.length, 1)));
    if (!fanned && cards.length > 1) {
      node.append(el("span", { class: "count", "aria-hidden": "true", text: String(cards.length) }));
    }
    return node;
  }
}
