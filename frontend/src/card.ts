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
      <opennvr-approvals .hass=${this.hass}></opennvr-approvals>
    </div>`;
  }
}

if (!customElements.get("opennvr-approvals-card")) {
  customElements.define("opennvr-approvals-card", OpennvrApprovalsCard);
  const w = window as unknown as { customCards?: unknown[] };
  w.customCards = w.customCards ?? [];
  w.customCards.push({
    type: "opennvr-approvals-card",
    name: "OpenNVR questions waiting",
    description: "Questions from OpenNVR workflows, answered here.",
  });
}
