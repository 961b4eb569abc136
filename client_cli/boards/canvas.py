"""A small grid of styled characters that the board renderers draw on.

Renderers place text at (column, row); the result comes out either as
prompt_toolkit fragments (styled) or as plain text (docs, tests, `--plain`).
Each character is assumed to take one terminal cell, which holds for the
suit symbols and box characters we use.
"""

from __future__ import annotations

from prompt_toolkit.formatted_text import StyleAndTextTuples

Fragment = tuple[str, str]


class Canvas:
    def __init__(self, width: int) -> None:
        self.width = width
        self._rows: list[list[Fragment]] = []

    @property
    def height(self) -> int:
        return len(self._rows)

    def put(self, x: int, y: int, text: str, style: str = "") -> int:
        """Write `text` at column x of row y (clipped to the width); returns the column after it."""
        while len(self._rows) <= y:
            self._rows.append([("", " ")] * self.width)
        row = self._rows[y]
        for i, ch in enumerate(text):
            if 0 <= x + i < self.width:
                row[x + i] = (style, ch)
        return x + len(text)

    def put_fragments(self, x: int, y: int, fragments: list[Fragment]) -> int:
        for style, text in fragments:
            x = self.put(x, y, text, style)
        return x

    def fragments(self) -> StyleAndTextTuples:
        """Styled fragments, consecutive cells of one style merged, rows ended by newlines."""
        out: StyleAndTextTuples = []
        for row in self._rows:
            for style, ch in _trim(row):
                if out and out[-1][0] == style and out[-1][1] != "\n":
                    out[-1] = (style, out[-1][1] + ch)
                else:
                    out.append((style, ch))
            out.append(("", "\n"))
        return out

    def text(self) -> str:
        return "\n".join("".join(ch for _, ch in _trim(row)) for row in self._rows)


def _trim(row: list[Fragment]) -> list[Fragment]:
    end = len(row)
    while end and row[end - 1] == ("", " "):
        end -= 1
    return row[:end]
