"""Ratings: the Plackett-Luce model of the `openskill` package over a race's ranking, and
the integer players see. Pure: no I/O (the race machine calls it when a rated race closes).

Plackett-Luce rates a whole ranking of N seats at once (a race is one event, not N(N-1)/2
duels), handles ties, and moves an uncertain rating (a new player's large sigma) far and a
settled one little, while a new player's result moves the others little: what "new players
count less" asks. The displayed rating is 1500 + 60 * (mu - 25): a new player (mu 25,
sigma 25/3) shows 1500, and one sigma of a new player's uncertainty is 500 points.
"""

from __future__ import annotations

from collections.abc import Sequence

from openskill.models import PlackettLuce

from server.domain.ratings import PlayerRating

NEW_MU = 25.0
NEW_SIGMA = 25.0 / 3
SHOWN_AT_NEW = 1500
POINTS_PER_MU = 60.0
PROVISIONAL_RACES = 10  # a rating is provisional until it counts this many rated races


def shown(mu: float) -> int:
    """The integer a rating is displayed as."""
    return round(SHOWN_AT_NEW + POINTS_PER_MU * (mu - NEW_MU))


def provisional(games: int) -> bool:
    return games < PROVISIONAL_RACES


def new_rating(player: str, game: str, name: str) -> PlayerRating:
    return PlayerRating(player=player, game=game, name=name, mu=NEW_MU, sigma=NEW_SIGMA)


def rate(ratings: Sequence[PlayerRating], ranks: Sequence[int]) -> list[tuple[float, float]]:
    """Every seat's new (mu, sigma) after a race in which seat i ranked `ranks[i]` (1 is
    first; equal ranks are ties)."""
    model = PlackettLuce(mu=NEW_MU, sigma=NEW_SIGMA)
    teams = [[model.create_rating([r.mu, r.sigma], name=r.player)] for r in ratings]
    rated = model.rate(teams, ranks=[float(x) for x in ranks])
    return [(team[0].mu, team[0].sigma) for team in rated]
