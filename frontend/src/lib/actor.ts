// Who made an audit row. Actors are typed strings: tenant:<id> (a tenant's
// call), operator:<name> (the dashboard, the admin API), system:<part> (the
// guard, a top-up, a lease, a provider). Rows written before actors were
// typed keep their bare words ("quota", "volcengine"); they have no kind.

export type ActorKind = 'tenant' | 'operator' | 'system';

const kinds: readonly ActorKind[] = ['tenant', 'operator', 'system'];

/** actorKind is the kind an actor string names, or null for an untyped (older) actor. */
export function actorKind(actor: string | null | undefined): ActorKind | null {
  if (!actor) return null;
  const i = actor.indexOf(':');
  if (i <= 0 || i === actor.length - 1) return null;
  const k = actor.slice(0, i) as ActorKind;
  return kinds.includes(k) ? k : null;
}
