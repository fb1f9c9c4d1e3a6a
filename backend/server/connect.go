package server

import (
	"context"
	"io"
	"net/url"

	"github.com/quotagate/quotagate/backend/admin"
	"github.com/quotagate/quotagate/backend/audit"
	"github.com/quotagate/quotagate/backend/ledger"
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

// ParseAuditQuery reads an audit filter written as a URL query (the
// dashboard's from, to, tenant, kind, run, text), in local days.
func (s *Server) ParseAuditQuery(query string) (audit.Query, error) {
	v, err := url.ParseQuery(query)
	if err != nil {
		return audit.Query{}, ledger.Errorf(ledger.CodeInvalidRequest, "audit filter %q: %v", query, err)
	}
	return audit.ParseQuery(v, nil)
}

// WriteAuditQuery writes the audit CSV of q (the window's Export CSV).
func (s *Server) WriteAuditQuery(ctx context.Context, w io.Writer, q audit.Query) error {
	if s.store == nil {
		return ledger.Errorf(ledger.CodeInternal, "the ledger is not wired into this build yet")
	}
	return audit.WriteCSV(ctx, w, s.store, q)
}
