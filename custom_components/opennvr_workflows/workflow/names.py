"""Names a person chooses and reads: how two of them are compared, and which characters they
may not hold.

A reply button, a decision option, a field and the values it can take are told apart by the
person who answers or reads the trace. Two names that render the same must therefore be the
same name, whatever code points spell them: ``Yes`` and ``\uff39\uff45\uff53`` (full width),
``yes`` (case), ``Yes`` with a zero-width space or a soft hyphen in it, ``Y\u0435s`` (with a
Cyrillic ``e``), ``Ye\u0301s`` (a combining accent), ``Yes  now`` and ``Yes\u00a0now``
(spaces). Every check that compares user-chosen names compares :func:`name_key`, so the rule
is written once.

Some characters have no place in a name at all: control characters, formatting characters
(zero-width joiners and spaces, soft hyphens, direction overrides that make text read in
another order than it is stored), line and paragraph separators, private-use, surrogate and
unassigned code points. :func:`forbidden_character` finds them so the name is refused with a
located error instead of being quietly cleaned.
"""

from __future__ import annotations

import unicodedata

__all__ = ["FORBIDDEN_CATEGORIES", "forbidden_character", "name_key", "names_clash"]

#: Unicode general categories refused in names: controls (Cc), formatting characters (Cf:
#: zero-width, soft hyphen, bidirectional overrides and isolates, byte order mark), surrogates
#: (Cs), private use (Co), unassigned (Cn), and line and paragraph separators (Zl, Zp).
FORBIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})

#: Letters of other scripts that look like a Latin letter in common fonts, after case
#: folding (from Unicode's confusables data, UTS #39: Cyrillic, Greek, Armenian and a few
#: Latin look-alikes). Mapped to the Latin letter they are taken for.
_CONFUSABLES = str.maketrans(
    "\u0430\u0435\u04bb\u0456\u0458\u043a\u04cf\u043c\u043d\u043e\u0441\u0440"
    "\u0455\u0442\u0443\u0445\u0501\u051b\u051d\u04af\u0432\u03b1\u03b2\u03b5"
    "\u03b7\u03b9\u03ba\u03bc\u03bd\u03bf\u03c1\u03c4\u03c5\u03c7\u03f2\u03f3"
    "\u03b6\u0585\u057d\u0570\u0578\u0581\u0566\u0131\u0237\u0251\u0261",
    "aehijklmhocpstyxdqwybabenikuvoptuxcjzouhngqijag",
)


def forbidden_character(text: str) -> str | None:
    """The first character ``text`` may not hold in a name, described for a person
    (``U+200B ZERO WIDTH SPACE``); None when every character is allowed."""
    for char in text:
        if unicodedata.category(char) in FORBIDDEN_CATEGORIES:
            name = unicodedata.name(char, "unnamed character")
            return f"U+{ord(char):04X} {name}"
    return None


def name_key(text: str) -> str:
    """The form two names are compared in: equal keys read the same to a person.

    Compatibility forms are unified (NFKC: full width, ligatures, no-break spaces), invisible
    characters and combining marks are dropped, case is folded, look-alike letters of other
    scripts become the Latin letter they imitate, and runs of white space become one space.
    """
    text = unicodedata.normalize("NFKD", text)
    kept = "".join(
        char
        for char in text
        if unicodedata.category(char) not in FORBIDDEN_CATEGORIES
        and unicodedata.category(char) not in ("Mn", "Me")
    )
    folded = unicodedata.normalize("NFKC", kept.casefold()).casefold()
    return " ".join(folded.translate(_CONFUSABLES).split())


def names_clash(first: str, second: str) -> bool:
    """Whether two names read the same to a person (compare keys when there are many)."""
    return name_key(first) == name_key(second)
