"""textkit: small helpers for turning text into identifiers, slugs and wrapped paragraphs."""

from textkit.case import camel_to_snake, snake_to_camel
from textkit.slug import slugify
from textkit.truncate import initials, truncate
from textkit.wrap import wrap

__all__ = ["camel_to_snake", "initials", "slugify", "snake_to_camel", "truncate", "wrap"]
