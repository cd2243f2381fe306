"""Conversions between camelCase / PascalCase and snake_case identifiers."""

import re

_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def camel_to_snake(name: str) -> str:
    """Return `name` (camelCase or PascalCase) in snake_case.

    Acronyms stay together: ``parseHTTPResponse`` -> ``parse_http_response``.
    """
    if not name:
        return ""
    parts = _BOUNDARY.split(name)
    return "_".join(part.lower() for part in parts if part)


def snake_to_camel(name: str, upper_first: bool = False) -> str:
    """Return `name` (snake_case) in camelCase, or PascalCase when `upper_first`.

    Leading and trailing underscores are kept as they are (``_private`` stays private).
    """
    stripped = name.strip("_")
    if not stripped:
        return name
    lead = name[: len(name) - len(name.lstrip("_"))]
    trail = name[len(name.rstrip("_")) :]
    words = [word for word in stripped.split("_") if word]
    first = words[0].capitalize() if upper_first else words[0].lower()
    rest = "".join(word.capitalize() for word in words[1:])
    return f"{lead}{first}{rest}{trail}"
