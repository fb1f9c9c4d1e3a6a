// Who made an audit row. Actors are typed strings (ledger.ActorKind):
// tenant:<id> (a tenant's call), operator:<name> (the dashboard, the admin
// API), system:<part> (the guard, a top-up, a lease, a balance source),
// provider:<upstream> (a provider's own answer: a lookup, a hold it
// settled). Rows written before actors were typed keep their bare words
// ("quota", "volcengine"); they have no kind.

export const actorKinds = ['tenant', 'operator', 'system', 'provider'] as const;

export type ActorKind = (typeof actorKinds)[number];

const kinds: readonly string[] = actorKinds;

/** actorKind is the kind an actor string names, or null for an untyped (older) actor. */
export function actorKind(actor: string | null | undefined): ActorKind | null {
  if (!actor) return null;
  const i = actor.indexOf(':');
  if (i <= 0 || i === actor.length - 1) return null;
  const k = actor.slice(0, i);
  return kinds.includes(k) ? (k as ActorKind) : null;
}
