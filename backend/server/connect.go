package server

import (
	"context"

	"github.com/quotagate/quotagate/backend/admin"
)

// connectInfo is the dashboard's Connect panel: where tools reach this
// server, each tenant with the key quotagate generated for it (configured
// keys are kept hashed and never shown), and the models served.
func (s *Server) connectInfo(context.Context) (admin.ConnectInfo, error) {
	info := admin.ConnectInfo{BaseURL: s.URL() + "/v1", Origin: s.URL(), Locale: admin.Locale()}
	s.mu.Lock()
	for _, t := range s.tenants {
		info.Tenants = append(info.Tenants, admin.ConnectTenant{Tenant: t.ID, Key: s.keys[t.ID],
			Models: append([]string{}, t.AllowedModels...)})
	}
	s.mu.Unlock()
	for _, u := range s.cfg.Upstreams {
		reasoning := map[string]bool{}
		for _, m := range u.ReasoningModels {
			reasoning[m] = true
		}
		for _, m := range u.Models {
			info.Models = append(info.Models, admin.ConnectModel{ID: m, Upstream: u.Name, Reasoning: reasoning[m]})
		}
	}
	return info, nil
}
