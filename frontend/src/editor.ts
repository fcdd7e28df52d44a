// The YAML editor: CodeMirror 6 with YAML highlighting; as the text changes the validator
// runs (debounced, through workflows/validate) and each problem is shown at its line and
// column with its text, which says the fix. Save is refused while any problem is an error.
// A new file whose name the folder already holds is not sent to be refused: the editor asks
// whether to replace that workflow or to save a copy under a free name.
import { LitElement, html, css, PropertyValues } from "lit";
import { EditorState } from "@codemirror/state";
import { EditorView, keymap, lineNumbers, highlightActiveLine } from "@codemirror/view";
import { defaultKeymap, history, historyKeymap } from "@codemirror/commands";
import { yaml } from "@codemirror/lang-yaml";
import { syntaxHighlighting, defaultHighlightStyle } from "@codemirror/language";
import { Diagnostic, linter, lintGutter, forceLinting } from "@codemirror/lint";
import { api, errorText, Hass, Problem } from "./api";
import { t } from "./texts";
import { shared } from "./styles";

const DEBOUNCE_MS = 400;

export class OpennvrEditor extends LitElement {
  static properties = {
    hass: { attribute: false },
    text: {},
    fileName: { attribute: false },
    existing: { type: Boolean },
    taken: { attribute: false },
    _conflict: { state: true },
    _problems: { state: true },
    _checked: { state: true },
    _error: { state: true },
    _saving: { state: true },
  };
  hass!: Hass;
  text = "";
  fileName = "";
  existing = false;
  /** The workflow ids of the folder's files (a new file's name must not take one unasked). */
  taken: string[] = [];
  /** The workflow id a new file would replace, while the editor asks what to do. */
  _conflict: string | null = null;
  _problems: Problem[] = [];
  _checked = false;
  _error = "";
  _saving = false;
  private _view?: EditorView;
  private _seq = 0;

  static styles = [
    shared,
    css`
      .cm {
        border: 1px solid var(--divider-color);
        border-radius: 8px;
        overflow: hidden;
        background: var(--card-background-color);
      }
      .cm .cm-editor {
        max-height: 60vh;
        font-size: 13px;
      }
      .cm .cm-scroller {
        font-family: var(--code-font-family, monospace);
      }
      .cm .cm-gutters {
        background: var(--secondary-background-color);
        color: var(--secondary-text-color);
        border-right: 1px solid var(--divider-color);
      }
      .cm .cm-activeLine,
      .cm .cm-activeLineGutter {
        background: color-mix(in srgb, var(--primary-color) 8%, transparent);
      }
      .cm .cm-content {
        caret-color: var(--primary-text-color);
      }
      .cm .cm-tooltip {
        background: var(--card-background-color);
        color: var(--primary-text-color);
        border: 1px solid var(--divider-color);
      }
      .problems {
        list-style: none;
        padding: 0;
        margin: 8px 0;
      }
      .problems li {
        padding: 4px 0;
        border-bottom: 1px solid var(--divider-color);
      }
      .where {
        font-family: var(--code-font-family, monospace);
      }
    `,
  ];

  protected firstUpdated(): void {
    const host = this.renderRoot.querySelector(".cm") as HTMLElement;
    this._view = new EditorView({
      parent: host,
      root: this.renderRoot as ShadowRoot,
      state: EditorState.create({
        doc: this.text,
        extensions: [
          lineNumbers(),
          highlightActiveLine(),
          history(),
          keymap.of([...defaultKeymap, ...historyKeymap]),
          yaml(),
          syntaxHighlighting(defaultHighlightStyle, { fallback: true }),
          lintGutter(),
          linter((view) => this._lint(view), { delay: DEBOUNCE_MS }),
          EditorView.lineWrapping,
          EditorView.updateListener.of((u) => {
            if (u.docChanged) this._checked = false;
          }),
        ],
      }),
    });
    forceLinting(this._view);
  }

  protected updated(changed: PropertyValues): void {
    if (changed.has("text") && this._view && this._view.state.doc.toString() !== this.text) {
      this._view.dispatch({ changes: { from: 0, to: this._view.state.doc.length, insert: this.text } });
    }
  }

  /** The validator's problems as CodeMirror diagnostics, each at its line and column. */
  private async _lint(view: EditorView): Promise<Diagnostic[]> {
    const seq = ++this._seq;
    const doc = view.state.doc;
    let problems: Problem[];
    try {
      problems = (await api.validate(this.hass, doc.toString())).problems;
    } catch (err) {
      this._error = errorText(err);
      return [];
    }
    if (seq !== this._seq) return [];
    this._problems = problems;
    this._checked = true;
    this._error = "";
    return problems.map((p) => {
      const line = doc.line(Math.min(Math.max(p.line, 1), doc.lines));
      const from = Math.min(line.from + Math.max(p.column - 1, 0), line.to);
      return {
        from,
        to: Math.max(from, line.to),
        severity: p.severity === "error" ? "error" : "warning",
        message: `${p.code}: ${p.message}`,
      };
    });
  }

  get value(): string {
    return this._view?.state.doc.toString() ?? this.text;
  }

  private get _errors(): number {
    return this._problems.filter((p) => p.severity === "error").length;
  }

  private async _save(): Promise<void> {
    if (!this._checked || this._errors) return;
    const id = this.fileName ? workflowId(this.fileName) : null;
    if (!this.existing && id && this.taken.includes(id)) {
      this._conflict = id;
      return;
    }
    await this._write(this.fileName, this.existing);
  }

  /** Save under a free name: the file name with "_copy" (and a number) after it. */
  private async _saveCopy(): Promise<void> {
    const base = workflowId(this.fileName || "workflow");
    let name = `${base}_copy`;
    for (let n = 2; this.taken.includes(name); n++) name = `${base}_copy_${n}`;
    this.fileName = name;
    await this._write(name, false);
  }

  private async _write(fileName: string, overwrite: boolean): Promise<void> {
    this._conflict = null;
    this._saving = true;
    this._error = "";
    try {
      const saved = await api.save(this.hass, {
        yaml: this.value,
        file_name: fileName || undefined,
        overwrite,
      });
      this.dispatchEvent(new CustomEvent("saved", { detail: saved, bubbles: true, composed: true }));
    } catch (err) {
      this._error = errorText(err);
    } finally {
      this._saving = false;
    }
  }

  private _goTo(p: Problem): void {
    const view = this._view;
    if (!view) return;
    const line = view.state.doc.line(Math.min(Math.max(p.line, 1), view.state.doc.lines));
    view.dispatch({ selection: { anchor: Math.min(line.from + Math.max(p.column - 1, 0), line.to) }, scrollIntoView: true });
    view.focus();
  }

  render() {
    const blocked = !this._checked || this._errors > 0 || this._saving;
    return html`
      <div class="row">
        ${this.existing
          ? html`<span class="chip">${this.fileName}</span>`
          : html`<label
              >${t("file_name")}
              <input
                name="file_name"
                .value=${this.fileName}
                @input=${(e: Event) => (this.fileName = (e.target as HTMLInputElement).value)}
            /></label>`}
        <span class="grow"></span>
        <button class="primary save" ?disabled=${blocked} @click=${this._save}>${t("save")}</button>
      </div>
      ${this._conflict
        ? html`<div class="card conflict" role="alert">
            <div>${t("file_taken")}: <b>${this._conflict}</b></div>
            <div class="row">
              <button class="replace-it" @click=${() => this._write(this.fileName, true)}>${t("replace_it")}</button>
              <button class="primary copy-it" @click=${this._saveCopy}>${t("save_as_copy")}</button>
              <button class="cancel" @click=${() => (this._conflict = null)}>${t("cancel")}</button>
            </div>
          </div>`
        : ""}
      <p class="muted">${t("lands_in_test")}</p>
      <div class="cm"></div>
      ${this._error ? html`<div class="error" role="alert">${this._error}</div>` : ""}
      ${this._checked && this._errors ? html`<div class="error">${t("save_refused")}</div>` : ""}
      <h3>${t("problems")}</h3>
      ${this._checked && this._problems.length === 0 ? html`<div class="muted no-problems">${t("no_problems")}</div>` : ""}
      <ul class="problems">
        ${this._problems.map(
          (p) => html`<li class=${p.severity === "error" ? "error problem" : "warning problem"} @click=${() => this._goTo(p)}>
            <span class="where">${t("line")} ${p.line}:${p.column}</span> <b>${p.code}</b> ${p.message}
          </li>`,
        )}
      </ul>
    `;
  }
}

/** The workflow id a file name stands for (host/folder/files.py, workflow_id_for). */
function workflowId(name: string): string {
  const stem = /\.ya?ml$/i.test(name) ? name.replace(/\.ya?ml$/i, "") : name;
  return stem.toLowerCase().replace(/[^a-z0-9_]+/g, "_").replace(/^_+|_+$/g, "") || "workflow";
}

if (!customElements.get("opennvr-workflow-editor")) customElements.define("opennvr-workflow-editor", OpennvrEditor);
