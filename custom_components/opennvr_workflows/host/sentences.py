"""Installing the shipped Assist sentences into Home Assistant's configuration.

Home Assistant has no way for an integration to add sentences to its built-in
conversation agent: the agent reads ``<config>/custom_sentences/<language>/*.yaml``. The
integration ships its sentences (``sentences/en/opennvr_workflows.yaml``, which says what
each one does) and the options page "Voice sentences" copies them there under the same
name, then asks Assist to read its sentences again. The copy belongs to the integration:
installing again replaces it.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Final

from homeassistant.core import HomeAssistant

from ..const import DOMAIN

#: The languages sentences are shipped for.
LANGUAGES: Final = ("en",)
SHIPPED: Final = Path(__file__).parent.parent / "sentences"
FILE_NAME: Final = f"{DOMAIN}.yaml"
CONVERSATION: Final = "conversation"


def installed_path(config_dir: Path, language: str) -> Path:
    """Where the sentences of ``language`` go in a configuration folder."""
    return config_dir / "custom_sentences" / language / FILE_NAME


def install(config_dir: Path) -> list[Path]:
    """Copy every shipped language's sentences into ``config_dir`` (blocking); returns
    the files written. Raises ``OSError`` when one cannot be written."""
    written: list[Path] = []
    for language in LANGUAGES:
        target = installed_path(config_dir, language)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(SHIPPED / language / FILE_NAME, target)
        written.append(target)
    return written


def uninstall(config_dir: Path) -> None:
    """Delete the installed copies (blocking); the folders stay (they may hold others)."""
    for language in LANGUAGES:
        installed_path(config_dir, language).unlink(missing_ok=True)


async def async_uninstall(hass: HomeAssistant) -> None:
    """Take the sentences out (the last site is removed: their intents are gone) and
    have Assist read its sentences again."""
    await hass.async_add_executor_job(uninstall, Path(hass.config.config_dir))
    await _reload(hass)


async def async_install(hass: HomeAssistant) -> list[Path]:
    """Install the sentences and have Assist read them again (when it runs)."""
    written = await hass.async_add_executor_job(install, Path(hass.config.config_dir))
    await _reload(hass)
    return written


async def _reload(hass: HomeAssistant) -> None:
    """Ask Assist to read its sentences again (when it runs)."""
    if hass.services.has_service(CONVERSATION, "reload"):
        # Per language: a reload of every language would also read configuration.yaml.
        for language in LANGUAGES:
            await hass.services.async_call(
                CONVERSATION, "reload", {"language": language}, blocking=True
            )
