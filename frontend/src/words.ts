// A run, its steps and its numbers in words, as Home Assistant's own trace view says them:
// what each step did, how it ended, how long it took and when, in the user's language and
// locale (Home Assistant's profile settings: language, number and time format, time zone).
import { Hass, RunPage, StepView } from "./api";
import { has, t } from "./texts";

/** The user's locale as Home Assistant's profile sets it (the browser's when unset). */
function language(hass: Hass): string {
  return hass.locale?.language || hass.language || navigator.language;
}

function numberLocale(hass: Hass): string | undefined {
  const format = hass.locale?.number_format;
  if (format === "none") return "en-US";
  if (format === "system") return undefined;
  if (format === "comma_decimal") return "en-US";
  if (format === "decimal_comma") return "de-DE";
  if (format === "space_comma") return "fr-FR";
  return language(hass);
}

/** A date and time as the user's profile says: their language, 12 or 24 hours, and their
 * own or the server's time zone. */
export function when(hass: Hass, ts: number | null | undefined): string {
  if (!ts) return "";
  const options: Intl.DateTimeFormatOptions = { dateStyle: "medium", timeStyle: "medium" };
  const clock = hass.locale?.time_format;
  if (clock === "12" || clock === "24") options.hour12 = clock === "12";
  if (hass.locale?.time_zone === "server" && hass.config?.time_zone) options.timeZone = hass.config.time_zone;
  try {
    return new Intl.DateTimeFormat(clock === "system" ? undefined : language(hass), options).format(new Date(ts * 1000));
  } catch {
    return new Date(ts * 1000).toLocaleString();
  }
}

function unit(hass: Hass, value: number, name: "hour" | "minute" | "second" | "millisecond", digits = 0): string {
  return new Intl.NumberFormat(numberLocale(hass), {
    style: "unit",
    unit: name,
    unitDisplay: "short",
    maximumFractionDigits: digits,
  }).format(value);
}

/** A duration in words and the locale's units: "4 min 13 sec", "0.8 sec", "1 hr 2 min". */
export function duration(hass: Hass, ms: number | null | undefined): string {
  if (ms == null || !Number.isFinite(ms) || ms < 0) return "";
  if (ms < 1000) return ms < 100 ? unit(hass, Math.round(ms), "millisecond") : unit(hass, ms / 1000, "second", 1);
  if (ms < 60_000) return unit(hass, ms / 1000, "second", ms < 10_000 ? 1 : 0);
  const s = Math.round(ms / 1000);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = s % 60;
  const parts: string[] = [];
  if (h) parts.push(unit(hass, h, "hour"));
  if (m) parts.push(unit(hass, m, "minute"));
  if (sec && !h) parts.push(unit(hass, sec, "second"));
  return parts.join(" ");
}

/** A share as a percentage in the user's number format ("21 %", "21%"). */
export function percent(hass: Hass, share: number): string {
  return new Intl.NumberFormat(numberLocale(hass), { style: "percent", maximumFractionDigits: 0 }).format(share);
}

/** A key of the engine or the contract as words: "save_clip" -> "Save clip". */
export function humanize(key: string): string {
  const words = key.replace(/[_.-]+/g, " ").trim();
  return words ? words[0].toUpperCase() + words.slice(1) : key;
}

/** The translated text of ``key``, or ``fallback`` when the translations have none. */
function word(key: string, fallback: string): string {
  return has(key) ? t(key) : fallback;
}

/** What a step is, in words ("Asked a person", "Wrote to the logbook"). */
export function stepTitle(s: StepView): string {
  return word(`kind_${s.kind}`, humanize(s.kind));
}

/** How a step or a run ended, in words ("Done", "Would have done this, in Test"). */
export function statusText(status: string): string {
  if (status === "would_have") return t("would_have");
  return word(`status_${status}`, humanize(status));
}

/** What a step decided, in words; null when it says nothing more than its status (an
 * action that was done, a wait that ended). */
export function outcomeText(s: StepView): string | null {
  const outcome = s.outcome;
  if (outcome == null || outcome === "" || outcome === "done") return null;
  if (s.kind === "if") return t(outcome === "true" ? "outcome_true" : "outcome_false");
  if (outcome === "unsure") return t("outcome_unsure");
  return outcome;
}

/** Why a model was unsure, in words. */
export function unsureText(reason: string): string {
  return word(`unsure_${reason}`, humanize(reason));
}

/** How a run began, in words: "Started by Dana Owner with run_workflow", "Started by name
 * with the Run now button" for a run started by name, else "Started by an alert on Front
 * door"; "" when the run says neither. */
export function startedText(run: RunPage): string {
  const by = run.started_by;
  if (by) {
    const how = word(`start_how_${by.how}`, by.how);
    return `${by.user ? `${t("started_by")} ${by.user}` : t("started_by_name")} ${t("started_with")} ${how}`;
  }
  const what = triggerText(run.trigger);
  return what ? `${t("started_by")} ${what}` : "";
}

/** What started a run, to follow "Started by" ("an alert on Front door"). */
export function triggerText(trigger: Record<string, unknown>): string {
  const kind = String(trigger.kind ?? "");
  const what = kind ? word(`trigger_${kind}`, humanize(kind).toLowerCase()) : "";
  const role = trigger.camera_role ? roleName(String(trigger.camera_role)) : "";
  return [what, role ? `${t("on_camera")} ${role}` : ""].filter(Boolean).join(" ");
}

/** A camera role, site list or skill key as a person names it: "front_door" -> "Front door". */
export function roleName(role: string): string {
  return humanize(role);
}

/** Whether a value says nothing: null, "", or a list or mapping of such values only. */
export function blank(value: unknown): boolean {
  if (value == null || value === "") return true;
  if (Array.isArray(value)) return value.every(blank);
  if (typeof value === "object") return Object.values(value as Record<string, unknown>).every(blank);
  return false;
}

/** A value a step sent, as a line of text: text as it is, a list joined, a mapping as
 * "Label: value" pairs (never raw JSON). */
export function valueText(value: unknown): string {
  if (value == null) return "";
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  if (Array.isArray(value)) {
    const flat = value.every((v) => typeof v !== "object" || v === null);
    return value.filter((v) => !blank(v)).map(valueText).join(flat ? ", " : "; ");
  }
  return Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => !blank(v))
    .map(([k, v]) => `${word(`field_${k}`, humanize(k))}: ${valueText(v)}`)
    .join(", ");
}

/** The fields of what a step sent (or would have), each as a label and its text. */
export function fieldsOf(data: unknown): { label: string; text: string }[] {
  // A field with no value (null, "", [], {}) is not shown.
  if (blank(data)) return [];
  if (typeof data !== "object" || Array.isArray(data)) return [{ label: "", text: valueText(data) }];
  return Object.entries(data as Record<string, unknown>)
    // "kind" repeats the step's own title.
    .filter(([k, v]) => k !== "kind" && !blank(v))
    .map(([k, v]) => ({ label: word(`field_${k}`, humanize(k)), text: valueText(v) }));
}
