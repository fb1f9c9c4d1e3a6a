import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';

/** Dialog is a modal box: Escape or the backdrop closes it, focus starts inside. */
export function Dialog(props: { title: string; onClose: () => void; children: ComponentChildren; testid?: string }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const first = box.current?.querySelector<HTMLElement>('input, textarea, select, button');
    first?.focus();
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape') props.onClose();
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, []);
  return (
    <div class="backdrop" onClick={(e) => e.target === e.currentTarget && props.onClose()}>
      <div class="dialog" role="dialog" aria-modal="true" aria-label={props.title} ref={box} data-testid={props.testid}>
        <h3>{props.title}</h3>
        {props.children}
      </div>
    </div>
  );
}
