"""The full-screen application every screen of the client runs in (race, watch, replay)."""

from __future__ import annotations

from prompt_toolkit.application import Application
from prompt_toolkit.key_binding import KeyBindings
from prompt_toolkit.layout import Layout
from prompt_toolkit.output.color_depth import ColorDepth
from prompt_toolkit.styles import Style

from client_cli.theme import STYLE_RULES, Theme


def full_screen_app(
    layout: Layout, keys: KeyBindings, theme: Theme, refresh_interval: float | None = None
) -> Application[None]:
    """The whole terminal, no mouse; the theme's colours, or one bit of colour without them."""
    return Application(
        layout=layout,
        key_bindings=keys,
        style=Style.from_dict(STYLE_RULES if theme.colour else {}),
        full_screen=True,
        mouse_support=False,
        refresh_interval=refresh_interval,
        color_depth=None if theme.colour else ColorDepth.DEPTH_1_BIT,
    )
