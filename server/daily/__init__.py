"""The daily challenge: which deal a day has, attempts, the midnight sweep, boards and stats."""
