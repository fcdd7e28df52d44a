"""Names a person chooses and reads: how two of them are compared, and which characters they
may not hold.

A reply button, a decision option, a field and the values it can take are told apart by the
person who answers or reads the trace. Two names that render the same must therefore be the
same name, whatever code points spell them: ``Yes`` and ``\uff39\uff45\uff53`` (full width),
``yes`` (case), ``Yes`` with a zero-width space or a soft hyphen in it, ``Y\u0435s`` (with a
Cyrillic ``e``), ``Ye\u0301s`` (a combining accent), ``Yes  now`` and ``Yes\u00a0now``
(spaces), ``Keep Iocked`` (a capital I for a small l), ``Keep \u029focked`` (a small capital),
``Keep locked\u2800`` (a blank braille pattern). Every check that compares user-chosen names
compares :func:`name_key`, so the rule is written once.

Which characters look alike is Unicode's own data, not a list kept here: the confusables of
UTS #39 (Unicode Security Mechanisms), as the ``confusable-homoglyphs`` package ships them,
give each character the *prototype* it is taken for, and a name's *skeleton* is the name with
each character replaced by its prototype (:func:`skeleton`). Which characters show nothing is
Unicode's too: formatting characters and the other default-ignorable code points, the Hangul
fillers, and symbols that render as a blank (:data:`INVISIBLE_CHARACTERS`).

Some characters have no place in a name at all: control characters, formatting characters
(zero-width joiners and spaces, soft hyphens, direction overrides that make text read in
another order than it is stored), line and paragraph separators, private-use, surrogate and
unassigned code points. :func:`forbidden_character` finds them so the name is refused with a
located error instead of being quietly cleaned.
"""

from __future__ import annotations

import json
import re
import unicodedata
from array import array
from bisect import bisect_left
from functools import cache
from importlib import resources
from itertools import accumulate

__all__ = [
    "FORBIDDEN_CATEGORIES",
    "INVISIBLE_CHARACTERS",
    "forbidden_character",
    "name_key",
    "names_clash",
    "skeleton",
]

#: Unicode general categories refused in names: controls (Cc), formatting characters (Cf:
#: zero-width, soft hyphen, bidirectional overrides and isolates, byte order mark), surrogates
#: (Cs), private use (Co), unassigned (Cn), and line and paragraph separators (Zl, Zp).
FORBIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})

#: Characters that render as nothing, or as a blank, although their category is a letter, a
#: mark or a symbol: the default-ignorable code points outside the categories above (Unicode's
#: Other_Default_Ignorable_Code_Point: the combining grapheme joiner, the Hangul fillers, the
#: Khmer inherent vowels) and the symbols drawn as an empty cell (the blank braille pattern,
#: the Khitan filler, the null notehead). In a name they hide a difference a person cannot see.
INVISIBLE_CHARACTERS = frozenset(
    "\u034f\u115f\u1160\u17b4\u17b5\u3164\uffa0\u2800\U00016fe4\U0001d159"
)

#: Combining marks: dropped from the key (an accent is part of the letter it sits on, and
#: variation selectors, which are marks too, only pick a glyph).
_MARKS = frozenset({"Mn", "Me"})
#: A small capital is drawn as its capital letter at the height of a small one.
_SMALL_CAPITAL = re.compile(r"LATIN (?:CAPITAL )?LETTER SMALL CAPITAL ([A-Z])")
#: Marks the package puts around right-to-left characters so its data prints legibly.
_DIRECTION_MARKS = str.maketrans("", "", "\u200e\u200f")


def forbidden_character(text: str) -> str | None:
    """The first character ``text`` may not hold in a name, described for a person
    (``U+200B ZERO WIDTH SPACE``); None when every character is allowed."""
    for char in text:
        if unicodedata.category(char) in FORBIDDEN_CATEGORIES or char in INVISIBLE_CHARACTERS:
            name = unicodedata.name(char, "unnamed character")
            return f"U+{ord(char):04X} {name}"
    return None


def name_key(text: str) -> str:
    """The form two names are compared in: equal keys read the same to a person.

    Compatibility forms are unified (NFKD: full width, ligatures, no-break spaces), every
    character that shows nothing is dropped (formatting characters, default-ignorable code
    points, blank symbols) and so are combining marks, small capitals become their letter,
    each character becomes the prototype it is taken for (UTS #39), case is folded and the
    prototypes are taken again (a capital that folds to a letter with look-alikes of its own),
    and runs of white space become one space. Case is folded after the first skeleton, so a
    capital ``I`` is still the ``l`` it imitates.
    """
    text = unicodedata.normalize("NFKD", text)
    kept = "".join(
        _small_capital(char)
        for char in text
        if unicodedata.category(char) not in FORBIDDEN_CATEGORIES
        and unicodedata.category(char) not in _MARKS
        and char not in INVISIBLE_CHARACTERS
    )
    folded = unicodedata.normalize("NFKC", skeleton(kept).casefold()).casefold()
    return " ".join(skeleton(folded).split())


def names_clash(first: str, second: str) -> bool:
    """Whether two names read the same to a person (compare keys when there are many)."""
    return name_key(first) == name_key(second)


def skeleton(text: str) -> str:
    """UTS #39's skeleton of ``text``: NFD, each character replaced by its prototype, NFD."""
    prototype = _prototypes().of
    mapped = "".join(prototype(char) for char in unicodedata.normalize("NFD", text))
    return unicodedata.normalize("NFD", mapped)


@cache
def _small_capital(char: str) -> str:
    found = _SMALL_CAPITAL.fullmatch(unicodedata.name(char, ""))
    return found.group(1) if found else char


class _Prototypes:
    """Each confusable character's prototype, in three flat objects.

    Unicode lists 6,307 characters with a prototype; as a dict they are some 11,000 string
    objects, about 860 KB held for the life of Home Assistant on a small box, to compare a
    few names now and then. Here the characters are one sorted string (found by bisection),
    their prototypes one string end to end, and where each prototype ends an array: under
    100 KB. The Latin-1 characters most names are spelled in keep a small dict of their own,
    so the common case is one lookup."""

    __slots__ = ("_ends", "_keys", "_latin", "_values")

    def __init__(self, prototypes: dict[str, str]) -> None:
        self._latin = {char: proto for char, proto in prototypes.items() if char < "\u0100"}
        chars = sorted(prototypes)
        self._keys = "".join(chars)
        self._values = "".join(prototypes[char] for char in chars)
        self._ends = array("I", accumulate(len(prototypes[char]) for char in chars))

    def of(self, char: str) -> str:
        """The prototype ``char`` is taken for, or ``char`` when it has none."""
        if char < "\u0100":
            return self._latin.get(char, char)
        keys = self._keys
        i = bisect_left(keys, char)
        if i == len(keys) or keys[i] != char:
            return char
        return self._values[self._ends[i - 1] if i else 0 : self._ends[i]]


@cache
def _prototypes() -> _Prototypes:
    """Each confusable character's prototype, read once from Unicode's confusables data.

    The package lists, for each character, the characters it is confusable with, in both
    directions: a source lists its one prototype, and a prototype lists its sources. A pair
    that only lists each other is one class of two, named by the smaller of the two, so both
    ends get the same key whichever of them Unicode calls the prototype.
    """
    path = resources.files("confusable_homoglyphs").joinpath("confusables.json")
    raw: dict[str, list[dict[str, str]]] = json.loads(path.read_text(encoding="utf-8"))
    listed = {
        key.translate(_DIRECTION_MARKS): [e["c"].translate(_DIRECTION_MARKS) for e in entries]
        for key, entries in raw.items()
    }
    prototypes: dict[str, str] = {}
    for char, targets in listed.items():
        if len(char) != 1 or len(targets) != 1:
            continue  # a sequence, or a prototype with several sources
        target = targets[0]
        if len(target) == 1 and len(listed.get(target, ())) == 1:
            target = min(char, target)
        if target != char:
            prototypes[char] = target
    return _Prototypes(prototypes)
