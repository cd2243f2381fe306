"""tablefmt: rows of values as aligned plain-text, grid, Markdown or reStructuredText tables."""

from tablefmt.render import STYLE_NAMES, render
from tablefmt.width import display_width, pad

__all__ = ["STYLE_NAMES", "display_width", "pad", "render"]
