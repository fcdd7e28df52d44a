// The websocket commands of the integration (custom_components/opennvr_workflows/panel/api.py)
// and the shapes they answer with.

export const DOMAIN = "opennvr_workflows";

export interface Hass {
  language: string;
  /** The user's profile settings (Home Assistant 2023.1 and later). */
  locale?: { language?: string; number_format?: string; time_format?: string; time_zone?: string };
  config?: { time_zone?: string };
  user?: { is_admin: boolean; name: string; id: string };
  themes?: { darkMode?: boolean };
  callWS<T>(msg: Record<string, unknown>): Promise<T>;
  connection: {
    subscribeMessage<T>(cb: (msg: T) => void, msg: Record<string, unknown>): Promise<() => void>;
  };
}

export interface Problem {
  code: string;
  message: string;
  path: string;
  line: number;
  column: number;
  severity: "error" | "warning";
}

export interface WorkflowRow {
  entry_id: string;
  workflow_id: string;
  file: string;
  name: string;
  description: string | null;
  state: "off" | "test" | "on" | "needs_attention" | "invalid";
  reason: string | null;
  version: string | null;
  problems: Problem[];
  /** What to do before it runs (panel/todos.py); empty for a workflow that runs. */
  todos: Todo[];
  /** The limit holding its events back now, if one does (panel/timeline.py). */
  held_back?: HeldBack | null;
  needs_admin_to_turn_on: boolean;
  last_run: { run_id: string; status: string; decision: string | null; test: boolean; started_at: number } | null;
  accuracy: { right: number; total: number; ratio: number | null; lower_bound: number; trusted: boolean } | null;
}

export interface HeldBack {
  /** one_at_a_time, cooldown, per_hour or chain_depth. */
  limit: string;
  at: number;
  until: number | null;
  /** The run still going that the held event joined (one at a time), when visible. */
  run_id: string | null;
  /** Whether the limit is the Test runs' own. */
  test: boolean;
}

export interface Todo {
  kind: string;
  subject: string | null;
  /** Where it is done: the integration's options, or the workflow's file. */
  where: "options" | "file";
  details: { line: number; message: string }[];
}

export interface RunRow {
  run_id: string;
  status: string;
  outcome: string | null;
  decision: string | null;
  test: boolean;
  version: string;
  started_at: number;
  ended_at: number | null;
  error: string | null;
  steps: number;
}

export interface StepView {
  path: string;
  kind: string;
  status: string;
  outcome: string | null;
  reason: string | null;
  confidence?: number;
  confidence_source?: string;
  unsure_reason?: string;
  model?: string;
  ms?: number;
  started_at?: number;
  ended_at?: number;
  usage?: Record<string, unknown>;
  fields?: Record<string, unknown>;
  request?: unknown;
  result?: unknown;
}

export interface ToolCall {
  step_path: string;
  kind: string;
  name: string;
  status: string;
  ms: number;
  args: unknown;
  result: unknown;
  tokens_in: number | null;
  tokens_out: number | null;
}

export interface RunPage {
  run_id: string;
  workflow_id: string;
  status: string;
  outcome: string | null;
  test: boolean;
  started_at: number;
  ended_at: number | null;
  error: string | null;
  trigger: Record<string, unknown>;
  steps: StepView[];
  tool_calls: ToolCall[];
  evidence: { kind: string; camera: string; url: string }[];
  approvals: {
    approval_id: string;
    step_path: string;
    message: string;
    status: string;
    reply: string | null;
    answered_by: string | null;
  }[];
  /** The stored mark: right or wrong, the name of who marked it, when; null while unmarked. */
  mark: { right: boolean; by: string | null; at: number } | null;
  /** How a run started by name was started (run_workflow, the button, a message) and by
   * whom (null when Home Assistant itself called); null for a run its trigger started. */
  started_by?: { how: string; user: string | null } | null;
}

export interface Version {
  version: string;
  created_at: number;
  runs: number;
  current: boolean;
  yaml: string | null;
}

export interface Template {
  template: string;
  name: string;
  description: string | null;
  needs: string[];
  ready: boolean;
  missing: Problem[];
  yaml: string;
  /** Whether the folder holds a workflow file of the template's name. */
  installed: boolean;
  /** A free file name for a copy. */
  copy_name: string | null;
}

export interface Approval {
  approval_id: string;
  run_id: string;
  workflow_id: string;
  workflow_name: string;
  message: string;
  replies: string[];
  picture: string | null;
  may_answer: boolean;
  asked: string[];
  expires_at: number;
}

export interface Tried {
  events: {
    event: { id: number; camera: string | null; label: string | null; time: string };
    run_id: string;
    decision: string | null;
    reason: string | null;
    confidence: number | null;
    trace: StepView[];
  }[];
}

const ws = <T>(hass: Hass, command: string, data: Record<string, unknown> = {}) =>
  hass.callWS<T>({ type: `${DOMAIN}/${command}`, ...data });

export const api = {
  list: (h: Hass) =>
    ws<{ workflows: WorkflowRow[]; is_admin: boolean; may_mark: boolean }>(h, "workflows/list"),
  runs: (h: Hass, workflow: string, opts: { offset?: number; limit?: number; decision?: string; mode?: string }) =>
    ws<{ runs: RunRow[]; more: boolean; decisions: string[]; held_back?: HeldBack | null }>(h, "workflows/runs", {
      workflow,
      ...opts,
    }),
  run: (h: Hass, run_id: string) => ws<RunPage>(h, "workflows/run", { run_id }),
  versions: (h: Hass, workflow: string) => ws<{ versions: Version[] }>(h, "workflows/versions", { workflow }),
  source: (h: Hass, workflow: string) => ws<{ workflow_id: string; yaml: string; file: string }>(h, "workflows/source", { workflow }),
  validate: (h: Hass, yaml: string) => ws<{ valid: boolean; problems: Problem[] }>(h, "workflows/validate", { yaml }),
  templates: (h: Hass) => ws<{ templates: Template[] }>(h, "workflows/templates"),
  save: (h: Hass, data: { yaml?: string; template?: string; file_name?: string; overwrite?: boolean }) =>
    ws<{ workflow_id: string; state: string }>(h, "workflows/save", data),
  setState: (h: Hass, workflow: string, state: string) => ws(h, "workflows/set_state", { workflow, state }),
  rollback: (h: Hass, workflow: string, version: string) => ws(h, "workflows/rollback", { workflow, version }),
  tryIt: (h: Hass, workflow: string, count: number) => ws<Tried>(h, "workflows/try", { workflow, count }),
  mark: (h: Hass, run_id: string, right: boolean) => ws(h, "workflows/mark", { run_id, right }),
  approvals: (h: Hass) => ws<{ approvals: Approval[] }>(h, "approvals/list"),
  /** ``source``: where the person answered (the logbook says so): the panel or a dashboard card. */
  answer: (h: Hass, approval_id: string, reply: string, source: "panel" | "card" = "panel") =>
    ws(h, "approvals/answer", { approval_id, reply, source }),
  subscribe: (h: Hass, cb: (e: { kind: string; workflow_id?: string; run_id?: string }) => void) =>
    h.connection.subscribeMessage<{ kind: string; workflow_id?: string; run_id?: string }>(cb, {
      type: `${DOMAIN}/workflows/subscribe`,
    }),
};

/** The message of a failed command: Home Assistant's translated text when it sent one. */
export function errorText(err: unknown): string {
  if (err && typeof err === "object" && "message" in err) return String((err as { message: unknown }).message);
  return String(err);
}
