// Form input parsing shared by the panels' small forms.

/** wholeUnits parses a non-negative integer typed by a person ("1,200" and "1 200" allowed). */
export function wholeUnits(text: string): number | null {
  const t = text.replace(/[\s,_]/g, '');
  if (!/^\d+$/.test(t)) return null;
  const n = Number(t);
  return Number.isSafeInteger(n) ? n : null;
}
