import type { RouteState, RouteTarget } from '../../lib/types';
import { t } from '../../lib/i18n';
import { TablePanel, headings, type Column } from '../../ui/TablePanel';
import { useView } from '../../state/use';
import { restingKeys } from '../../lib/routes';

const none: RouteState[] = [];

/** Target is one upstream of a route: its name, what it is sent as, and why a call would pass it now. */
function Target(props: { model: string; target: RouteTarget; now: string | undefined }) {
  const x = props.target;
  const resting = restingKeys(x.keys, props.now);
  const id = `route-${props.model}-${x.upstream}`;
  return (
    <li data-testid={id} data-evicted={x.evicted} data-full={x.full} data-resting={resting}>
      <strong>{x.upstream}</strong>
      {x.upstream_model !== props.model && (
        <span class="muted" title={t('routes.renamed', { model: x.upstream_model })}> ({x.upstream_model})</span>
      )}
      <span class="muted"> · {t('routes.priority', { n: x.priority })}</span>
      {x.evicted && <span class="badge bad" data-testid={`${id}-evicted`}> {t('routes.evicted')}</span>}
      {x.full && <span class="badge warn" data-testid={`${id}-full`}> {t('routes.full')}</span>}
      {resting > 0 && (
        <span class="badge warn" data-testid={`${id}-resting`} title={x.keys.map((k) => `…${k.last4}`).join(' ')}>
          {' '}
          {t('routes.resting', { n: resting, all: x.keys.length })}
        </span>
      )}
    </li>
  );
}

/** RoutesTable: each model's route, its upstreams in the order calls try them. */
export function RoutesTable() {
  const routes = useView((v) => v.state?.routes ?? none);
  const now = useView((v) => v.state?.clock?.now);
  const columns: Column[] = headings('routes.model', 'routes.targets');
  return (
    <TablePanel words="routes" testid="routes-table" columns={columns} isEmpty={routes.length === 0}>
      {routes.map((r) => (
        <tr key={r.model} data-testid={`route-row-${r.model}`}>
          <td>{r.model}</td>
          <td>
            <ol class="route">
              {r.targets.map((x) => (
                <Target key={x.upstream} model={r.model} target={x} now={now} />
              ))}
            </ol>
          </td>
        </tr>
      ))}
    </TablePanel>
  );
}
