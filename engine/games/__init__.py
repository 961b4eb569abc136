"""One module per game; each holds only that game's piles, deal and rules."""
