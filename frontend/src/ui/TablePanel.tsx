import type { ComponentChildren } from 'preact';
import { t, type Key } from '../lib/i18n';
import { PanelHeading, type Words } from './Panel';

/** Column is one header cell; class "num" right-aligns a figure's column. */
export interface Column {
  label: string;
  class?: string;
  title?: string;
}

/** headings are columns of words, one per message key. */
export function headings(...keys: Key[]): Column[] {
  return keys.map((k) => ({ label: t(k) }));
}

/** figures are right-aligned columns of numbers, one per message key. */
export function figures(...keys: Key[]): Column[] {
  return keys.map((k) => ({ label: t(k), class: 'num' }));
}

/** TableHead is a table's header row, one cell per column. */
export function TableHead(props: { columns: readonly Column[] }) {
  return (
    <thead>
      <tr>
        {props.columns.map((c, i) => (
          <th key={i} class={c.class} title={c.title}>
            {c.label}
          </th>
        ))}
      </tr>
    </thead>
  );
}

/** EmptyRow spans every column with the message for a table without rows. */
export function EmptyRow(props: { width: number; text: string }) {
  return (
    <tr>
      <td colSpan={props.width} class="empty">
        {props.text}
      </td>
    </tr>
  );
}

/**
 * TablePanel is a dashboard panel around one table: the heading, the header
 * row, and, when there are no rows, the panel's empty message spanning every
 * column. Rows that span the table (forms, reasons) use the same columns'
 * length.
 */
export function TablePanel(props: {
  words: Words;
  testid: string;
  columns: readonly Column[];
  isEmpty: boolean;
  tools?: ComponentChildren; // controls beside the heading (bulk actions)
  foot?: ComponentChildren; // below the table (a pager)
  children: ComponentChildren;
}) {
  return (
    <section class="panel">
      <PanelHeading words={props.words} tools={props.tools} />
      <div class="scroll">
        <table data-testid={props.testid}>
          <TableHead columns={props.columns} />
          <tbody>
            {props.isEmpty && <EmptyRow width={props.columns.length} text={t(`${props.words}.empty`)} />}
            {props.children}
          </tbody>
        </table>
      </div>
      {props.foot}
    </section>
  );
}
