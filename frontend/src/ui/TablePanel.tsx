import type { ComponentChildren } from 'preact';

/** Column is one header cell; class "num" right-aligns a figure's column. */
export interface Column {
  label: string;
  class?: string;
  title?: string;
}

/**
 * TablePanel is a dashboard panel around one table: the heading, the header
 * row, and, when there are no rows, a message spanning every column. Rows
 * that span the table (forms, reasons) use the same columns' length.
 */
export function TablePanel(props: {
  title: string;
  note?: string;
  testid: string;
  columns: readonly Column[];
  empty: string;
  isEmpty: boolean;
  tools?: ComponentChildren; // controls beside the heading (bulk actions)
  children: ComponentChildren;
}) {
  return (
    <section class="panel">
      <h2>
        {props.title}
        {props.note && (
          <>
            {' '}
            <span class="muted">{props.note}</span>
          </>
        )}
        {props.tools && <span class="tools">{props.tools}</span>}
      </h2>
      <div class="scroll">
        <table data-testid={props.testid}>
          <thead>
            <tr>
              {props.columns.map((c, i) => (
                <th key={i} class={c.class} title={c.title}>
                  {c.label}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {props.isEmpty && (
              <tr>
                <td colSpan={props.columns.length} class="empty">
                  {props.empty}
                </td>
              </tr>
            )}
            {props.children}
          </tbody>
        </table>
      </div>
    </section>
  );
}
