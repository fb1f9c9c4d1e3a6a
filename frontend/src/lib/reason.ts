// Why a run holds its reserve, in a sentence (Holds panel). The ledger keeps
// the run's end status and the evidence the gateway recorded; the sentence is
// chosen from both, and the recorded words are shown beside it.

import type { Run } from './types';
import { t, type Key } from './i18n';
import { units } from './format';

export type ReasonKind = 'cut' | 'cancelled' | 'missing' | 'contradicted' | 'restart' | 'other';

export function reasonKind(r: Pick<Run, 'status' | 'evidence'>): ReasonKind {
  const ev = (r.evidence ?? '').toLowerCase();
  if (/restart|recover|crash|process (died|ended|stopped)|program ended/.test(ev)) return 'restart';
  if (r.status === 'cancelled') return 'cancelled';
  if (/contradict|mismatch|disagree|inconsistent|exceeds the relayed|relayed text/.test(ev)) return 'contradicted';
  if (r.status === 'interrupted' || /\bcut\b|interrupt/.test(ev)) return 'cut';
  if (/no usage|usage missing|missing usage|without usage|incomplete usage/.test(ev) || r.status === 'completed') return 'missing';
  return 'other';
}

/** cutAfter reads "after N units" from the evidence, when the gateway wrote it. */
function cutAfter(evidence: string | undefined): number | null {
  const m = /after ([\d,]+) (units|tokens|bytes)/i.exec(evidence ?? '');
  if (!m) return null;
  const n = Number(m[1].replace(/,/g, ''));
  return Number.isSafeInteger(n) ? n : null;
}

export function reasonSentence(r: Pick<Run, 'status' | 'evidence'>): string {
  const k = reasonKind(r);
  if (k === 'cut') {
    const n = cutAfter(r.evidence);
    if (n !== null) return t('reason.cutAfter', { units: units(n) });
  }
  return t(`reason.${k}` as Key);
}

/** isHeld: the run ended and its reserve is still held (usage unknown, or pending after its end). */
export function isHeld(r: Pick<Run, 'status' | 'usage' | 'held_units'>): boolean {
  if (r.status === 'queued' || r.status === 'active') return false;
  return (r.usage === 'unknown' || r.usage === 'pending') && r.held_units > 0;
}
