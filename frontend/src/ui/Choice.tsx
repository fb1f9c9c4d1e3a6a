/**
 * Choice is a labelled select over a list of values. name gives a value's
 * visible text (the value itself by default); lang marks an option written
 * in its own language; blank adds a first option with the empty value ("all
 * tenants"). A hidden label stays for screen readers only.
 */
export function Choice<T extends string>(props: {
  label: string;
  hidden?: boolean;
  testid: string;
  value: T | undefined;
  options: readonly T[];
  onChoose: (value: T) => void;
  name?: (value: T) => string;
  lang?: (value: T) => string;
  blank?: string;
}) {
  const name = props.name ?? ((v: T) => v);
  return (
    <label>
      {props.hidden ? <span class="sr">{props.label}</span> : props.label}
      <select
        data-testid={props.testid}
        aria-label={props.hidden ? props.label : undefined}
        value={props.value}
        onChange={(e) => props.onChoose((e.target as HTMLSelectElement).value as T)}
      >
        {props.blank !== undefined && <option value="">{props.blank}</option>}
        {props.options.map((v) => (
          <option key={v} value={v} lang={props.lang?.(v)}>
            {name(v)}
          </option>
        ))}
      </select>
    </label>
  );
}
