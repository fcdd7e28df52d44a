// The Workflows panel: the list with state toggles, a workflow's runs as a timeline, a run's
// steps as a vertical flow, versions with a diff and rollback, "Try on recent events", the
// editor, the templates gallery and the questions waiting. Live through
// workflows/subscribe; every change goes through a command the server checks.
import { LitElement, html, css, nothing } from "lit";
import {
  api,
  errorText,
  Hass,
  RunPage,
  RunRow,
  StepView,
  Template,
  Tried,
  Version,
  WorkflowRow,
} from "./api";
import "./approvals";
import { diffLines } from "./diff";
import "./editor";
import { loadTexts, t } from "./texts";
import { shared, when } from "./styles";

type View =
  | { name: "list" }
  | { name: "workflow"; id: string; tab: "runs" | "versions" | "try" }
  | { name: "run"; id: string; run: string }
  | { name: "edit"; id: string | null; text: string; file: string }
  | { name: "templates" }
  | { name: "questions" };

const STATES = ["off", "test", "on"] as const;
const PAGE = 25;

class OpennvrWorkflowsPanel extends LitElement {
  static properties = {
    hass: { attribute: false },
    narrow: { type: Boolean },
    _view: { state: true },
    _rows: { state: true },
    _admin: { state: true },
    _mayMark: { state: true },
    _error: { state: true },
    _runs: { state: true },
    _more: { state: true },
    _decisions: { state: true },
    _decision: { state: true },
    _mode: { state: true },
    _run: { state: true },
    _versions: { state: true },
    _compare: { state: true },
    _tried: { state: true },
    _trying: { state: true },
    _templates: { state: true },
    _ready: { state: true },
  };
  hass!: Hass;
  narrow = false;
  _view: View = { name: "list" };
  _rows: WorkflowRow[] = [];
  _admin = false;
  /** Whether this person may mark runs right or wrong (admins and approvers). */
  _mayMark = false;
  _error = "";
  _runs: RunRow[] = [];
  _more = false;
  _decisions: string[] = [];
  _decision = "";
  _mode = "all";
  _run: RunPage | null = null;
  _versions: Version[] = [];
  _compare: string | null = null;
  _tried: Tried | null = null;
  _trying = false;
  _templates: Template[] = [];
  _ready = false;
  private _unsub?: Promise<() => void>;

  static styles = [
    shared,
    css`
      :host {
        background: var(--primary-background-color);
        min-height: 100vh;
      }
      header {
        display: flex;
        align-items: center;
        gap: 8px;
        padding: 0 16px;
        height: var(--header-height, 56px);
        background: var(--app-header-background-color, var(--primary-color));
        color: var(--app-header-text-color, var(--text-primary-color, #fff));
        font-size: 20px;
      }
      header button {
        background: transparent;
        color: inherit;
        border-color: transparent;
      }
      main {
        max-width: 960px;
        margin: 0 auto;
        padding: 16px;
      }
      .tabs {
        margin-bottom: 12px;
      }
      .state button {
        min-width: 56px;
      }
      .flow {
        border-left: 3px solid var(--divider-color);
        margin-left: 8px;
        padding-left: 16px;
      }
      .step {
        position: relative;
      }
      .step::before {
        content: "";
        position: absolute;
        left: -24px;
        top: 16px;
        width: 12px;
        height: 12px;
        border-radius: 50%;
        background: var(--primary-color);
      }
      .step.would_have::before {
        background: var(--warning-color, #ffa600);
      }
      .step.failed::before,
      .step.unknown::before {
        background: var(--error-color, #db4437);
      }
      .lane {
        font-size: 0.8em;
        color: var(--secondary-text-color);
      }
      .diff {
        font-family: var(--code-font-family, monospace);
        font-size: 0.85em;
        white-space: pre-wrap;
      }
      .diff .add {
        background: color-mix(in srgb, var(--success-color, #43a047) 20%, transparent);
      }
      .diff .del {
        background: color-mix(in srgb, var(--error-color, #db4437) 20%, transparent);
      }
      .timeline .card {
        cursor: pointer;
      }
      @media (max-width: 600px) {
        main {
          padding: 8px;
        }
        .hide-narrow {
          display: none;
        }
      }
    `,
  ];

  connectedCallback(): void {
    super.connectedCallback();
    void this._start();
  }

  disconnectedCallback(): void {
    super.disconnectedCallback();
    void this._unsub?.then((u) => u());
    this._unsub = undefined;
  }

  private async _start(): Promise<void> {
    if (!this.hass) {
      await new Promise((r) => setTimeout(r, 50));
      return this._start();
    }
    await loadTexts(this.hass);
    this._ready = true;
    await this._loadList();
    this._unsub ??= api.subscribe(this.hass, (e) => void this._onUpdate(e));
  }

  private async _onUpdate(e: { kind: string; workflow_id?: string; run_id?: string }): Promise<void> {
    const v = this._view;
    if (v.name === "list" || e.kind === "workflows" || e.kind === "workflow_state") await this._loadList();
    if (v.name === "workflow" && v.tab === "runs" && e.workflow_id === v.id && e.kind.startsWith("run_")) await this._loadRuns(false);
    if (v.name === "run" && e.run_id === v.run) await this._loadRun(v.run);
  }

  private async _guard(work: () => Promise<unknown>): Promise<void> {
    this._error = "";
    try {
      await work();
    } catch (err) {
      this._error = errorText(err);
    }
  }

  private async _loadList(): Promise<void> {
    await this._guard(async () => {
      const res = await api.list(this.hass);
      this._rows = res.workflows;
      this._admin = res.is_admin;
      this._mayMark = res.may_mark;
    });
  }

  private async _loadRuns(append: boolean): Promise<void> {
    const v = this._view;
    if (v.name !== "workflow") return;
    await this._guard(async () => {
      const res = await api.runs(this.hass, v.id, {
        offset: append ? this._runs.length : 0,
        limit: append ? PAGE : Math.max(PAGE, this._runs.length),
        decision: this._decision || undefined,
        mode: this._mode,
      });
      this._runs = append ? [...this._runs, ...res.runs] : res.runs;
      this._more = res.more;
      this._decisions = res.decisions;
    });
  }

  private async _loadRun(run: string): Promise<void> {
    await this._guard(async () => (this._run = await api.run(this.hass, run)));
  }

  private async _go(view: View): Promise<void> {
    this._view = view;
    this._error = "";
    window.scrollTo?.(0, 0);
    if (view.name === "list") await this._loadList();
    if (view.name === "workflow") {
      if (view.tab === "runs") await this._loadRuns(false);
      if (view.tab === "versions") {
        this._compare = null;
        await this._guard(async () => (this._versions = (await api.versions(this.hass, view.id)).versions));
      }
      if (view.tab === "try") this._tried = null;
    }
    if (view.name === "run") {
      this._run = null;
      await this._loadRun(view.run);
    }
    if (view.name === "templates") await this._guard(async () => (this._templates = (await api.templates(this.hass)).templates));
  }

  private _row(id: string): WorkflowRow | undefined {
    return this._rows.find((r) => r.workflow_id === id);
  }

  // ── views ──────────────────────────────────────────────────────────

  render() {
    if (!this._ready) return html``;
    const v = this._view;
    return html`
      <header>
        ${this.narrow
          ? html`<button class="menu" aria-label=${t("menu")} @click=${this._toggleMenu}>☰</button>`
          : nothing}
        ${v.name !== "list"
          ? html`<button class="back" aria-label=${t("back")} @click=${() => this._go(this._parent(v))}>←</button>`
          : nothing}
        <span class="grow">${t("title")}</span>
      </header>
      <main>
        ${this._error ? html`<div class="card error" role="alert">${this._error}</div>` : nothing}
        ${v.name === "list" || v.name === "questions" ? this._tabs(v.name) : nothing}
        ${v.name === "list" ? this._list() : nothing} ${v.name === "questions" ? this._questions() : nothing}
        ${v.name === "workflow" ? this._workflow(v.id, v.tab) : nothing} ${v.name === "run" ? this._runView() : nothing}
        ${v.name === "edit" ? this._editor(v) : nothing} ${v.name === "templates" ? this._gallery() : nothing}
      </main>
    `;
  }

  /** Home Assistant's sidebar, which a phone-width screen hides behind this button. */
  private _toggleMenu(): void {
    this.dispatchEvent(new Event("hass-toggle-menu", { bubbles: true, composed: true }));
  }

  private _parent(v: View): View {
    if (v.name === "run") return { name: "workflow", id: v.id, tab: "runs" };
    if (v.name === "edit" && v.id) return { name: "workflow", id: v.id, tab: "runs" };
    return { name: "list" };
  }

  private _tabs(current: string) {
    return html`<div class="row tabs">
      <button class=${current === "list" ? "on tab-workflows" : "tab-workflows"} @click=${() => this._go({ name: "list" })}>
        ${t("tab_workflows")}
      </button>
      <button class=${current === "questions" ? "on tab-questions" : "tab-questions"} @click=${() => this._go({ name: "questions" })}>
        ${t("tab_questions")}
      </button>
      <span class="grow"></span>
      ${this._admin
        ? html`<button class="templates" @click=${() => this._go({ name: "templates" })}>${t("templates")}</button>
            <button class="primary new" @click=${() => this._go({ name: "edit", id: null, text: NEW_WORKFLOW, file: "" })}>
              ${t("new")}
            </button>`
        : nothing}
    </div>`;
  }

  private _list() {
    return html`${this._admin ? nothing : html`<p class="muted">${t("read_only")}</p>`}
      ${this._rows.map((r) => {
        const needs = r.state === "needs_attention" || r.state === "invalid";
        return html`<div class="card workflow" data-workflow=${r.workflow_id}>
          <div class="row">
            <div class="grow">
              <a href="#" class="name" @click=${(e: Event) => (e.preventDefault(), this._go({ name: "workflow", id: r.workflow_id, tab: "runs" }))}
                ><h3>${r.name}</h3></a
              >
              ${r.description ? html`<div class="muted hide-narrow">${r.description}</div>` : nothing}
            </div>
            ${r.state === "invalid" ? nothing : this._stateToggle(r)}
          </div>
          ${needs
            ? html`<div class="attention" role="alert">
                ${t(r.state === "invalid" ? "state_invalid" : "state_needs_attention")}:
                ${r.reason ?? r.problems.map((p) => `${t("line")} ${p.line}: ${p.message}`).join("; ")}
              </div>`
            : nothing}
          <div class="row muted">
            <span>${t("last_run")}: ${r.last_run ? html`${r.last_run.decision ?? r.last_run.status}${r.last_run.test ? html` <span class="chip test">${t("state_test")}</span>` : nothing} · ${when(r.last_run.started_at)}` : t("no_runs")}</span>
            ${r.accuracy ? html`<span>· ${t("accuracy")}: ${r.accuracy.right}/${r.accuracy.total}</span>` : nothing}
          </div>
        </div>`;
      })}`;
  }

  private _stateToggle(r: WorkflowRow) {
    return html`<div class="row state" role="group" aria-label=${r.name}>
      ${STATES.map(
        (s) => html`<button
          class=${r.state === s ? "on" : ""}
          data-state=${s}
          aria-pressed=${r.state === s ? "true" : "false"}
          ?disabled=${!this._admin}
          @click=${() => this._guard(async () => { await api.setState(this.hass, r.workflow_id, s); await this._loadList(); })}
        >
          ${t(`state_${s}`)}
        </button>`,
      )}
    </div>`;
  }

  private _workflow(id: string, tab: "runs" | "versions" | "try") {
    const r = this._row(id);
    const go = (tab: "runs" | "versions" | "try") => this._go({ name: "workflow", id, tab });
    return html`<div class="row">
        <h2 class="grow">${r?.name ?? id}</h2>
        ${r && r.state !== "invalid" ? this._stateToggle(r) : nothing}
      </div>
      ${r?.reason ? html`<div class="attention">${t("state_needs_attention")}: ${r.reason}</div>` : nothing}
      <div class="row tabs">
        <button class=${tab === "runs" ? "on" : ""} @click=${() => go("runs")}>${t("runs")}</button>
        <button class=${tab === "versions" ? "on tab-versions" : "tab-versions"} @click=${() => go("versions")}>${t("versions")}</button>
        ${this._admin ? html`<button class=${tab === "try" ? "on tab-try" : "tab-try"} @click=${() => go("try")}>${t("try")}</button>` : nothing}
        <span class="grow"></span>
        ${this._admin
          ? html`<button class="edit" @click=${() => this._edit(id)}>${t("edit")}</button>`
          : nothing}
      </div>
      ${tab === "runs" ? this._timeline(id) : nothing} ${tab === "versions" ? this._versionsView(id) : nothing}
      ${tab === "try" ? this._tryView(id) : nothing}`;
  }

  private async _edit(id: string): Promise<void> {
    await this._guard(async () => {
      const src = await api.source(this.hass, id);
      await this._go({ name: "edit", id, text: src.yaml, file: src.file });
    });
  }

  private _timeline(id: string) {
    return html`<div class="row">
        <select
          class="decision"
          aria-label=${t("any_decision")}
          @change=${(e: Event) => ((this._decision = (e.target as HTMLSelectElement).value), this._loadRuns(false))}
        >
          <option value="">${t("any_decision")}</option>
          ${this._decisions.map((d) => html`<option value=${d} ?selected=${d === this._decision}>${d}</option>`)}
        </select>
        <select class="mode" @change=${(e: Event) => ((this._mode = (e.target as HTMLSelectElement).value), this._loadRuns(false))}>
          <option value="all" ?selected=${this._mode === "all"}>${t("filter_all")}</option>
          <option value="test" ?selected=${this._mode === "test"}>${t("filter_test")}</option>
          <option value="on" ?selected=${this._mode === "on"}>${t("filter_on")}</option>
        </select>
      </div>
      <div class="timeline flow">
        ${this._runs.length === 0 ? html`<p class="muted">${t("no_runs")}</p>` : nothing}
        ${this._runs.map(
          (run) => html`<div class="card step run ${run.status}" data-run=${run.run_id} @click=${() => this._go({ name: "run", id, run: run.run_id })}>
            <div class="row">
              <b class="grow">${run.decision ?? run.status}</b>
              ${run.test ? html`<span class="chip test">${t("state_test")}</span>` : nothing}
              <span class="chip">${run.status}</span>
            </div>
            <div class="muted">${when(run.started_at)} · ${run.steps} ${t("steps")}</div>
            ${run.error ? html`<div class="error">${run.error}</div>` : nothing}
          </div>`,
        )}
      </div>
      ${this._more ? html`<button class="more" @click=${() => this._loadRuns(true)}>${t("more")}</button>` : nothing}`;
  }

  private _runView() {
    const run = this._run;
    if (!run) return html`<p class="muted">…</p>`;
    // The stored mark (the page reloads after marking, and when anyone marks the run).
    const marked = run.mark?.right;
    return html`<div class="card">
        <div class="row">
          <h2 class="grow">${run.outcome ?? run.status}</h2>
          ${run.test ? html`<span class="chip test">${t("state_test")}</span>` : nothing}
        </div>
        <div class="muted">${when(run.started_at)} · ${String(run.trigger.kind ?? "")} ${String(run.trigger.camera_role ?? "")}</div>
        ${run.error ? html`<div class="error">${run.error}</div>` : nothing}
        <div class="row marks">
          ${this._mayMark
            ? html`<button class=${marked === true ? "on mark-right" : "mark-right"} aria-pressed=${marked === true ? "true" : "false"} @click=${() => this._mark(run.run_id, true)}>${t("mark_right")}</button>
                <button class=${marked === false ? "on mark-wrong" : "mark-wrong"} aria-pressed=${marked === false ? "true" : "false"} @click=${() => this._mark(run.run_id, false)}>${t("mark_wrong")}</button>`
            : nothing}
          ${run.mark
            ? html`<span class="muted marked">${t(run.mark.right ? "marked_right" : "marked_wrong")}${run.mark.by ? ` · ${run.mark.by}` : ""}</span>`
            : nothing}
        </div>
      </div>
      ${run.evidence.map((e) => html`<div class="card"><img class="evidence" src=${e.url} alt=${e.camera} /></div>`)}
      <h3>${t("steps")}</h3>
      <div class="flow steps">${run.steps.map((s) => this._step(s, run))}</div>
      ${run.approvals.length
        ? html`<h3>${t("tab_questions")}</h3>
            ${run.approvals.map((a) => html`<div class="card">${a.message} → <b>${a.reply ?? a.status}</b> ${a.answered_by ?? ""}</div>`)}`
        : nothing}`;
  }

  private _step(s: StepView, run: RunPage) {
    const calls = run.tool_calls.filter((c) => c.step_path === s.path);
    const lane = s.path.split(".").slice(1).filter((p) => !/^\d+$/.test(p));
    return html`<div class="card step ${s.status}" data-path=${s.path}>
      ${lane.length ? html`<div class="lane">${lane.join(" › ")}</div>` : nothing}
      <div class="row">
        <b class="grow">${s.kind}</b>
        ${s.status === "would_have" ? html`<span class="chip test">${t("would_have")}</span>` : html`<span class="chip">${s.status}</span>`}
      </div>
      ${s.outcome ? html`<div>→ <b>${s.outcome}</b></div>` : nothing} ${s.reason ? html`<div>${s.reason}</div>` : nothing}
      <div class="row muted">
        ${s.confidence != null ? html`<span>${t("confidence")}: ${Math.round(s.confidence * 100)}% ${s.confidence_source ?? ""}</span>` : nothing}
        ${s.unsure_reason ? html`<span>${t("unsure_reason")}: ${s.unsure_reason}</span>` : nothing}
        ${s.model ? html`<span>${t("model")}: ${s.model}</span>` : nothing} ${s.ms != null ? html`<span>${s.ms} ms</span>` : nothing}
      </div>
      ${s.request ? html`<pre>${JSON.stringify(s.request, null, 2)}</pre>` : nothing}
      ${calls.length
        ? html`<details>
            <summary>${t("tool_calls")} (${calls.length})</summary>
            ${calls.map(
              (c) => html`<div>
                <b>${c.name}</b> <span class="muted">${c.kind} · ${c.status} · ${c.ms} ms${c.tokens_in != null ? ` · ${t("tokens")} ${c.tokens_in}/${c.tokens_out ?? 0}` : ""}</span>
                ${c.args != null ? html`<pre>${JSON.stringify(c.args, null, 2)}</pre>` : nothing}
                ${c.result != null ? html`<pre>${typeof c.result === "string" ? c.result : JSON.stringify(c.result, null, 2)}</pre>` : nothing}
              </div>`,
            )}
          </details>`
        : nothing}
    </div>`;
  }

  private async _mark(run: string, right: boolean): Promise<void> {
    await this._guard(async () => {
      await api.mark(this.hass, run, right);
      this._run = await api.run(this.hass, run);
    });
  }

  private _versionsView(id: string) {
    const current = this._versions.find((v) => v.current);
    const compared = this._versions.find((v) => v.version === this._compare);
    return html`${this._versions.map(
        (v) => html`<div class="card version" data-version=${v.version}>
          <div class="row">
            <span class="grow"><b>${v.version.slice(0, 10)}</b> · ${when(v.created_at)} · ${v.runs} ${t("runs")}</span>
            ${v.current
              ? html`<span class="chip">${t("current")}</span>`
              : html`<button class="compare" @click=${() => (this._compare = v.version)}>${t("diff")}</button>
                  ${this._admin
                    ? html`<button class="rollback" @click=${() => this._rollback(id, v.version)}>${t("rollback")}</button>`
                    : nothing}`}
          </div>
        </div>`,
      )}
      ${compared && current
        ? html`<div class="card diff">
            ${diffLines(compared.yaml ?? "", current.yaml ?? "").map(
              (l) => html`<div class=${l.op === "+" ? "add" : l.op === "-" ? "del" : ""}>${l.op} ${l.text}</div>`,
            )}
          </div>`
        : nothing}`;
  }

  private async _rollback(id: string, version: string): Promise<void> {
    await this._guard(async () => {
      await api.rollback(this.hass, id, version);
      await this._go({ name: "workflow", id, tab: "versions" });
    });
  }

  private _tryView(id: string) {
    return html`<div class="row">
        <button class="primary try" ?disabled=${this._trying} @click=${() => this._try(id)}>${t("try")}</button>
      </div>
      ${this._tried
        ? html`<h3>${t("tried")}</h3>
            ${this._tried.events.length === 0 ? html`<p class="muted">${t("no_events")}</p>` : nothing}
            ${this._tried.events.map(
              (e) => html`<div class="card tried">
                <div class="row">
                  <b class="grow">${e.decision ?? "?"}</b>
                  ${e.confidence != null ? html`<span class="muted">${Math.round(e.confidence * 100)}%</span>` : nothing}
                </div>
                <div>${e.reason ?? ""}</div>
                <div class="muted">${e.event.label ?? ""} · ${e.event.camera ?? ""} · ${e.event.time}</div>
                <div class="flow">${e.trace.map((s) => html`<div class="step ${s.status}">${s.kind} → ${s.outcome ?? s.status}</div>`)}</div>
              </div>`,
            )}`
        : nothing}`;
  }

  private async _try(id: string): Promise<void> {
    this._trying = true;
    await this._guard(async () => (this._tried = await api.tryIt(this.hass, id, 10)));
    this._trying = false;
  }

  private _editor(v: { id: string | null; text: string; file: string }) {
    return html`<opennvr-workflow-editor
      .hass=${this.hass}
      .text=${v.text}
      .fileName=${v.file}
      ?existing=${v.id !== null}
      @saved=${(e: CustomEvent<{ workflow_id: string }>) => this._go({ name: "workflow", id: e.detail.workflow_id, tab: "runs" })}
    ></opennvr-workflow-editor>`;
  }

  private _gallery() {
    return html`${this._templates.map(
      (tpl) => html`<div class="card template" data-template=${tpl.template}>
        <h3>${tpl.name}</h3>
        ${tpl.description ? html`<div class="muted">${tpl.description}</div>` : nothing}
        <div>${t("needs")}: ${tpl.needs.join(", ") || "–"}</div>
        ${tpl.ready
          ? html`<div class="muted">${t("ready")}</div>`
          : html`<div class="warning">${t("missing")}: ${tpl.missing.map((p) => p.message).join("; ")}</div>`}
        <div class="row">
          <button class="primary" @click=${() => this._go({ name: "edit", id: null, text: tpl.yaml, file: tpl.template })}>
            ${t("use_template")}
          </button>
        </div>
      </div>`,
    )}`;
  }

  private _questions() {
    return html`<opennvr-approvals .hass=${this.hass}></opennvr-approvals>`;
  }
}

const NEW_WORKFLOW = `contract: workflow.v1
name: My workflow
state: test
when:
  button: {}
then:
  - log: "Started by {user}"
`;

if (!customElements.get("opennvr-workflows-panel")) customElements.define("opennvr-workflows-panel", OpennvrWorkflowsPanel);
