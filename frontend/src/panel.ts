// The Workflows panel: the list with state toggles (and, for a workflow that does not run,
// what to do first), a workflow's runs as a timeline, a run's steps in words as a vertical
// flow, versions with a diff and rollback, "Try on recent events", the editor, the
// templates gallery and the questions waiting. Each view has its URL under the panel's
// (Home Assistant's route), so Back, bookmarks and shared links work. Live through
// workflows/subscribe; every change goes through a command the server checks.
import { LitElement, html, css, nothing } from "lit";
import {
  api,
  errorText,
  Hass,
  HeldBack,
  RunPage,
  RunRow,
  StepView,
  Template,
  Todo,
  Tried,
  Version,
  WorkflowRow,
} from "./api";
import "./approvals";
import { diffLines } from "./diff";
import "./editor";
import { has, loadTexts, t } from "./texts";
import { shared } from "./styles";
import {
  duration,
  fieldsOf,
  humanize,
  outcomeText,
  percent,
  roleName,
  statusText,
  stepTitle,
  startedText,
  unsureText,
  when,
} from "./words";

type Tab = "runs" | "versions" | "try";
type View =
  | { name: "list" }
  | { name: "workflow"; id: string; tab: Tab }
  | { name: "run"; run: string }
  | { name: "edit"; id: string | null; text: string; file: string; back: string; taken: string[] }
  | { name: "templates" }
  | { name: "questions" }
  | { name: "question"; id: string }
  | { name: "missing" };

/** Where a view lives under the panel's URL (Home Assistant's route path). */
type Place =
  | { name: "list" | "templates" | "questions" | "new" | "missing" }
  | { name: "workflow"; id: string; tab: Tab | "edit" }
  | { name: "run"; run: string }
  | { name: "question"; id: string }
  | { name: "template"; template: string; as: "new" | "replace" | "copy" };

/** A path segment: ids as they are where a URL allows (a question's id has a ":"). */
const enc = (part: string) => encodeURIComponent(part).replace(/%3A/gi, ":");

/** The route path of a place ("/workflow/parcel_at_door/versions"). */
export function pathOf(p: Place): string {
  switch (p.name) {
    case "list":
    case "missing":
      return "";
    case "templates":
    case "questions":
    case "new":
      return `/${p.name}`;
    case "workflow":
      return `/workflow/${enc(p.id)}${p.tab === "runs" ? "" : `/${p.tab}`}`;
    case "run":
      return `/run/${enc(p.run)}`;
    case "question":
      return `/question/${enc(p.id)}`;
    case "template":
      return `/templates/${enc(p.template)}${p.as === "new" ? "" : `/${p.as}`}`;
  }
}

/** The place a route path names. */
export function placeOf(path: string): Place {
  const parts = path
    .split("?")[0]
    .split("/")
    .filter(Boolean)
    .map((p) => {
      try {
        return decodeURIComponent(p);
      } catch {
        return p;
      }
    });
  const [first, second, third] = parts;
  if (!first) return { name: "list" };
  if ((first === "templates" || first === "questions" || first === "new") && !second) return { name: first };
  if (first === "workflow" && second) {
    const tab = third ?? "runs";
    if (tab === "runs" || tab === "versions" || tab === "try" || tab === "edit") return { name: "workflow", id: second, tab };
  }
  if (first === "run" && second && !third) return { name: "run", run: second };
  if (first === "question" && second && !third) return { name: "question", id: second };
  if (first === "templates" && second && (third === undefined || third === "replace" || third === "copy"))
    return { name: "template", template: second, as: third ?? "new" };
  return { name: "missing" };
}

const STATES = ["off", "test", "on"] as const;
const PAGE = 25;

class OpennvrWorkflowsPanel extends LitElement {
  static properties = {
    hass: { attribute: false },
    narrow: { type: Boolean },
    route: { attribute: false },
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
    _confirm: { state: true },
    _tried: { state: true },
    _trying: { state: true },
    _templates: { state: true },
    _ready: { state: true },
  };
  hass!: Hass;
  narrow = false;
  /** Home Assistant's route of the panel: its URL prefix and the path below it. */
  route?: { prefix: string; path: string };
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
  /** The version whose rollback waits for a yes (the versions view asks first). */
  _confirm: string | null = null;
  _tried: Tried | null = null;
  _trying = false;
  _templates: Template[] = [];
  _ready = false;
  private _unsub?: Promise<() => void>;
  /** The route path the view shows (set as soon as it is asked for, before it loads). */
  private _shown: string | null = null;

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
      .confirm-rollback {
        margin-top: 8px;
        padding-top: 8px;
        border-top: 1px solid var(--divider-color);
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
      a.card {
        display: block;
        color: inherit;
        text-decoration: none;
      }
      .todos {
        margin: 8px 0;
      }
      .todo summary {
        cursor: pointer;
        padding: 2px 0;
      }
      .todo summary::marker {
        color: var(--warning-color, #ffa600);
      }
      .todo ul {
        margin: 4px 0;
      }
      .fix {
        color: var(--primary-color);
      }
      .step .reason {
        margin: 4px 0;
      }
      .step figure {
        margin: 8px 0;
      }
      .step img.evidence {
        max-height: 360px;
      }
      dl.sent {
        margin: 4px 0;
      }
      dl.sent dd {
        margin-left: 12px;
        white-space: pre-wrap;
        word-break: break-word;
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
    await this._follow();
  }

  protected updated(changed: Map<string, unknown>): void {
    if (changed.has("route") && this._ready) void this._follow();
  }

  /** The path below the panel's prefix the browser is at (Home Assistant's route, or the
   * location itself before the route is handed over). */
  private _path(): string {
    if (this.route) return this.route.path;
    const prefix = `/${location.pathname.split("/")[1] ?? ""}`;
    return location.pathname.slice(prefix.length);
  }

  private _prefix(): string {
    return this.route?.prefix ?? `/${location.pathname.split("/")[1] ?? ""}`;
  }

  /** Show the view of the URL the browser is at (a link, Back or Forward). */
  private async _follow(): Promise<void> {
    const path = this._path();
    if (path === this._shown) return;
    this._shown = path;
    await this._open(placeOf(path));
  }

  /** Go to ``place``: a new history entry (``replace``: instead of the current one), the
   * way Home Assistant's own pages navigate, then its view. */
  private async _nav(place: Place, replace = false): Promise<void> {
    const path = pathOf(place);
    const url = `${this._prefix()}${path}`;
    if (`${location.pathname}` !== url) {
      if (replace) history.replaceState(history.state, "", url);
      else history.pushState(null, "", url);
      window.dispatchEvent(new CustomEvent("location-changed", { detail: { replace } }));
    }
    this._shown = path;
    await this._open(place);
  }

  /** The view of a place, with what it needs loaded. */
  private async _open(place: Place): Promise<void> {
    switch (place.name) {
      case "list":
      case "templates":
      case "questions":
      case "missing":
        return this._go({ name: place.name });
      case "new":
        return this._go({ name: "edit", id: null, text: NEW_WORKFLOW, file: "", back: "", taken: this._taken() });
      case "run":
        return this._go({ name: "run", run: place.run });
      case "question":
        return this._go({ name: "question", id: place.id });
      case "workflow":
        if (place.tab !== "edit") return this._go({ name: "workflow", id: place.id, tab: place.tab });
        return this._guard(async () => {
          const src = await api.source(this.hass, place.id);
          await this._go({ name: "edit", id: src.workflow_id ?? place.id, text: src.yaml, file: src.file, back: pathOf({ name: "workflow", id: place.id, tab: "runs" }), taken: [] });
        });
      case "template":
        return this._guard(async () => {
          if (!this._templates.length) this._templates = (await api.templates(this.hass)).templates;
          const tpl = this._templates.find((x) => x.template === place.template);
          if (!tpl) return this._go({ name: "missing" });
          const back = pathOf({ name: "templates" });
          if (place.as === "replace")
            return this._go({ name: "edit", id: tpl.template, text: tpl.yaml, file: tpl.template, back, taken: [] });
          if (place.as === "copy")
            return this._go({ name: "edit", id: null, text: renamed(tpl.yaml, t("copy_suffix")), file: tpl.copy_name ?? "", back, taken: this._taken() });
          return this._go({ name: "edit", id: null, text: tpl.yaml, file: tpl.template, back, taken: this._taken() });
        });
    }
  }

  /** The file names (workflow ids) the folder holds: a new file may not take one unasked. */
  private _taken(): string[] {
    return this._rows.map((r) => r.workflow_id);
  }

  private async _onUpdate(e: { kind: string; workflow_id?: string; run_id?: string }): Promise<void> {
    const v = this._view;
    if (v.name === "list" || e.kind === "workflows" || e.kind === "workflow_state") await this._loadList();
    if (v.name === "workflow" && v.tab === "runs" && e.workflow_id === v.id && (e.kind.startsWith("run_") || e.kind === "held_back"))
      await this._loadRuns(false);
    else if (v.name === "workflow" && e.kind === "held_back" && e.workflow_id === v.id) await this._loadList();
    if (v.name === "run" && e.run_id === v.run) await this._loadRun(v.run);
  }

  /** A link to a place of the panel: a real href (open in a new tab, copy the link), and
   * a click that stays in the page. */
  private _href(place: Place): string {
    return `${this._prefix()}${pathOf(place)}`;
  }

  private _link(place: Place) {
    return (e: MouseEvent) => {
      if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
      e.preventDefault();
      void this._nav(place);
    };
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
      // The limit holding its events back now, as fresh as its runs.
      if ("held_back" in res) this._rows = this._rows.map((r) => (r.workflow_id === v.id ? { ...r, held_back: res.held_back } : r));
    });
  }

  private async _loadRun(run: string): Promise<void> {
    await this._guard(async () => (this._run = await api.run(this.hass, run)));
  }

  /** Show ``view`` and load what it needs (the URL is :meth:`_nav`'s). */
  private async _go(view: View): Promise<void> {
    this._view = view;
    this._error = "";
    window.scrollTo?.(0, 0);
    if (view.name === "list") await this._loadList();
    if (view.name === "workflow") {
      if (view.tab === "runs") await this._loadRuns(false);
      if (view.tab === "versions") {
        this._compare = null;
        this._confirm = null;
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

  /** Where the header's back arrow goes from ``v``. */
  private _parent(v: View): Place {
    if (v.name === "run" && this._run) return { name: "workflow", id: this._run.workflow_id, tab: "runs" };
    if (v.name === "edit") return v.back ? placeOf(v.back) : { name: "list" };
    if (v.name === "question") return { name: "questions" };
    return { name: "list" };
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
          ? html`<button class="back" aria-label=${t("back")} @click=${() => this._nav(this._parent(v))}>←</button>`
          : nothing}
        <span class="grow">${t("title")}</span>
      </header>
      <main>
        ${this._error ? html`<div class="card error" role="alert">${this._error}</div>` : nothing}
        ${v.name === "list" || v.name === "questions" ? this._tabs(v.name) : nothing}
        ${v.name === "list" ? this._list() : nothing} ${v.name === "questions" ? this._questions(null) : nothing}
        ${v.name === "question" ? this._questions(v.id) : nothing}
        ${v.name === "missing" ? html`<p class="muted missing">${t("not_found")}</p>` : nothing}
        ${v.name === "workflow" ? this._workflow(v.id, v.tab) : nothing} ${v.name === "run" ? this._runView() : nothing}
        ${v.name === "edit" ? this._editor(v) : nothing} ${v.name === "templates" ? this._gallery() : nothing}
      </main>
    `;
  }

  /** Home Assistant's sidebar, which a phone-width screen hides behind this button. */
  private _toggleMenu(): void {
    this.dispatchEvent(new Event("hass-toggle-menu", { bubbles: true, composed: true }));
  }

  private _tabs(current: string) {
    return html`<div class="row tabs">
      <button class=${current === "list" ? "on tab-workflows" : "tab-workflows"} @click=${() => this._nav({ name: "list" })}>
        ${t("tab_workflows")}
      </button>
      <button class=${current === "questions" ? "on tab-questions" : "tab-questions"} @click=${() => this._nav({ name: "questions" })}>
        ${t("tab_questions")}
      </button>
      <span class="grow"></span>
      ${this._admin
        ? html`<button class="templates" @click=${() => this._nav({ name: "templates" })}>${t("templates")}</button>
            <button class="primary new" @click=${() => this._nav({ name: "new" })}>${t("new")}</button>`
        : nothing}
    </div>`;
  }

  private _list() {
    return html`${this._admin ? nothing : html`<p class="muted">${t("read_only")}</p>`}
      ${this._rows.map((r) => {
        const place: Place = { name: "workflow", id: r.workflow_id, tab: "runs" };
        return html`<div class="card workflow" data-workflow=${r.workflow_id}>
          <div class="row">
            <div class="grow">
              <a href=${this._href(place)} class="name" @click=${this._link(place)}><h3>${r.name}</h3></a>
              ${r.description ? html`<div class="muted hide-narrow">${r.description}</div>` : nothing}
            </div>
            ${r.state === "invalid" ? html`<span class="chip">${t("state_invalid")}</span>` : this._stateToggle(r)}
          </div>
          ${r.todos.length ? this._todos(r) : nothing} ${r.held_back ? this._held(r.held_back) : nothing}
          <div class="row muted">
            <span>${t("last_run")}: ${r.last_run ? html`${decided(r.last_run.decision) ?? statusText(r.last_run.status)}${r.last_run.test ? html` <span class="chip test">${t("state_test")}</span>` : nothing} · ${when(this.hass, r.last_run.started_at)}` : t("no_runs")}</span>
            ${r.accuracy ? html`<span class="accuracy">· ${this._accuracy(r.accuracy)}</span>` : nothing}
          </div>
        </div>`;
      })}`;
  }

  /** The marked accuracy as the trust rule reads it: the lower bound of its interval,
   * said as "at least", with how many runs were marked. */
  private _accuracy(a: NonNullable<WorkflowRow["accuracy"]>): string {
    const marked = `${a.total} ${t(a.total === 1 ? "run_marked" : "runs_marked")}, ${a.right} ${t("marked_right_count")}`;
    return `${t("accuracy")}: ${t("at_least")} ${percent(this.hass, a.lower_bound)} (${marked})`;
  }

  /** What to do before the workflow runs: one line each, the validator's words one click
   * away. */
  private _todos(r: WorkflowRow) {
    const head = r.state === "needs_attention" ? t("state_needs_attention") : t("todo_title");
    return html`<div class="todos" role="list" aria-label=${head}>
      <div class="muted">${head}:</div>
      ${r.todos.map((todo) => this._todo(r, todo))}
    </div>`;
  }

  private _todo(r: WorkflowRow, todo: Todo) {
    const subject = todo.subject ? (todo.kind === "camera_role" ? roleName(todo.subject) : todo.subject) : "";
    const options = todo.where === "options" && this._admin;
    const file: Place = { name: "workflow", id: r.workflow_id, tab: "edit" };
    return html`<details class="todo" role="listitem" data-kind=${todo.kind}>
      <summary>
        <span class="todo-text">${t(`todo_${todo.kind}`)}${subject ? html` <b>${subject}</b>` : nothing}</span>
      </summary>
      <ul class="muted">
        ${todo.details.map((d) => html`<li>${d.line ? `${t("line")} ${d.line}: ` : ""}${d.message}</li>`)}
      </ul>
      ${options ? html`<a class="fix" href="/config/integrations/integration/opennvr_workflows">${t("open_options")}</a>` : nothing}
      ${todo.where === "file" && this._admin ? html`<a class="fix" href=${this._href(file)} @click=${this._link(file)}>${t("open_file")}</a>` : nothing}
    </details>`;
  }

  /** Why no run starts now: the limit holding its events back, until when, and the run
   * still going that they joined. */
  private _held(held: HeldBack) {
    const run: Place | null = held.run_id ? { name: "run", run: held.run_id } : null;
    return html`<div class="held warning" role="status">
      ${has(`held_${held.limit}`) ? t(`held_${held.limit}`) : `${t("held_limit")}: ${humanize(held.limit)}`}${held.test ? ` (${t("held_test")})` : ""}${held.until ? ` · ${t("until")} ${when(this.hass, held.until)}` : ""}
      ${run ? html`· <a href=${this._href(run)} @click=${this._link(run)}>${t("open_run")}</a>` : nothing}
    </div>`;
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

  private _workflow(id: string, tab: Tab) {
    const r = this._row(id);
    const go = (tab: Tab) => this._nav({ name: "workflow", id, tab });
    return html`<div class="row">
        <h2 class="grow">${r?.name ?? id}</h2>
        ${r && r.state !== "invalid" ? this._stateToggle(r) : nothing}
      </div>
      ${r?.todos.length ? this._todos(r) : nothing} ${r?.held_back ? this._held(r.held_back) : nothing}
      <div class="row tabs">
        <button class=${tab === "runs" ? "on tab-runs" : "tab-runs"} @click=${() => go("runs")}>${t("runs")}</button>
        <button class=${tab === "versions" ? "on tab-versions" : "tab-versions"} @click=${() => go("versions")}>${t("versions")}</button>
        ${this._admin ? html`<button class=${tab === "try" ? "on tab-try" : "tab-try"} @click=${() => go("try")}>${t("try")}</button>` : nothing}
        <span class="grow"></span>
        ${this._admin
          ? html`<button class="edit" @click=${() => this._nav({ name: "workflow", id, tab: "edit" })}>${t("edit")}</button>`
          : nothing}
      </div>
      ${tab === "runs" ? this._timeline() : nothing} ${tab === "versions" ? this._versionsView(id) : nothing}
      ${tab === "try" ? this._tryView(id) : nothing}`;
  }

  private _timeline() {
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
        ${this._runs.map((run) => {
          const place: Place = { name: "run", run: run.run_id };
          const took = run.ended_at ? duration(this.hass, (run.ended_at - run.started_at) * 1000) : "";
          return html`<a class="card step run ${run.status}" data-run=${run.run_id} href=${this._href(place)} @click=${this._link(place)}>
            <div class="row">
              <b class="grow">${decided(run.decision) ?? statusText(run.status)}</b>
              ${run.test ? html`<span class="chip test">${t("state_test")}</span>` : nothing}
              <span class="chip">${statusText(run.status)}</span>
            </div>
            <div class="muted">${when(this.hass, run.started_at)}${took ? ` · ${took}` : ""} · ${run.steps} ${t(run.steps === 1 ? "step" : "steps")}</div>
            ${run.error ? html`<div class="error">${run.error}</div>` : nothing}
          </a>`;
        })}
      </div>
      ${this._more ? html`<button class="more" @click=${() => this._loadRuns(true)}>${t("more")}</button>` : nothing}`;
  }

  private _runView() {
    const run = this._run;
    if (!run) return html`<p class="muted">…</p>`;
    // The stored mark (the page reloads after marking, and when anyone marks the run).
    const marked = run.mark?.right;
    const took = run.ended_at ? duration(this.hass, (run.ended_at - run.started_at) * 1000) : "";
    // The picture the model saw goes with the step that looked; a question's picture with
    // the question; any other (a run without such a step) above the steps.
    const looked = run.steps.find((s) => s.kind === "ai");
    const asked = run.steps.find((s) => s.kind === "ask_person");
    const placed = (kind: string) => (kind === "frame" ? looked : asked);
    const loose = run.evidence.filter((e) => !placed(e.kind));
    const workflow = this._row(run.workflow_id);
    return html`<div class="card summary">
        ${workflow ? html`<div class="muted">${workflow.name}</div>` : nothing}
        <div class="row">
          <h2 class="grow">${run.outcome && run.outcome !== "done" ? run.outcome : statusText(run.status)}</h2>
          ${run.test ? html`<span class="chip test">${t("state_test")}</span>` : nothing}
        </div>
        <div class="muted when">
          ${startedText(run) ? html`${startedText(run)} · ` : nothing}${when(this.hass, run.started_at)}${took ? html` · ${t("took")} ${took}` : nothing}
        </div>
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
      ${loose.map((e) => html`<div class="card"><img class="evidence" src=${e.url} alt=${e.camera} /></div>`)}
      <h3>${t("steps_title")}</h3>
      <div class="flow steps">
        ${run.steps.map((s) =>
          this._step(
            s,
            run,
            run.evidence.filter((e) => placed(e.kind) === s),
          ),
        )}
      </div>`;
  }

  private _step(s: StepView, run: RunPage, pictures: RunPage["evidence"]) {
    const calls = run.tool_calls.filter((c) => c.step_path === s.path);
    const lane = s.path.split(".").slice(1).filter((p) => !/^\d+$/.test(p));
    const outcome = outcomeText(s);
    const took = s.ms ?? (s.started_at && s.ended_at ? (s.ended_at - s.started_at) * 1000 : null);
    const question = run.approvals.find((a) => a.step_path === s.path);
    const sent = fieldsOf(s.request);
    // What the confidence rests on, when it is a shortfall ("evidence: the input is missing").
    const gap = /^(?:evidence|agreement): (.+)$/.exec(s.confidence_source ?? "")?.[1] ?? "";
    return html`<div class="card step ${s.status}" data-path=${s.path}>
      ${lane.length ? html`<div class="lane">${t("branch")}: ${lane.map((p) => (p === "unsure" ? t("outcome_unsure") : p)).join(" › ")}</div>` : nothing}
      <div class="row">
        <b class="grow title">${stepTitle(s)}</b>
        ${s.status === "would_have" ? html`<span class="chip test">${t("would_have")}</span>` : html`<span class="chip">${statusText(s.status)}</span>`}
      </div>
      ${question ? html`<div class="question">“${question.message}”</div>` : nothing}
      ${outcome ? html`<div class="outcome">${t(s.kind === "ask_person" ? "reply" : s.kind === "if" ? "result" : "decision")}: <b>${outcome}</b>${question?.answered_by ? html` · ${question.answered_by}` : nothing}</div>` : nothing}
      ${s.reason ? html`<div class="reason">${s.reason}</div>` : nothing}
      ${pictures.map((e) => html`<figure><img class="evidence" src=${e.url} alt=${t(e.kind === "frame" ? "picture_seen" : "picture_shown")} /><figcaption class="muted">${t(e.kind === "frame" ? "picture_seen" : "picture_shown")}</figcaption></figure>`)}
      ${sent.length
        ? html`<dl class="sent">
            <dt class="muted">${t(s.status === "would_have" ? "would_have_sent" : "sent")}</dt>
            ${sent.map((f) => html`<dd>${f.label ? html`<span class="muted">${f.label}:</span> ` : nothing}${f.text}</dd>`)}
          </dl>`
        : nothing}
      <div class="row muted facts">
        ${s.confidence != null ? html`<span>${t("confidence")}: ${percent(this.hass, s.confidence)}</span>` : nothing}
        ${s.unsure_reason ? html`<span class="unsure">${t("unsure_reason")}: ${unsureText(s.unsure_reason)}${gap ? ` (${gap})` : ""}</span>` : nothing}
        ${s.model ? html`<span>${t("model")}: ${s.model}</span>` : nothing}
        ${took != null ? html`<span class="took">${t("took")} ${duration(this.hass, took)}</span>` : nothing}
        ${s.started_at ? html`<span>${when(this.hass, s.started_at)}</span>` : nothing}
      </div>
      ${calls.length
        ? html`<details>
            <summary>${t("tool_calls")} (${calls.length})</summary>
            ${calls.map(
              (c) => html`<div class="call">
                <b>${c.name}</b>
                <span class="muted">${statusText(c.status)} · ${duration(this.hass, c.ms)}${c.tokens_in != null ? ` · ${t("tokens")} ${c.tokens_in}/${c.tokens_out ?? 0}` : ""}</span>
                ${fieldsOf(c.args).map((f) => html`<div>${f.label ? html`<span class="muted">${f.label}:</span> ` : nothing}${f.text}</div>`)}
                ${c.result != null
                  ? html`<div class="muted">${t("answer")}:</div>
                      ${fieldsOf(parsed(c.result)).map((f) => html`<div class="answer">${f.label ? html`<span class="muted">${f.label}:</span> ` : nothing}${f.text}</div>`)}`
                  : nothing}
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
            <span class="grow"><b>${v.version.slice(0, 10)}</b> · ${when(this.hass, v.created_at)} · ${v.runs} ${t("runs")}</span>
            ${v.current
              ? html`<span class="chip">${t("current")}</span>`
              : html`<button class="compare" @click=${() => (this._compare = v.version)}>${t("diff")}</button>
                  ${this._admin
                    ? html`<button class="rollback" aria-expanded=${this._confirm === v.version ? "true" : "false"} @click=${() => (this._confirm = v.version)}>${t("rollback")}</button>`
                    : nothing}`}
          </div>
          ${this._confirm === v.version && !v.current ? this._confirmRollback(id, v) : nothing}
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

  /** The rollback's yes or no, under its version: the file's text is replaced by the
   * text that version was saved with (Home Assistant's confirmation dialog is not one a
   * custom panel can open, so the step is the panel's own). */
  private _confirmRollback(id: string, v: Version) {
    return html`<div class="confirm-rollback" role="alertdialog" aria-labelledby="rollback-question" aria-describedby="rollback-replaces">
      <b id="rollback-question">${t("rollback_question")}</b>
      <p id="rollback-replaces" class="warning">${t("rollback_replaces")}</p>
      <div class="row">
        <span class="grow"></span>
        <button class="cancel" @click=${() => (this._confirm = null)}>${t("cancel")}</button>
        <button class="primary rollback-yes" @click=${() => this._rollback(id, v.version)}>${t("rollback_yes")}</button>
      </div>
    </div>`;
  }

  private async _rollback(id: string, version: string): Promise<void> {
    this._confirm = null;
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
                  ${e.confidence != null ? html`<span class="muted">${percent(this.hass, e.confidence)}</span>` : nothing}
                </div>
                <div>${e.reason ?? ""}</div>
                <div class="muted">${e.event.label ?? ""} · ${e.event.camera ?? ""} · ${e.event.time}</div>
                <div class="flow">${e.trace.map((s) => html`<div class="step ${s.status}">${stepTitle(s)}: ${outcomeText(s) ?? statusText(s.status)}</div>`)}</div>
              </div>`,
            )}`
        : nothing}`;
  }

  private async _try(id: string): Promise<void> {
    this._trying = true;
    await this._guard(async () => (this._tried = await api.tryIt(this.hass, id, 10)));
    this._trying = false;
  }

  private _editor(v: Extract<View, { name: "edit" }>) {
    return html`<opennvr-workflow-editor
      .hass=${this.hass}
      .text=${v.text}
      .fileName=${v.file}
      .taken=${v.taken}
      ?existing=${v.id !== null}
      @saved=${(e: CustomEvent<{ workflow_id: string }>) => this._nav({ name: "workflow", id: e.detail.workflow_id, tab: "runs" }, true)}
    ></opennvr-workflow-editor>`;
  }

  private _gallery() {
    return html`${this._templates.map(
      (tpl) => html`<div class="card template" data-template=${tpl.template}>
        <div class="row">
          <h3 class="grow">${tpl.name}</h3>
          ${tpl.installed ? html`<span class="chip installed">${t("installed")}</span>` : nothing}
        </div>
        ${tpl.description ? html`<div class="muted">${tpl.description}</div>` : nothing}
        <div>${t("needs")}: ${tpl.needs.join(", ") || "–"}</div>
        ${tpl.ready
          ? html`<div class="muted">${t("ready")}</div>`
          : html`<div class="warning">${t("missing")}: ${tpl.missing.map((p) => p.message).join("; ")}</div>`}
        <div class="row">
          ${tpl.installed
            ? html`<button class="open-installed" @click=${() => this._nav({ name: "workflow", id: tpl.template, tab: "runs" })}>${t("open_installed")}</button>
                <button class="replace" @click=${() => this._nav({ name: "template", template: tpl.template, as: "replace" })}>${t("replace_installed")}</button>
                ${tpl.copy_name
                  ? html`<button class="primary copy" @click=${() => this._nav({ name: "template", template: tpl.template, as: "copy" })}>${t("save_copy")}</button>`
                  : nothing}`
            : html`<button class="primary use" @click=${() => this._nav({ name: "template", template: tpl.template, as: "new" })}>${t("use_template")}</button>`}
        </div>
      </div>`,
    )}`;
  }

  private _questions(only: string | null) {
    return html`<opennvr-approvals
      .hass=${this.hass}
      .only=${only}
      .runHref=${(run: string) => this._href({ name: "run", run })}
      .questionHref=${(id: string) => this._href({ name: "question", id })}
      @panel-navigate=${(e: CustomEvent<{ path: string }>) => this._nav(placeOf(e.detail.path))}
    ></opennvr-approvals>`;
  }
}

/** A run's decision worth saying (an action's plain "done" is said by its status). */
function decided(decision: string | null): string | null {
  return decision && decision !== "done" ? decision : null;
}

/** A model's or tool's answer as data when it is JSON text (its fields are then shown one a
 * line, in words), else as it is. */
function parsed(result: unknown): unknown {
  if (typeof result !== "string" || !/^\s*[[{]/.test(result)) return result;
  try {
    return JSON.parse(result);
  } catch {
    return result;
  }
}

/** The YAML of a template with `suffix` after its name (a copy is told apart from the
 * installed one in the list). */
function renamed(yaml: string, suffix: string): string {
  return yaml.replace(/^name:[ \t]*(["']?)(.*?)\1[ \t]*$/m, (_m, q: string, name: string) => `name: ${q}${name} (${suffix})${q}`);
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
