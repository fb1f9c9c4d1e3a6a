package admin

import (
	"context"
	"net/http"
	"os"
)

// ConnectInfo is what a tool needs to reach this quotagate, for the
// dashboard's Connect panel (GET /admin/api/connect, admin token required:
// it carries the generated tenant keys).
type ConnectInfo struct {
	BaseURL string          `json:"base_url"` // …/v1, for OpenAI-style clients
	Origin  string          `json:"origin"`   // scheme://host:port, for clients that add /v1 (Anthropic)
	Locale  string          `json:"locale"`   // this process's locale (LC_ALL, LC_MESSAGES, LANG): the window's language
	Tenants []ConnectTenant `json:"tenants"`
	Models  []ConnectModel  `json:"models"`
}

// ConnectTenant is one tenant a tool can use; Key is set only for keys
// quotagate generated (a configured key is stored hashed and never shown).
type ConnectTenant struct {
	Tenant string   `json:"tenant"`
	Key    string   `json:"key,omitempty"`
	Models []string `json:"models"` // allowed models; empty means every model
}

// ConnectModel is one model the gateway serves.
type ConnectModel struct {
	ID        string `json:"id"`
	Upstream  string `json:"upstream"`
	Reasoning bool   `json:"reasoning,omitempty"`
}

// ConnectFunc builds the ConnectInfo (the server knows its URL, keys and models).
type ConnectFunc func(ctx context.Context) (ConnectInfo, error)

// Locale is the process's message locale as POSIX resolves it: LC_ALL,
// then LC_MESSAGES, then LANG ("" when none is set, which means C).
func Locale() string {
	for _, k := range []string{"LC_ALL", "LC_MESSAGES", "LANG"} {
		if v := os.Getenv(k); v != "" {
			return v
		}
	}
	return ""
}

func (h *Handler) connect(w http.ResponseWriter, r *http.Request) error {
	info, err := h.o.Connect(r.Context())
	if err != nil {
		return err
	}
	if info.Locale == "" {
		info.Locale = Locale()
	}
	if info.Tenants == nil {
		info.Tenants = []ConnectTenant{}
	}
	for i := range info.Tenants {
		if info.Tenants[i].Models == nil {
			info.Tenants[i].Models = []string{}
		}
	}
	if info.Models == nil {
		info.Models = []ConnectModel{}
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, info)
	return nil
}
