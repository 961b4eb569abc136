// A daily attempt's result as lines to paste into a chat, without spoilers, exactly as the
// terminal client writes them: game, date, won or not, score, moves, time, rank, and one
// bar per tenth of the game, taller for more cards home in that tenth.
import { clock, title, MAX_SCORE } from "./util.js";

const BARS = "▁▂▃▄▅▆▇█";
const UNKNOWN = "?";
const TENTHS = 10;

// Python's round(), which the terminal client uses: halves go to the even neighbour.
function roundHalfEven(x) {
  const r = Math.round(x);
  return x - Math.floor(x) === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

export function progress(scores, moves) {
  const scoreAt = (n) => {
    let best = null;
    for (const k of scores.keys()) if (k <= n && (best === null || k > best)) best = k;
    return best === null ? null : scores.get(best);
  };
  const bounds = Array.from({ length: TENTHS + 1 }, (_, i) => roundHalfEven((i * moves) / TENTHS));
  const gains = [];
  for (let i = 0; i < TENTHS; i++) {
    const before = scoreAt(bounds[i]);
    const after = scoreAt(bounds[i + 1]);
    gains.push(before === null || after === null ? null : Math.max(0, after - before));
  }
  const known = gains.filter((g) => g !== null);
  if (!known.length) return "";
  const most = Math.max(...known) || 1;
  const top = BARS.length - 1;
  return gains
    .map((g) => (g === null ? UNKNOWN : g === 0 ? BARS[0] : BARS[Math.max(1, roundHalfEven((g * top) / most))]))
    .join("");
}

export function shareText(game, date, mine, total, scores) {
  const lines = [
    `solitaire-race · ${title(game)} daily ${date}`,
    `${mine.won ? "Won ✓" : "Not won"} · ${mine.score}/${MAX_SCORE[game] || 0} · ${mine.moves} moves · ${clock(mine.time_ms)} · #${mine.rank} of ${total}`,
  ];
  const picture = progress(scores, mine.moves);
  if (picture) lines.push(picture);
  return lines.join("\n");
}
