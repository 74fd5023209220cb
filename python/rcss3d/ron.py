"""Writing a server configuration (a Python mapping) as RON, the format of
``conf/server.ron``: ``{"sync_timeout_ms": 2000, "rules": {"RuleHalfTime":
60.0}}`` becomes ``(sync_timeout_ms: 2000, rules: (RuleHalfTime: 60.0))``.

Mappings become structs, lists and tuples become sequences, ``None``
becomes ``None``, strings are quoted; :class:`Raw` passes text through
unchanged (``Raw("Some(0.5)")`` for the physics section's optional
mechanisms).
"""

from __future__ import annotations

import math
import re
from typing import Any, Mapping

_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class Raw(str):
    """RON text written as it is."""


def to_ron(value: Any) -> str:
    """``value`` as RON text. Raises :class:`ValueError` for what RON cannot
    hold (a key that is not an identifier, a NaN, an unknown type)."""
    if isinstance(value, Raw):
        return str(value)
    if value is None:
        return "None"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"RON has no {value}")
        text = repr(value)
        return text if any(c in text for c in ".eE") else text + ".0"
    if isinstance(value, str):
        escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
        return f'"{escaped}"'
    if isinstance(value, Mapping):
        items = []
        for key, item in value.items():
            if not isinstance(key, str) or not _KEY.match(key):
                raise ValueError(f"configuration key {key!r} is not an identifier")
            items.append(f"{key}: {to_ron(item)}")
        return "(" + ", ".join(items) + ")"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(to_ron(v) for v in value) + "]"
    if hasattr(value, "__fspath__"):
        return to_ron(str(value))
    raise ValueError(f"cannot write {type(value).__name__} as RON")
