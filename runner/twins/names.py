"""The plain names a renamed twin takes, and which names read as English words in prose."""

from __future__ import annotations

import builtins
import keyword
import random

WORDS = (
    "amber",
    "anchor",
    "apron",
    "arbor",
    "atlas",
    "badge",
    "basin",
    "beacon",
    "birch",
    "bishop",
    "blossom",
    "bramble",
    "breeze",
    "bridle",
    "brook",
    "cabin",
    "canal",
    "candle",
    "canopy",
    "canyon",
    "cargo",
    "cedar",
    "cellar",
    "chalk",
    "chapel",
    "cinder",
    "clover",
    "cobalt",
    "comet",
    "copper",
    "coral",
    "cottage",
    "crater",
    "crest",
    "cricket",
    "crystal",
    "dahlia",
    "delta",
    "dune",
    "ember",
    "falcon",
    "fennel",
    "fern",
    "fjord",
    "flint",
    "forge",
    "fossil",
    "garnet",
    "geyser",
    "ginger",
    "glacier",
    "granite",
    "gravel",
    "grove",
    "harbor",
    "hazel",
    "heron",
    "hollow",
    "indigo",
    "ivory",
    "jasper",
    "juniper",
    "kelp",
    "kettle",
    "lagoon",
    "lantern",
    "larch",
    "lattice",
    "ledger",
    "lilac",
    "linden",
    "lotus",
    "magnet",
    "mango",
    "maple",
    "marble",
    "meadow",
    "mesa",
    "mica",
    "mistral",
    "monsoon",
    "mosaic",
    "nectar",
    "nimbus",
    "nutmeg",
    "oasis",
    "ochre",
    "olive",
    "onyx",
    "opal",
    "orchid",
    "otter",
    "paddle",
    "pebble",
    "pepper",
    "pilgrim",
    "pine",
    "plume",
    "poplar",
    "prairie",
    "prism",
    "quarry",
    "quartz",
    "quill",
    "raven",
    "reef",
    "ripple",
    "saffron",
    "sage",
    "sequoia",
    "shale",
    "sierra",
    "slate",
    "sorrel",
    "spruce",
    "summit",
    "tandem",
    "thistle",
    "thicket",
    "timber",
    "topaz",
    "tundra",
    "tulip",
    "umber",
    "valley",
    "velvet",
    "violet",
    "walnut",
    "willow",
    "yarrow",
    "zephyr",
    "zinnia",
)
"""Plain nouns with no meaning in programming: a renamed entry point is two of them (`cobalt_meadow`), a renamed
parameter one."""

ENGLISH = frozenset(
    """a i an as at be by do if in is it no of on or so to up we add array base brackets capacity char check colors
    common compare concatenate convert cost count data date decimal degree derivative dict difference digits divisor
    eat element encode encrypt end exchange exp extensions factorize find frequency game grades grid guess height
    histogram index input intersection intersperse item items iterable key last length limit list lists longest
    maximum median merge message minimum monotonic multiply name need number numbers operand operations operator
    order overlapping pattern patterns pluck power prefix ranges remaining result rotations search sentence sequence
    shift side simplify size solution solve split start step steps string strings students substring sum test text
    threshold unique validate value values word words""".split()
)
"""Names that are also ordinary English words (compared lower-cased): in prose such a name is renamed only where it
reads as code (in backticks, or called: `name(`), since elsewhere it is the word (`a list`, `the median`)."""


def reserved(name: str) -> bool:
    """Whether `name` is a keyword or a builtin, which a twin never takes."""
    return keyword.iskeyword(name) or hasattr(builtins, name)


def fresh_names(count_words: list[int], seed: str, taken: set[str]) -> list[str]:
    """One new name per entry of `count_words` (a name of that many WORDS joined by `_`), seeded by `seed`, none
    in `taken` nor reserved, all distinct. Deterministic: the same seed and `taken` give the same names."""
    rng = random.Random(seed)
    names: list[str] = []
    for words in count_words:
        for _ in range(10_000):
            name = "_".join(rng.choice(WORDS) for _ in range(words))
            if name not in taken and name not in names and not reserved(name):
                names.append(name)
                break
        else:
            raise ValueError(f"no fresh name of {words} word(s) left for seed {seed!r}")
    return names
