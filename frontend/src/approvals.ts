// The questions waiting for a person: the question, its picture, the replies and who else
// was asked. Answering goes through approvals/answer, which checks, like a tap on a phone,
// that this user is one of the people asked. In the panel each question has its own URL
// (``only``: that question alone) and links to the run that asks it.
import { LitElement, html, css, nothing } from "lit";
import { api, Approval, errorText, Hass } from "./api";
import { loadTexts, t } from "./texts";
import { shared } from "./styles";
import { when } from "./words";

export class OpennvrApprovals extends LitElement {
  static properties = {
    hass: { attribute: false },
    _rows: { state: true },
    _error: { state: true },
    _done: { state: true },
    only: { attribute: false },
    runHref: { attribute: false },
    questionHref: { attribute: false },
    source: { attribute: false },
  };
  hass!: Hass;
  /** Show only this question (its page in the panel). */
  only: string | null = null;
  /** The panel's link to a run and to a question (none on a dashboard card). */
  runHref: ((run: string) => string) | null = null;
  questionHref: ((id: string) => string) | null = null;
  /** Where this list is shown, for the logbook's line on an answer. */
  source: "panel" | "card" = "panel";
  _rows: Approval[] | null = null;
  _error = "";
  _done = "";
  private _unsub?: Promise<() => void>;

  static styles = [
    shared,
    css`
      .replies button {
        flex: 1 1 auto;
      }
      /* A question's first lines say what each reply does; keep them on lines of their own. */
      .approval h3 {
        white-space: pre-line;
      }
    `,
  ];

  connectedCallback(): void {
    super.connectedCallback();
    void this._load();
    // "approvals": the host's questions changed (one is ready to answer, or closed); the
    // engine's approval_* events can come before the question is delivered or closed.
    this._unsub = api.subscribe(this.hass, (e) => {
      if (e.kind === "approvals" || e.kind.startsWith("approval_")) void this._load();
    });
  }

  disconnectedCallback(): void {
    super.disconnectedCallback();
    void this._unsub?.then((u) => u());
  }

  private async _load(): Promise<void> {
    try {
      await loadTexts(this.hass);
      this._rows = (await api.approvals(this.hass)).approvals;
    } catch (err) {
      this._error = errorText(err);
    }
  }

  private async _answer(row: Approval, reply: string): Promise<void> {
    this._error = "";
    try {
      await api.answer(this.hass, row.approval_id, reply, this.source);
      this._done = `${t("answered")}: ${reply}`;
      await this._load();
    } catch (err) {
      this._error = errorText(err);
    }
  }

  /** A click on a panel link stays in the page (the panel shows the place). */
  private _follow(e: MouseEvent): void {
    if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    const href = (e.currentTarget as HTMLAnchorElement).getAttribute("href") ?? "";
    e.preventDefault();
    const path = href.split("/").slice(2).join("/");
    this.dispatchEvent(new CustomEvent("panel-navigate", { detail: { path: `/${path}` }, bubbles: true, composed: true }));
  }

  /** A closed question's run (an id starts with its run's, as the engine makes it): what
   * the answer, or the timeout, did. */
  private _runOf(approvalId: string) {
    const run = approvalId.split(":")[0];
    if (!run || !this.runHref) return "";
    return html`<a class="open-run" href=${this.runHref(run)} @click=${this._follow}>${t("open_run")}</a>`;
  }

  render() {
    if (this._rows === null) return html`<div class="muted">…</div>`;
    const rows = this.only ? this._rows.filter((r) => r.approval_id === this.only) : this._rows;
    const none = this.only ? t("question_closed") : t("questions_none");
    return html`
      ${this._error ? html`<div class="error" role="alert">${this._error}</div>` : ""}
      ${this._done ? html`<div class="muted" role="status">${this._done}</div>` : ""}
      ${rows.length === 0 ? html`<div class="muted none">${none}</div>` : ""}
      ${rows.length === 0 && this.only && this.runHref ? this._runOf(this.only) : ""}
      ${rows.map(
        (row) => html`
          <div class="card approval" data-approval=${row.approval_id}>
            <div class="row muted">
              <span class="grow">${row.workflow_name}</span>
              ${this.questionHref && !this.only
                ? html`<a class="open-question" href=${this.questionHref(row.approval_id)} @click=${this._follow}>${t("open_question")}</a>`
                : nothing}
              ${this.runHref && row.run_id
                ? html`<a class="open-run" href=${this.runHref(row.run_id)} @click=${this._follow}>${t("open_run")}</a>`
                : nothing}
            </div>
            <h3>${row.message}</h3>
            ${row.picture ? html`<img src=${row.picture} alt="" loading="lazy" />` : ""}
            <div class="row replies">
              ${row.replies.map(
                (reply) =>
                  html`<button class="primary" ?disabled=${!row.may_answer} @click=${() => this._answer(row, reply)}>
                    ${reply}
                  </button>`,
              )}
            </div>
            ${row.may_answer ? "" : html`<div class="muted">${t("may_not_answer")}</div>`}
            <div class="muted">${row.asked.length ? `${t("asked")}: ${row.asked.join(", ")} · ` : ""}${t("until")} ${when(this.hass, row.expires_at)}</div>
          </div>
        `,
      )}
    `;
  }
}

if (!customElements.get("opennvr-approvals")) customElements.define("opennvr-approvals", OpennvrApprovals);
