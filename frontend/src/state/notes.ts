// A notice the dashboard shows an operator: the outcome of an action, in
// the page's language (said again after a language switch).

import { ApiError } from '../lib/api';
import { errorText } from '../lib/errors';

export interface Note {
  kind: 'ok' | 'error';
  text: string;
  code?: string; // the API's error code, so a form can put the error next to its field
  reason?: string; // the API's reason (ledger/reason.go), likewise
  render?: () => string; // says text again in the current language (after a switch)
}

/** noteText is a notice's sentence in the current language. */
export function noteText(n: Note): string {
  return n.render ? n.render() : n.text;
}

/** errorNote is the notice of a failed action. */
export function errorNote(err: unknown): Note {
  const render = err instanceof PartialFailure ? err.render : () => errorText(err);
  const api = err instanceof ApiError ? err : err instanceof PartialFailure ? err.cause : undefined;
  return { kind: 'error', text: render(), code: api?.code, reason: api?.reason, render };
}

/** said is a notice whose sentence is rendered again in the current language. */
export function said(kind: Note['kind'], render: () => string): Note {
  return { kind, text: render(), render };
}

/** PartialFailure is a bulk action that stopped at one failure, said in the page's language. */
export class PartialFailure extends Error {
  readonly render: () => string;
  readonly cause: ApiError | undefined;
  constructor(render: () => string, cause: unknown) {
    super(render());
    this.render = render;
    this.cause = cause instanceof ApiError ? cause : undefined;
  }
}
