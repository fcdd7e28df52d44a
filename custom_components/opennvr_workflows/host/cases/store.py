"""The home's own evaluation cases on disk: marked runs kept with their pictures.

A case is a file in the harness's own format (:mod:`...evaluation.home_case`) under
``<config>/opennvr_workflows_cases/look/``, its pictures under ``pictures/`` beside it, so
``python -m evals check --cases <config>/opennvr_workflows_cases`` reads the folder as it
reads the shipped one. Nothing leaves the house: the folder is the homeowner's, and it is
written only when they turned keeping on (the options' *Own cases and measuring* page),
within a retention period and a size cap. Each case can be deleted, pictures and all.

The folder may hold the cases of several sites; each entry reads, bounds and deletes only
its own (``origin.site``).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, ClassVar, Final

from homeassistant.core import HomeAssistant

from ...evaluation.case_loader import CaseError, load_case
from ...evaluation.case_model import StepCase
from ...evaluation.home_case import case_text

_LOGGER = logging.getLogger(__name__)

#: The folder, under Home Assistant's config folder, that holds the home's cases.
CASES_FOLDER: Final = "opennvr_workflows_cases"
#: The option that holds :class:`HomeCaseSettings`.
CONF_HOME_CASES: Final = "home_cases"
_MB: Final = 1024 * 1024
#: A picture file a case may own: ``<case id>_<n>.jpg`` in the pictures folder.
_PICTURE: Final = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}_\d+\.jpg$")


@dataclass(frozen=True, slots=True)
class HomeCaseSettings:
    """The options' *Own cases and measuring* page: whether marked runs are kept as cases
    (with their pictures), for how many days and within how many megabytes, and whether a
    workflow with an Investigate step needs its own measured bound before it goes On."""

    keep: bool = False
    days: int = 365
    max_mb: int = 200
    require_measured: bool = False

    #: Each number's bounds, for the form and for reading stored values.
    RANGES: ClassVar[Mapping[str, tuple[int, int]]] = {"days": (1, 3650), "max_mb": (1, 100_000)}

    @classmethod
    def from_options(cls, options: Mapping[str, Any]) -> HomeCaseSettings:
        """The stored page; a value missing or out of shape keeps its default."""
        raw = options.get(CONF_HOME_CASES)
        stored: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
        defaults = cls()
        numbers = {
            key: _bounded(stored.get(key), getattr(defaults, key), low, high)
            for key, (low, high) in cls.RANGES.items()
        }
        return cls(
            keep=stored.get("keep") is True,
            require_measured=stored.get("require_measured") is True,
            **numbers,
        )

    def as_option(self) -> dict[str, Any]:
        return {
            "keep": self.keep,
            "days": self.days,
            "max_mb": self.max_mb,
            "require_measured": self.require_measured,
        }


def _bounded(value: Any, default: int, low: int, high: int) -> int:
    try:
        number = int(value)
    except (TypeError, ValueError):
        return default
    return min(max(number, low), high)


@dataclass(frozen=True, slots=True)
class KeptCase:
    """A case of this site on disk: the loaded case, its file, its picture files and
    their size together with the case file's, and when it was marked."""

    case: StepCase
    file: Path
    pictures: tuple[Path, ...]
    size: int
    marked_at: datetime


class HomeCases:
    """One site's cases in the home's cases folder (see the module)."""

    def __init__(
        self, hass: HomeAssistant, site: str, settings: Callable[[], HomeCaseSettings]
    ) -> None:
        self._hass = hass
        self.site = site
        self.settings = settings
        self.root = Path(hass.config.path(CASES_FOLDER))

    # ── reading ────────────────────────────────────────────────────────

    async def async_cases(self) -> list[KeptCase]:
        """This site's cases, oldest first (a file that does not load is skipped and
        logged: someone edited it by hand)."""
        return await self._hass.async_add_executor_job(_read_cases, self.root, self.site)

    async def async_case(self, case_id: str) -> KeptCase | None:
        return next((k for k in await self.async_cases() if k.case.id == case_id), None)

    # ── writing ────────────────────────────────────────────────────────

    async def async_add(self, data: Mapping[str, Any], pictures: list[bytes]) -> KeptCase:
        """Write the case ``data`` (its pictures named as it names them, in order),
        replacing an earlier case of the same run, then apply the bounds."""
        kept = await self._hass.async_add_executor_job(_write_case, self.root, data, pictures)
        await self.async_prune()
        return kept

    async def async_delete(self, kept: KeptCase) -> None:
        """Delete a case's file and its pictures."""
        await self._hass.async_add_executor_job(_delete, kept)

    async def async_prune(self, now: datetime | None = None) -> list[str]:
        """Delete this site's cases older than the retention period, then the oldest
        while the cases pass the size cap; returns the ids deleted."""
        bounds = self.settings()
        cutoff = (now or datetime.now(UTC)) - timedelta(days=bounds.days)
        kept = await self.async_cases()
        total = sum(k.size for k in kept)
        gone: list[KeptCase] = []
        for case in kept:
            if case.marked_at >= cutoff and total <= bounds.max_mb * _MB:
                break
            gone.append(case)
            total -= case.size
        for case in gone:
            await self.async_delete(case)
        if gone:
            _LOGGER.info("Deleted %d kept case(s) past the bounds", len(gone))
        return [k.case.id for k in gone]


def case_folder(root: Path) -> Path:
    return root / "look"


def picture_folder(root: Path) -> Path:
    return root / "pictures"


def _read_cases(root: Path, site: str) -> list[KeptCase]:
    """(blocking)"""
    out: list[KeptCase] = []
    for path in sorted(case_folder(root).glob("*.yaml")):
        try:
            case = load_case(path, root)
        except CaseError as err:
            _LOGGER.warning("A kept case does not load, so it is not measured: %s", err)
            continue
        if not isinstance(case, StepCase) or case.origin is None or case.origin.site != site:
            continue
        pictures = tuple(p.path for pics in case.pictures.values() for p in pics)
        size = path.stat().st_size + sum(p.stat().st_size for p in pictures if p.is_file())
        out.append(KeptCase(case, path, pictures, size, _when(case.origin.marked_at, path)))
    # Marks within one second (the file's resolution) keep the order they were kept in.
    return sorted(out, key=lambda k: (k.marked_at, k.file.stat().st_mtime_ns))


def _when(text: str, path: Path) -> datetime:
    """When the case was marked; the file's time when its own says nothing readable."""
    try:
        at = datetime.fromisoformat(text)
    except ValueError:
        return datetime.fromtimestamp(path.stat().st_mtime, UTC)
    return at if at.tzinfo is not None else at.replace(tzinfo=UTC)


def _write_case(root: Path, data: Mapping[str, Any], pictures: list[bytes]) -> KeptCase:
    """(blocking) Pictures first, then the case file, each written whole (a crash leaves
    a picture without a case, never a case without its pictures)."""
    case_id = str(data["id"])
    path = case_folder(root) / f"{case_id}.yaml"
    if path.is_file():
        try:
            earlier = load_case(path, root)
        except CaseError:
            earlier = None
        if isinstance(earlier, StepCase):
            pics = [p.path for rows in earlier.pictures.values() for p in rows]
            _delete_pictures(root, case_id, pics)
    names = [
        Path(str(p["file"])).name
        for rows in ((data.get("inputs") or {}).get("pictures") or {}).values()
        for p in rows
    ]
    files = tuple(picture_folder(root) / n for n in names)
    for file, image in zip(files, pictures, strict=True):
        _atomic(file, image)
    _atomic(path, case_text(data).encode("utf-8"))
    try:
        case = load_case(path, root)
    except CaseError:
        path.unlink(missing_ok=True)  # never leave a case the harness cannot read
        _delete_pictures(root, case_id, list(files))
        raise
    assert isinstance(case, StepCase)
    assert case.origin is not None
    size = path.stat().st_size + sum(f.stat().st_size for f in files)
    return KeptCase(case, path, files, size, _when(case.origin.marked_at, path))


def _atomic(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".part")
    partial.write_bytes(data)
    partial.replace(path)


def _delete(kept: KeptCase) -> None:
    """(blocking)"""
    kept.file.unlink(missing_ok=True)
    _delete_pictures(kept.file.parent.parent, kept.case.id, list(kept.pictures))


def _delete_pictures(root: Path, case_id: str, paths: list[Path]) -> None:
    """Delete the pictures a case owns: only its own (``<case id>_<n>.jpg`` in the
    pictures folder), so a case edited by hand to name another file deletes nothing
    of it."""
    folder = picture_folder(root).resolve()
    for path in paths:
        name = path.name
        if (
            path.resolve().parent == folder
            and name.startswith(f"{case_id}_")
            and _PICTURE.match(name)
        ):
            path.unlink(missing_ok=True)
