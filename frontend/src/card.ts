// The "Questions waiting" dashboard card: the same questions as the panel's Questions tab.
import { LitElement, html } from "lit";
import { Hass } from "./api";
import "./approvals";
import { loadTexts, t } from "./texts";
import { shared } from "./styles";

class OpennvrApprovalsCard extends LitElement {
  static properties = { hass: { attribute: false }, _config: { state: true }, _ready: { state: true } };
  hass!: Hass;
  _config: { title?: string } = {};
  _ready = false;
  static styles = shared;

  setConfig(config: { title?: string }): void {
    this._config = config ?? {};
  }

  getCardSize(): number {
    return 3;
  }

  static getStubConfig(): Record<string, unknown> {
    return {};
  }

  updated(): void {
    if (this.hass && !this._ready) void loadTexts(this.hass).then(() => (this._ready = true));
  }

  render() {
    if (!this.hass) return html``;
    return html`<div class="card">
      <h2>${this._config.title ?? t("card_title")}</h2>
      <opennvr-approvals .hass=${this.hass} .source=${"card"}></opennvr-approvals>
    </div>`;
  }
}

/** Home Assistant's own connection, once the frontend has one (this module loads on every
 * page, before any card exists); null when none comes within a minute. */
async function frontendHass(): Promise<Hass | null> {
  for (let tries = 0; tries < 600; tries++) {
    const hass = (document.querySelector("home-assistant") as unknown as { hass?: Hass } | null)?.hass;
    if (hass) return hass;
    await new Promise((r) => setTimeout(r, 100));
  }
  return null;
}

if (!customElements.get("opennvr-approvals-card")) {
  customElements.define("opennvr-approvals-card", OpennvrApprovalsCard);
  const w = window as unknown as { customCards?: unknown[] };
  w.customCards = w.customCards ?? [];
  // The card picker reads the name and description when it opens: by then the texts are
  // loaded in the user's language (getters, so they are read then and not now).
  w.customCards.push({
    type: "opennvr-approvals-card",
    get name() {
      return t("card_name");
    },
    get description() {
      return t("card_description");
    },
  });
  // Without texts the picker shows the keys: nothing worse, so a failure is not reported.
  void frontendHass()
    .then((hass) => (hass ? loadTexts(hass) : undefined))
    .catch(() => undefined);
}
