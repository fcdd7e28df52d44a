// Shared look: Home Assistant's theme variables only, so light, dark and custom themes apply.
import { css } from "lit";

export const shared = css`
  :host {
    display: block;
    color: var(--primary-text-color);
    font-family: var(--paper-font-body1_-_font-family, Roboto, sans-serif);
  }
  .card {
    background: var(--card-background-color, var(--ha-card-background));
    border-radius: var(--ha-card-border-radius, 12px);
    border: 1px solid var(--divider-color);
    padding: 12px 16px;
    margin: 0 0 12px;
  }
  button {
    font: inherit;
    cursor: pointer;
    border-radius: 8px;
    border: 1px solid var(--divider-color);
    background: var(--secondary-background-color);
    color: var(--primary-text-color);
    padding: 6px 12px;
    min-height: 36px;
  }
  button.primary {
    background: var(--primary-color);
    color: var(--text-primary-color, #fff);
    border-color: var(--primary-color);
  }
  button[disabled] {
    opacity: 0.5;
    cursor: default;
  }
  button.on {
    background: var(--primary-color);
    color: var(--text-primary-color, #fff);
  }
  .muted {
    color: var(--secondary-text-color);
  }
  .error,
  .attention {
    color: var(--error-color, #db4437);
  }
  .warning {
    color: var(--warning-color, #ffa600);
  }
  .row {
    display: flex;
    flex-wrap: wrap;
    gap: 8px;
    align-items: center;
  }
  .grow {
    flex: 1 1 auto;
    min-width: 0;
  }
  .chip {
    display: inline-block;
    border-radius: 12px;
    padding: 2px 8px;
    font-size: 0.85em;
    background: var(--secondary-background-color);
    border: 1px solid var(--divider-color);
  }
  .chip.test {
    border-color: var(--warning-color, #ffa600);
  }
  pre {
    white-space: pre-wrap;
    word-break: break-word;
    font-size: 0.85em;
    background: var(--secondary-background-color);
    padding: 8px;
    border-radius: 8px;
    margin: 4px 0;
  }
  img {
    max-width: 100%;
    border-radius: 8px;
  }
  h2,
  h3 {
    margin: 8px 0;
    font-weight: 500;
  }
  select {
    font: inherit;
    color: var(--primary-text-color);
    background: var(--card-background-color);
    border: 1px solid var(--divider-color);
    border-radius: 8px;
    min-height: 36px;
  }
  input {
    font: inherit;
    color: var(--primary-text-color);
    background: var(--card-background-color);
    border: 1px solid var(--divider-color);
    border-radius: 8px;
    padding: 6px;
  }
`;
