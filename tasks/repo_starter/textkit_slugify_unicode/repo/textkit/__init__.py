"""textkit: small helpers for turning text into identifiers, slugs and wrapped paragraphs."""

from textkit.case import camel_to_snake, snake_to_camel
from textkit.slug import slugify
from textkit.wrap import wrap

__all__ = ["camel_to_snake", "slugify", "snake_to_camel", "wrap"]
