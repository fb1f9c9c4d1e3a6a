import type { ComponentChildren } from 'preact';
import { t, type Key } from '../lib/i18n';

type Prefix<K> = K extends `${infer P}.title` ? P : never;

/**
 * Words names a panel's set of messages: every panel reads its heading, the
 * muted note beside it and the line shown when it has nothing from
 * `<words>.title`, `<words>.note` and `<words>.empty`, so a prefix is all a
 * panel needs to say, and the type admits only prefixes with all three.
 */
export type Words = {
  [P in Prefix<Key>]: `${P}.note` extends Key ? (`${P}.empty` extends Key ? P : never) : never;
}[Prefix<Key>];

/** PanelHeading is a panel's title with its note, and controls beside them (bulk actions). */
export function PanelHeading(props: { words: Words; tools?: ComponentChildren }) {
  return (
    <h2>
      {t(`${props.words}.title`)} <span class="muted">{t(`${props.words}.note`)}</span>
      {props.tools && <span class="tools">{props.tools}</span>}
    </h2>
  );
}

/** Panel is a dashboard section under its heading; isEmpty puts the panel's empty line before the content. */
export function Panel(props: { words: Words; testid: string; isEmpty: boolean; children: ComponentChildren }) {
  return (
    <section class="panel" data-testid={props.testid}>
      <PanelHeading words={props.words} />
      {props.isEmpty && <p class="empty">{t(`${props.words}.empty`)}</p>}
      {props.children}
    </section>
  );
}
