"""The Redis key layout: every key and channel name the server uses, in one place.

Every key starts with the configured namespace inside a hash tag, so that all
keys of one race (its metadata, seats, and every seat's game) share one Redis
Cluster slot and a Lua script can update them together:

    {ns:race:CODE}:meta              hash   race settings, status, times, result, rematch
    {ns:race:CODE}:seats             list   player ids in the order they joined
    {ns:race:CODE}:inst              set    server instances with a seated player (or a spectator)
                                            connected
    {ns:race:CODE}:game:GID          hash   one seat's game (see store.GameRecord)
    {ns:race:CODE}:game:GID:moves    list   that game's moves, in order
    {ns:race:CODE}:game:GID:snaps    zset   snapshots of its position, scored by move count
    {ns:race:CODE}:game:GID:times    list   the time each move was stored at (ms), in order
                                            (derived from the moves: server/play/snapshots.py)
    {ns:player:PID}:meta             hash   name, folded (its reserved form), created_ms,
                                            token_sha (SHA256 below)
    {ns:player:PID}:games            set    gids of the player's games (pruned lazily)
    {ns:player:PID}:inst             set    instances where the player is connected
    {ns:player:PID}:conns            hash   the player's open connections: id -> instance
    {ns:player:PID}:game:GID[:moves|:snaps] a daily or practice game, under its player's tag
    {ns:token:SHA256}                string player id of the token with that hash
    {ns:name:FOLDED}                 string player id holding that name (folded: case, width
                                            and spacing ignored; server/play/names.py)
    {ns:name:FOLDED}:also            set    others who had that name before names were reserved
    {ns:newplayers:ADDRESS}          hash   a client address's allowance of new players:
                                            tokens, at_ms (the hour), day, made (expires)
    {ns:server}:config               hash   generated secret, ...
    {ns:server}:live:INSTANCE        string present while that server instance runs (expires)
    {ns:index}:running               zset   running race codes, scored by their deadline (ms)

A new player's meta, inst, token and name expire (unplayed_player_ttl_s) until its first
game lists a gid in its games (PlayerRepo.keep_player makes them persist).

Pub/sub channel (plain PUBLISH reaches every node of a cluster):

    ns:ev:INSTANCE                   events for the connections of one server process

Game ids (server/domain/ids.py): a race seat `r.CODE.PID` lives under its race's tag, a
daily attempt `d.DATE.GAME.PID` and a practice game `p.GAME.NONCE.PID` under its player's.

    {ns:race:CODE}:bots              hash   bot player id -> strength (server/play/bots.py)
    {ns:race:CODE}:botlease          string the instance driving the race's bots (expires)
    {ns:index}:bots                  set    race codes whose bots are to be driven

The daily challenge (server/daily/, server/store/boards.py, server/store/stats_repo.py); each
multi-key command or script touches keys of a single slot:

    {ns:day:GAME:DATE}:board        zset   one member per finished attempt of that day
    {ns:day:GAME:DATE}:entries      hash   player -> SEQ(10 digits) + JSON entry
    {ns:day:GAME:DATE}:layout       string 2 once the board packs the resigned bit (store/boards.py)
    {ns:day:GAME:DATE}:deal         hash   the day's deal: seed, line, par, candidates, proven
                                           (written once, by server/daily/deals.py)
    {ns:day:GAME:DATE}:deal_lock    string lock: the instance searching for that deal
    {ns:alltime:GAME}:board         zset   one member per player who ever finished a daily
    {ns:alltime:GAME}:stats         hash   player -> SEQ + JSON totals (server/store/stats_repo.py)
    {ns:alltime:GAME}:seq           string counter giving all-time members their SEQ
    {ns:alltime:GAME}:played:PID    zset   days (as day numbers) the player finished a daily
    {ns:alltime:GAME}:won:PID       zset   days the player won
    {ns:daily}:open                 zset   gids of daily attempts not yet ranked, by day end (ms)
    {ns:daily}:sweep                string lock: the instance closing attempts whose day is over

Quick races and ratings (server/play/quick.py, server/store/queue_repo.py,
server/store/rating_repo.py):

    {ns:queue}:entries              hash   player -> their queue entry (server/store/queue_repo.py)
    {ns:queue}:lease                string lock: the instance running the matcher (expires)
    {ns:queue}:starting             zset   quick races in their lobby, by their start time (ms)
    {ns:rating:GAME}:p:PID          hash   a player's rating in GAME: name, mu, sigma, games, ver
    {ns:rating:GAME}:board          zset   player -> displayed rating
    {ns:rating:GAME}:hist:PID       list   the player's rated races in GAME (JSON), newest last
    {ns:rating:GAME}:applied:CODE   hash   Redis Cluster only: race CODE's ratings are applied
    {ns:race:CODE}:rateout          hash   Redis Cluster only: the closed race's ratings write,
                                           pending (the outbox; deleted once it is applied)

A rated race's close writes its seats' ratings in the same APPLY call as the close; on a
single Redis the race's keys and the game's rating keys go in one script. On a Redis
Cluster they hash to two slots: the close writes, in the race's slot, the ratings write
still to make (its outbox), which is then applied once (guarded by the race's `applied`
key) and deleted; server/store/store.py says how.
"""

from __future__ import annotations

from dataclasses import dataclass

from server.domain.ids import parse_gid
from server.domain.kinds import GameKind


@dataclass(frozen=True)
class GameKeys:
    meta: str
    moves: str
    # The set of instances to which this game's events must be relayed.
    interest: str
    snaps: str
    # The time (ms since the epoch) each move was stored at, entry for entry with the moves
    # (games stored before move times were kept have "0" for their earlier moves).
    times: str


@dataclass(frozen=True)
class Keys:
    ns: str

    # -- races
    def race_tag(self, code: str) -> str:
        return f"{{{self.ns}:race:{code}}}"

    def race_meta(self, code: str) -> str:
        return f"{self.race_tag(code)}:meta"

    def race_seats(self, code: str) -> str:
        return f"{self.race_tag(code)}:seats"

    def race_interest(self, code: str) -> str:
        return f"{self.race_tag(code)}:inst"

    def running_index(self) -> str:
        return f"{{{self.ns}:index}}:running"

    def race_bots(self, code: str) -> str:
        return f"{self.race_tag(code)}:bots"

    def race_rating_outbox(self, code: str) -> str:
        return f"{self.race_tag(code)}:rateout"

    def race_bot_lease(self, code: str) -> str:
        return f"{self.race_tag(code)}:botlease"

    def bot_index(self) -> str:
        return f"{{{self.ns}:index}}:bots"

    # -- players
    def player_tag(self, player: str) -> str:
        return f"{{{self.ns}:player:{player}}}"

    def player_meta(self, player: str) -> str:
        return f"{self.player_tag(player)}:meta"

    def player_games(self, player: str) -> str:
        return f"{self.player_tag(player)}:games"

    def player_challenges(self, player: str) -> str:
        """The player's asynchronous races (zset: code scored by its creation, ms)."""
        return f"{self.player_tag(player)}:challenges"

    def player_interest(self, player: str) -> str:
        return f"{self.player_tag(player)}:inst"

    def player_connections(self, player: str) -> str:
        return f"{self.player_tag(player)}:conns"

    def token(self, token_hash: str) -> str:
        return f"{{{self.ns}:token:{token_hash}}}"

    def name(self, folded: str) -> str:
        return f"{{{self.ns}:name:{folded}}}"

    def name_sharers(self, folded: str) -> str:
        return self.name(folded) + ":also"

    def new_players(self, address: str) -> str:
        return f"{{{self.ns}:newplayers:{address}}}"

    def server_config(self) -> str:
        return f"{{{self.ns}:server}}:config"

    def instance_live(self, instance: str) -> str:
        return f"{{{self.ns}:server}}:live:{instance}"

    # -- games
    def game(self, gid: str) -> GameKeys | None:
        """The keys of a game, or None if `gid` is not a well-formed game id."""
        parsed = parse_gid(gid)
        if parsed is None:
            return None
        if parsed.kind is GameKind.RACE:
            tag = self.race_tag(parsed.race)
            interest = self.race_interest(parsed.race)
        else:
            tag = self.player_tag(parsed.player)
            interest = self.player_interest(parsed.player)
        game = f"{tag}:game:{gid}"
        return GameKeys(game, f"{game}:moves", interest, f"{game}:snaps", f"{game}:times")

    # -- the daily challenge

    def _day(self, game: str, date: str) -> str:
        return f"{{{self.ns}:day:{game}:{date}}}"

    def day_board(self, game: str, date: str) -> str:
        return self._day(game, date) + ":board"

    def day_entries(self, game: str, date: str) -> str:
        return self._day(game, date) + ":entries"

    def day_layout(self, game: str, date: str) -> str:
        return self._day(game, date) + ":layout"

    def day_deal(self, game: str, date: str) -> str:
        return self._day(game, date) + ":deal"

    def day_deal_lock(self, game: str, date: str) -> str:
        return self._day(game, date) + ":deal_lock"

    def _all(self, game: str) -> str:
        return f"{{{self.ns}:alltime:{game}}}"

    def all_board(self, game: str) -> str:
        return self._all(game) + ":board"

    def all_stats(self, game: str) -> str:
        return self._all(game) + ":stats"

    def all_seq(self, game: str) -> str:
        return self._all(game) + ":seq"

    def played_days(self, game: str, player: str) -> str:
        return self._all(game) + f":played:{player}"

    def won_days(self, game: str, player: str) -> str:
        return self._all(game) + f":won:{player}"

    def open_attempts(self) -> str:
        return f"{{{self.ns}:daily}}:open"

    def sweep_lock(self) -> str:
        return f"{{{self.ns}:daily}}:sweep"

    # -- quick races and ratings
    def queue_entries(self) -> str:
        return f"{{{self.ns}:queue}}:entries"

    def queue_lease(self) -> str:
        return f"{{{self.ns}:queue}}:lease"

    def starting_index(self) -> str:
        return f"{{{self.ns}:queue}}:starting"

    def _rating(self, game: str) -> str:
        return f"{{{self.ns}:rating:{game}}}"

    def rating(self, game: str, player: str) -> str:
        return self._rating(game) + f":p:{player}"

    def rating_board(self, game: str) -> str:
        return self._rating(game) + ":board"

    def rating_history(self, game: str, player: str) -> str:
        return self._rating(game) + f":hist:{player}"

    def rating_applied(self, game: str, code: str) -> str:
        return self._rating(game) + f":applied:{code}"

    # -- pub/sub
    def instance_channel(self, instance: str) -> str:
        return f"{self.ns}:ev:{instance}"

    def instance_channel_prefix(self) -> str:
        return f"{self.ns}:ev:"

    # -- all keys, for tests and operators
    def pattern(self) -> str:
        return f"{{{self.ns}:*"
