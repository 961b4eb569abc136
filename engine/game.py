"""The base Game: piles, deal, strict move parsing, play bookkeeping, view and copies.

A game module subclasses Game, names its piles and says how the deal lays
them out and what each move does; everything else lives here. Internally a
game is a list of piles (``self._p``, in the order of ``PILES``), each a list
of card ints bottom first, plus a few named counters (``EXTRA_STATE``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any, ClassVar, Self

from engine.cards import FULL_DECK, NAMES, parse_cards
from engine.deal import check_seed, deal_order
from engine.errors import IllegalMove, MalformedMove

Move = tuple[int, int] | None
"""A parsed move: (source pile, destination pile) indices, or None for ``deal``."""

DEAL = "deal"


class Game:
    """One game in progress. Subclasses set the class attributes and the hooks below."""

    # --- what a game module declares -------------------------------------------------
    game_id: ClassVar[str]
    title: ClassVar[str]
    PILES: ClassVar[tuple[str, ...]]
    """Every pile code, in internal order (the index of a code is its pile index)."""
    HIDDEN: ClassVar[frozenset[str]] = frozenset()
    """Face-down piles: the public view shows only their card counts."""
    MOVE_CODES: ClassVar[Mapping[str, int]]
    """Code -> pile index for every code that may appear in a move string. A game may add
    codes that are not piles (Baker's Game's "f") by mapping them to a negative index."""
    DECK: ClassVar[tuple[int, ...]] = FULL_DECK
    """The cards the deal shuffles, in canonical order."""
    CARDS: ClassVar[frozenset[int]] = frozenset(FULL_DECK)
    """Every card of the game: the deck plus any card laid out before the shuffle."""
    MAX_SCORE: ClassVar[int]
    LEAVE_PLAY: ClassVar[bool] = False
    """Whether cards leave the game (Quatorze's removed pairs) instead of staying in a pile."""
    EXTRA_STATE: ClassVar[tuple[tuple[str, int], ...]] = ()
    """(attribute, value after the deal) for counters besides the piles; shown in the view."""
    MOVE_EXAMPLES: ClassVar[str]
    """How moves look, for the message about a malformed move."""
    RENDER_ROWS: ClassVar[tuple[tuple[str, ...], ...]]
    """Pile codes drawn on each line of render_text: a lone pile shows all its cards,
    piles sharing a line show their top cards."""

    # --- built once per subclass by __init_subclass__ ----------------------------------
    _MOVES: ClassVar[Mapping[str, Move]]
    HAS_DEAL: ClassVar[bool]
    """Whether ``deal`` is a move of this game: true when the game implements ``_deal``."""
    _VISIBLE: ClassVar[tuple[tuple[str, int], ...]]
    _HIDDEN_AT: ClassVar[tuple[tuple[str, int], ...]]

    __slots__ = ("_over", "_p", "moves", "seed")

    seed: int | None
    moves: int
    _p: list[list[int]]
    _over: bool | None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "game_id" not in cls.__dict__:
            return
        cls.HAS_DEAL = cls._deal is not Game._deal
        # Only strings in this table are moves of the game: everything else is malformed.
        table: dict[str, Move] = {DEAL: None} if cls.HAS_DEAL else {}
        for src_code, src in cls.MOVE_CODES.items():
            for dst_code, dst in cls.MOVE_CODES.items():
                table[f"{src_code}-{dst_code}"] = cls._canonical(src, dst)
        cls._MOVES = MappingProxyType(table)
        cls._VISIBLE = tuple((c, i) for i, c in enumerate(cls.PILES) if c not in cls.HIDDEN)
        cls._HIDDEN_AT = tuple((c, i) for i, c in enumerate(cls.PILES) if c in cls.HIDDEN)

    # --- construction ------------------------------------------------------------------
    def __init__(self, seed: int) -> None:
        """Deal game ``seed`` (1..2^31-1) and run any automatic actions that follow the deal."""
        self.seed = check_seed(seed)
        self.moves = 0
        self._over = None
        for name, value in self.EXTRA_STATE:
            setattr(self, name, value)
        self._p = self._layout(deal_order(self.DECK, seed))
        self._settle()

    @classmethod
    def dealt_piles(cls, seed: int) -> dict[str, list[str]]:
        """The piles as the deal lays them out, before any automatic action.

        >>> from engine import game_class
        >>> game_class("bakers_game").dealt_piles(1)["t5"]  # AS AC 2C lie under 3D
        ['7H', 'QC', 'AS', 'AC', '2C', '3D']
        """
        piles = cls._layout(deal_order(cls.DECK, check_seed(seed)))
        return {code: [NAMES[c] for c in pile] for code, pile in zip(cls.PILES, piles, strict=True)}

    @classmethod
    def from_piles(
        cls,
        piles: Mapping[str, Iterable[str]],
        *,
        moves: int = 0,
        seed: int | None = None,
        **extra: int,
    ) -> Self:
        """A game in the position given by ``piles`` (code -> card names, bottom first).

        Piles left out are empty. The cards need not be a full deck (tests build small
        positions), but each may appear only once and must belong to the game's deck.
        Counters of EXTRA_STATE may be given by name. Automatic actions (Baker's Game
        auto-play) run on the position, as they do after every move.

        >>> from engine import game_class
        >>> game = game_class("doublets").from_piles({"f": ["9H"], "r0": ["QC"]}, redeals_left=0)
        >>> game.score, game.legal_moves(), game.over, game.won  # QC needs a 5 on the 9
        (1, [], True, False)
        >>> game_class("bakers_game").from_piles({"t0": ["KS", "AS"]}).piles["fS"]
        ['AS']
        """
        if isinstance(moves, bool) or not isinstance(moves, int) or moves < 0:
            raise ValueError(f"moves must be a count, not {moves!r}")
        unknown = set(piles) - set(cls.PILES)
        if unknown:
            raise ValueError(f"{cls.title} has no pile {sorted(unknown)[0]!r}")
        extras = dict(cls.EXTRA_STATE)
        for name, value in extra.items():
            if name not in extras:
                raise TypeError(f"{cls.title} has no counter {name!r}")
            extras[name] = value
        game = object.__new__(cls)
        game.seed = seed
        game.moves = moves
        game._over = None
        for name, value in extras.items():
            setattr(game, name, value)
        game._p = [parse_cards(piles.get(code, ()), code) for code in cls.PILES]
        seen: set[int] = set()
        for code, pile in zip(cls.PILES, game._p, strict=True):
            for c in pile:
                if c in seen:
                    raise ValueError(f"{NAMES[c]} appears twice")
                if c not in cls.CARDS:
                    raise ValueError(f"{NAMES[c]} ({code}) is not a card of {cls.title}")
                seen.add(c)
        game._check_position()
        game._settle()
        return game

    @classmethod
    def from_view(cls, view: Mapping[str, Any]) -> Self:
        """A game consistent with a public view: its hidden piles hold the cards the view
        does not show, in canonical order (their contents never decide what is legal).

        >>> import engine
        >>> game = engine.new_game("doublets", 1)
        >>> twin = type(game).from_view(game.view())
        >>> twin.view() == game.view(), twin.piles["s"] == game.piles["s"]
        (True, False)
        """
        if view.get("game") != cls.game_id:
            raise ValueError(f"the view is of {view.get('game')!r}, not {cls.game_id!r}")
        shown = view["piles"]
        counts = view["hidden"]
        expected = {c for c, _ in cls._VISIBLE}
        if set(shown) != expected:
            raise ValueError(f"the view's piles are not those of {cls.title}")
        if set(counts) != {c for c, _ in cls._HIDDEN_AT}:
            raise ValueError(f"the view's hidden piles are not those of {cls.title}")
        visible = {c for pile in shown.values() for c in parse_cards(pile, "view")}
        rest = [NAMES[c] for c in sorted(cls.CARDS) if c not in visible]
        if not all(type(n) is int and n >= 0 for n in counts.values()):
            raise ValueError("the view's hidden counts must be counts")
        hidden = sum(counts.values())
        if hidden > len(rest) or (hidden < len(rest) and not cls.LEAVE_PLAY):
            raise ValueError(
                f"the view hides {hidden} cards but leaves {len(rest)} unaccounted for"
            )
        piles = dict(shown)
        start = 0
        for code, _ in cls._HIDDEN_AT:
            n = counts[code]
            # Bottom first, so the next card out is the last of the slice.
            piles[code] = rest[start : start + n]
            start += n
        extra = {name: view[name] for name, _ in cls.EXTRA_STATE}
        return cls.from_piles(piles, moves=view["moves"], **extra)

    def copy(self) -> Self:
        """An independent copy (piles are copied, nothing is shared).

        >>> import engine
        >>> game = engine.new_game("hopscotch", 1)
        >>> twin = game.copy()
        >>> twin.play("deal")
        >>> game.moves, twin.moves, game.piles["w"], twin.piles["w"], twin == game
        (0, 1, [], ['QD'], False)
        """
        new = object.__new__(type(self))
        new.seed = self.seed
        new.moves = self.moves
        new._over = self._over
        new._p = [pile[:] for pile in self._p]
        for name, _ in self.EXTRA_STATE:
            setattr(new, name, getattr(self, name))
        return new

    # --- playing -----------------------------------------------------------------------
    def play(self, move: object) -> None:
        """Play one move string. A refused move raises MalformedMove (no move of this game)
        or IllegalMove (the rules forbid it here), both MoveError, with the reason, and
        leaves the game unchanged. ``moves`` counts the moves played.

        >>> import engine
        >>> game = engine.new_game("quatorze", 1)
        >>> game.piles["c5"], game.piles["c6"], game.score
        (['7H'], ['7C'], 0)
        >>> game.play("c6-c5")  # the same move as c5-c6; the stock refills c5, then c6
        >>> game.piles["c5"], game.score, game.moves
        (['5C'], 2, 1)
        >>> game.play("c0-c1")
        Traceback (most recent call last):
            ...
        engine.errors.IllegalMove: JD and 2D do not add up to 14
        >>> game.play("c0-c25")
        Traceback (most recent call last):
            ...
        engine.errors.MalformedMove: malformed move 'c0-c25' (moves look like 'c3-c8' (two cells))
        >>> game.play(None)
        Traceback (most recent call last):
            ...
        engine.errors.MalformedMove: a move must be a string, not NoneType
        >>> game.moves
        1
        """
        try:
            parsed = self._MOVES[move]  # type: ignore[index]
        except (KeyError, TypeError):
            raise MalformedMove(self._malformed(move)) from None
        if self.won:
            raise IllegalMove("the game is won: no more moves")
        # Each hook validates everything before it changes anything.
        if parsed is None:
            self._deal()
        else:
            self._move(parsed[0], parsed[1])
        self.moves += 1
        self._over = None

    def legal_moves(self) -> list[str]:
        """Every distinct legal move string (canonical spellings only), in no set order.

        >>> import engine
        >>> game = engine.new_game("hopscotch", 1)
        >>> game.legal_moves()
        ['deal']
        >>> game.play("deal")  # QD: no foundation wants it yet, any reserve takes it
        >>> sorted(game.legal_moves())
        ['w-r0', 'w-r1', 'w-r2', 'w-r3']
        >>> quatorze = engine.new_game("quatorze", 1)
        >>> len(quatorze.legal_moves()), "c5-c6" in quatorze.legal_moves()
        (12, True)
        """
        if self.won:
            return []
        return self._legal_moves()

    @property
    def over(self) -> bool:
        """True when no legal move is left (a won game is over).

        >>> from engine import game_class
        >>> game = game_class("quatorze").from_piles({"c0": ["KS"], "c3": ["AS"]})
        >>> game.over, game.won
        (False, False)
        >>> game.play("c0-c3")
        >>> game.over, game.won, game.legal_moves()
        (True, True, [])
        """
        over = self._over
        if over is None:
            over = self._over = self.won or not self._has_legal_move()
        return over

    @property
    def piles(self) -> dict[str, list[str]]:
        """Every pile, hidden ones included: code -> card names, bottom first.

        >>> import engine
        >>> game = engine.new_game("hopscotch", 1)
        >>> [game.piles[f"f{i}"] for i in range(4)], len(game.piles["s"]), game.piles["s"][-1]
        ([['AC'], ['2C'], ['3C'], ['4C']], 48, 'QD')
        """
        return {
            code: [NAMES[c] for c in pile] for code, pile in zip(self.PILES, self._p, strict=True)
        }

    def unseen(self) -> bytes:
        """The cards this game has never shown face up, one byte each (its card int).

        A card leaves a face-down pile face up; in most games it never goes back, so the
        cards never shown are those of the face-down piles. A game that turns shown cards
        face down again (Doublets' redeal) says so by overriding this. Every seat of a race
        plays the same deal, so a card one game has shown is the same card in the same
        place of every other's deal: what spectators may see (server/play/) is decided
        from these sets. Bytes, because the server asks after every move of a race: made
        from the piles' lists in C, they cost a fraction of a microsecond.

        >>> import engine
        >>> from engine.cards import CARD_IDS
        >>> game = engine.new_game("hopscotch", 1)
        >>> len(game.unseen()), CARD_IDS["QD"] in game.unseen()  # 48 in the stock
        (48, True)
        >>> game.play("deal")  # QD is dealt face up
        >>> len(game.unseen()), CARD_IDS["QD"] in game.unseen()
        (47, False)
        >>> engine.new_game("bakers_game", 1).unseen()  # nothing face down
        b''
        """
        p = self._p
        at = self._HIDDEN_AT
        if len(at) == 1:  # most games: one face-down pile (the stock)
            return bytes(p[at[0][1]])
        return b"".join([bytes(p[i]) for _, i in at])

    def view(self) -> dict[str, Any]:
        """The public view: plain dicts, lists, strings, ints and bools; hidden piles as counts.

        >>> import engine
        >>> view = engine.new_game("doublets", 1).view()
        >>> list(view)
        ['game', 'piles', 'hidden', 'score', 'max_score', 'moves', 'won', 'over', 'redeals_left']
        >>> view["hidden"], view["piles"]["f"], view["score"], view["max_score"]
        ({'s': 44}, ['7C'], 1, 48)
        >>> "s" in view["piles"]
        False
        """
        # map() with the tuple's own lookup names a pile's cards without a bytecode loop per
        # card: the server builds a view for every move it acknowledges.
        name = NAMES.__getitem__
        p = self._p
        view: dict[str, Any] = {
            "game": self.game_id,
            "piles": {code: list(map(name, p[i])) for code, i in self._VISIBLE},
            "hidden": {code: len(p[i]) for code, i in self._HIDDEN_AT},
            "score": self.score,
            "max_score": self.MAX_SCORE,
            "moves": self.moves,
            "won": self.won,
            "over": self.over,
        }
        for extra, _ in self.EXTRA_STATE:
            view[extra] = getattr(self, extra)
        return view

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        assert isinstance(other, Game)
        return (
            self.seed == other.seed
            and self.moves == other.moves
            and self._p == other._p
            and all(getattr(self, n) == getattr(other, n) for n, _ in self.EXTRA_STATE)
        )

    __hash__ = None  # type: ignore[assignment]  # games are mutable

    def __repr__(self) -> str:
        return (
            f"<{type(self).__name__} seed={self.seed} moves={self.moves} "
            f"score={self.score}/{self.MAX_SCORE}>"
        )

    @classmethod
    def render_view(cls, view: Mapping[str, Any]) -> str:
        """A plain-text board of a public view of this game (see engine.render_text)."""
        status = "  WON" if view["won"] else "  OVER" if view["over"] else ""
        header = f"{cls.title}  score {view['score']}/{view['max_score']}  moves {view['moves']}"
        for name, _ in cls.EXTRA_STATE:
            header += f"  {name.replace('_', ' ')} {view[name]}"
        return "\n".join([header + status, *cls._render_rows(view)])

    @classmethod
    def _render_rows(cls, view: Mapping[str, Any]) -> list[str]:
        piles, hidden = view["piles"], view["hidden"]
        lines = []
        for row in cls.RENDER_ROWS:
            if len(row) == 1:
                code = row[0]
                shown = _cards(piles[code]) if code in piles else ""
                if code in hidden:
                    face_down = f"{hidden[code]} face down"
                    shown = f"{shown} (+{face_down})" if shown else face_down
                lines.append(f"{code}: {shown}")
                continue
            cells = []
            for code in row:
                if code in hidden and code in piles:
                    # A spectator's board: the cards it may see, and a count of the others.
                    pile = piles[code]
                    top = pile[-1] if pile else "--"
                    cells.append(f"{code}: {top} (+{hidden[code]} face down)")
                elif code in hidden:
                    cells.append(f"{code}: {hidden[code]} face down")
                else:
                    pile = piles[code]
                    more = f" ({len(pile)})" if len(pile) > 1 else ""
                    cells.append(f"{code}: {pile[-1] if pile else '--'}{more}")
            lines.append("   ".join(cells))
        return lines

    # --- hooks for game modules --------------------------------------------------------
    @classmethod
    def _layout(cls, order: list[int]) -> list[list[int]]:
        """The piles (in PILES order) that the deal makes from the dealt card order."""
        raise NotImplementedError

    @classmethod
    def _canonical(cls, src: int, dst: int) -> Move:
        """The parsed form of SRC-DST; a game with alternative spellings folds them here."""
        return (src, dst)

    def _check_position(self) -> None:
        """Raise ValueError if a built position breaks the game's pile limits."""

    def _settle(self) -> None:
        """Automatic actions after the deal and after every move (none by default)."""

    def _deal(self) -> None:
        """Play ``deal``; a game that has a deal move overrides this (see HAS_DEAL)."""
        raise NotImplementedError

    def _move(self, src: int, dst: int) -> None:
        raise NotImplementedError

    def _legal_moves(self) -> list[str]:
        raise NotImplementedError

    def _has_legal_move(self) -> bool:
        """Whether any move is legal; a game may answer faster than listing them all."""
        return bool(self._legal_moves())

    @property
    def score(self) -> int:
        """The game's score as its rules define it (0..MAX_SCORE).

        >>> import engine
        >>> [engine.new_game(game_id, 1).score for game_id in engine.GAMES]
        [1, 0, 0, 0]
        """
        raise NotImplementedError

    @property
    def won(self) -> bool:
        """Whether the game's goal is reached (then it is over and refuses every move)."""
        raise NotImplementedError

    # --- shared helpers ----------------------------------------------------------------
    @classmethod
    def _malformed(cls, move: object) -> str:
        if not isinstance(move, str):
            return f"a move must be a string, not {type(move).__name__}"
        if move == DEAL:
            return f"{cls.title} has no 'deal' move"
        return f"malformed move {move!r} (moves look like {cls.MOVE_EXAMPLES})"

    def _code(self, index: int) -> str:
        return self.PILES[index]

    def _top(self, index: int) -> int:
        """The top card of a pile that the move uses as a source; IllegalMove if it is empty."""
        pile = self._p[index]
        if not pile:
            raise IllegalMove(f"{self.PILES[index]} is empty")
        return pile[-1]


def _cards(pile: list[str]) -> str:
    return " ".join(pile) if pile else "--"
