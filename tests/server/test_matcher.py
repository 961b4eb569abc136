"""The quick-race matcher on its own, over simulated time (hypothesis).

Players of the four games arrive with random ratings, some leave the queue, and the clock
moves on by random steps; after every step the matcher runs once, as one round of the
server's matcher loop, and its races leave the queue. Checked after every round, with the
window written out here from the settings (first window plus widening per second waited),
not taken from the matcher:

- nobody is put in two races (nor in a race and a bot race), nor matched after leaving;
- every race has 2 to max_players players of one game, and its spread of ratings is within
  the window of its longest waiter at the round's time;
- nobody still waits at or past the bot offer time;
- no two players still waiting could have raced together: the round left no pair of one
  game within the older one's window (the matcher does not leave possible races unformed).
"""

from __future__ import annotations

import hypothesis.strategies as st
from hypothesis import settings
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from server.play.matcher import MatchRules, Waiting, bot_strength, match

GAMES = ["bakers_game", "doublets", "hopscotch", "quatorze"]
RULES = MatchRules(first_window=100, widen_per_s=20.0, max_players=4, bot_after_s=30.0)


def window(waited_ms: int) -> float:
    return 100 + 20.0 * waited_ms / 1000


class MatcherMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.now = 1_000_000
        self.queue: dict[str, Waiting] = {}
        self.next_id = 0
        self.matched: set[str] = set()
        self.left: set[str] = set()

    @rule(
        game=st.sampled_from(GAMES),
        rating=st.integers(min_value=800, max_value=2300),
        count=st.integers(min_value=1, max_value=5),
    )
    def arrive(self, game: str, rating: int, count: int) -> None:
        for i in range(count):
            self.next_id += 1
            player = f"p{self.next_id}"
            self.queue[player] = Waiting(player, player, game, rating + 37 * i, self.now)
        self.round()

    @rule(data=st.data())
    def leave(self, data: st.DataObject) -> None:
        if not self.queue:
            return
        player = data.draw(st.sampled_from(sorted(self.queue)))
        del self.queue[player]
        self.left.add(player)
        self.round()

    @rule(step_ms=st.integers(min_value=1, max_value=20_000))
    def tick(self, step_ms: int) -> None:
        self.now += step_ms
        self.round()

    def round(self) -> None:
        entries = list(self.queue.values())
        out = match(entries, self.now, RULES)
        seen: set[str] = set()
        for race in out.races:
            players = [w.player for w in race.players]
            assert 2 <= len(players) <= RULES.max_players
            assert {w.game for w in race.players} == {race.game}
            for pl in players:
                assert pl in self.queue, f"{pl} matched but not waiting"
                assert pl not in seen and pl not in self.matched, f"{pl} in two races"
                seen.add(pl)
            ratings = [w.rating for w in race.players]
            oldest = min(w.since_ms for w in race.players)
            assert max(ratings) - min(ratings) <= window(self.now - oldest)
        for w in out.bots:
            assert w.player in self.queue
            assert w.player not in seen and w.player not in self.matched
            seen.add(w.player)
            # Alone: nobody else of its game within its window was left waiting.
            assert self.now - w.since_ms >= 30_000
            assert bot_strength(w.rating) in ("easy", "medium", "hard")
        for pl in seen:
            del self.queue[pl]
        self.matched |= seen

    @invariant()
    def nobody_waits_past_the_bot_offer(self) -> None:
        for w in self.queue.values():
            assert self.now - w.since_ms < 30_000, f"{w.player} waited past the bot offer"

    @invariant()
    def no_race_left_unformed(self) -> None:
        waiting = sorted(self.queue.values(), key=lambda w: w.since_ms)
        for i, a in enumerate(waiting):
            for b in waiting[i + 1 :]:
                if a.game == b.game:
                    assert abs(a.rating - b.rating) > window(self.now - a.since_ms), (a, b)

    @invariant()
    def the_left_are_never_matched(self) -> None:
        assert not (self.left & self.matched)


TestMatcher = MatcherMachine.TestCase
TestMatcher.settings = settings(max_examples=200, stateful_step_count=40, deadline=None)


def test_a_race_takes_the_closest_ratings_up_to_its_size() -> None:
    now = 10_000
    entries = [
        Waiting("a", "a", "quatorze", 1500, 0),
        Waiting("b", "b", "quatorze", 1540, 1000),
        Waiting("c", "c", "quatorze", 1900, 1000),
        Waiting("d", "d", "quatorze", 1490, 2000),
        Waiting("e", "e", "doublets", 1500, 2000),
    ]
    out = match(entries, now, RULES)
    # a waited 10 s: window 300 wide; c (400 above) does not fit, e plays another game.
    assert [[w.player for w in r.players] for r in out.races] == [["a", "d", "b"]]
    assert out.bots == []
