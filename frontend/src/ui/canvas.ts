// What the charts ask of the page before drawing: a theme colour by its CSS
// variable, and whether a canvas can be drawn at all (a test's DOM cannot;
// the chart's words beside it still say everything).

/** css is the page's value of a CSS variable (a theme colour), or fallback outside a styled page. */
export function css(name: string, fallback: string): string {
  if (typeof getComputedStyle !== 'function') return fallback;
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim() || fallback;
}

/** canDraw says whether this page can draw on a canvas. */
export function canDraw(): boolean {
  try {
    return !!document.createElement('canvas').getContext('2d');
  } catch {
    return false;
  }
}
