"""How the pool and a worker talk over a pair of pipes: length-prefixed pickles (both sides are trusted)."""

from __future__ import annotations

import pickle
import struct


def read_frame(stream) -> object | None:
    """One length-prefixed pickle from a binary stream (pool <-> worker), or None at end of stream."""
    header = stream.read(8)
    if len(header) < 8:
        return None
    (size,) = struct.unpack("!Q", header)
    return pickle.loads(stream.read(size))


def write_frame(stream, value: object) -> None:
    """Write one length-prefixed pickle and flush."""
    data = pickle.dumps(value)
    stream.write(struct.pack("!Q", len(data)) + data)
    stream.flush()
