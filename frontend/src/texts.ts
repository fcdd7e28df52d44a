// The panel's texts, from the integration's translations in the user's language
// (strings.json, "exceptions" category, keys starting with "panel_").
import { DOMAIN, Hass } from "./api";

let loaded: Record<string, string> = {};
let language = "";

export async function loadTexts(hass: Hass): Promise<void> {
  if (language === hass.language) return;
  const res = await hass.callWS<{ resources: Record<string, string> }>({
    type: "frontend/get_translations",
    language: hass.language,
    category: "exceptions",
    integration: [DOMAIN],
  });
  loaded = res.resources;
  language = hass.language;
}

/** The text of ``key`` (without its "panel_" prefix); the key itself when missing. */
export function t(key: string): string {
  return loaded[`component.${DOMAIN}.exceptions.panel_${key}.message`] ?? key;
}

/** Whether the translations have a text for ``key`` (without its "panel_" prefix). */
export function has(key: string): boolean {
  return `component.${DOMAIN}.exceptions.panel_${key}.message` in loaded;
}
