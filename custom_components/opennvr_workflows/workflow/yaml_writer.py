"""Plain data -> YAML text, spelled so that this package's reader gives the same data back.

Kept apart from :mod:`.dump` (what the canonical data is) because how a value is spelled in
YAML is its own concern: strings a YAML 1.1 or 1.2 reader would take for something else are
quoted, clock times too, and short lists of plain values sit on one line, as people write them.
It mirrors :mod:`.yaml_loader`, whose scalar rules it uses.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from .yaml_loader import resolve_plain_scalar

__all__ = ["canonical_yaml"]


class _Dumper(yaml.SafeDumper):
    """PyYAML's safe dumper, with quoting that fits the YAML 1.2 reader of this package, and
    lists indented under their key as people write them."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)


_CLOCK = re.compile(r"\d+:\d+")


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    # PyYAML quotes what YAML 1.1 would misread ("yes", "22:00"); also quote what this
    # package's YAML 1.2 reader would not read back as text ("0o17", "1e5", "").
    # Clock times are quoted too: some YAML 1.1 readers take 06:00 for a number.
    ambiguous = not isinstance(resolve_plain_scalar(value), str) or _CLOCK.fullmatch(value)
    style = '"' if ambiguous else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


def _represent_list(dumper: yaml.SafeDumper, value: list[Any]) -> yaml.SequenceNode:
    plain = all(isinstance(v, str | int | float | bool) for v in value)
    short = (
        plain
        and sum(len(str(v)) + 2 for v in value) <= 80
        and all("\n" not in str(v) for v in value)
    )
    return dumper.represent_sequence("tag:yaml.org,2002:seq", value, flow_style=short)


_Dumper.add_representer(str, _represent_str)
_Dumper.add_representer(list, _represent_list)


def canonical_yaml(data: dict[str, Any]) -> str:
    """The YAML text of ``data``, keys in the given order, in the canonical style."""
    text: str = yaml.dump(
        data,
        Dumper=_Dumper,
        sort_keys=False,
        allow_unicode=True,
        default_flow_style=False,
        width=100,
    )
    return text
