package gateway

import "github.com/quotagate/quotagate/backend/gate"

// FromGates adapts the per-upstream gates of package gate to Gate.
func FromGates(g *gate.Gates) Gate { return gatesAdapter{g} }

type gatesAdapter struct{ g *gate.Gates }

func (a gatesAdapter) Enter(upstream string) (GateTicket, error) {
	t, err := a.g.Enter(upstream)
	if err != nil {
		return nil, err
	}
	return t, nil
}
