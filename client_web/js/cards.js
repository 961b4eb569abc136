// Card names and glyphs. A card is its rank then its suit: "7H", "TD" (ten), "QS".
const RANKS = { A: "ace", T: "10", J: "jack", Q: "queen", K: "king" };
const SHORT = { T: "10" };
const SUITS = { C: ["clubs", "♣"], D: ["diamonds", "♦"], H: ["hearts", "♥"], S: ["spades", "♠"] };

export function cardName(card) {
  const rank = RANKS[card[0]] || card[0];
  return `${rank} of ${SUITS[card[1]][0]}`;
}

export const rankGlyph = (card) => SHORT[card[0]] || card[0];
export const suitGlyph = (card) => SUITS[card[1]][1];
export const isRed = (card) => card[1] === "D" || card[1] === "H";
