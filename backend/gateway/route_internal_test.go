package gateway

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/quotagate/quotagate/backend/upstream"
)

// named is an Upstream that only has a name and models.
type named struct {
	name   string
	models []string
}

func (n named) Name() string             { return n.name }
func (n named) Models() []string         { return n.models }
func (n named) Serves(model string) bool { return slices.Contains(n.models, model) }
func (n named) Send(context.Context, []byte, http.Header) (*upstream.Response, error) {
	return nil, nil
}

// names is the order's upstream names, joined.
func names(ts []routeTarget) string {
	var out []string
	for _, t := range ts {
		out = append(out, t.up.Name())
	}
	return strings.Join(out, ",")
}

func TestRouteOrder(t *testing.T) {
	ups := []Upstream{named{"a", []string{"m"}}, named{"b", []string{"m", "n"}}, named{"c", []string{"m"}}, named{"d", []string{"m"}}}
	for _, tc := range []struct {
		name     string
		priority map[string]int
		calls    []string // the order of successive calls
	}{
		{"AllEqualTakeTurns", nil, []string{"a,b,c,d", "b,c,d,a", "c,d,a,b", "d,a,b,c", "a,b,c,d"}},
		{"LowerFirst", map[string]int{"a": 2, "b": 1, "c": 0, "d": 3}, []string{"c,b,a,d", "c,b,a,d"}},
		{"TiesWithinAPriority", map[string]int{"a": 1, "b": 0, "c": 0, "d": 1}, []string{"b,c,a,d", "c,b,d,a", "b,c,a,d"}},
		{"NegativeFirst", map[string]int{"d": -1}, []string{"d,a,b,c", "d,b,c,a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt := newRouteTable(ups, Routes{Priority: tc.priority}).of("m")
			for i, want := range tc.calls {
				if got := names(rt.order()); got != want {
					t.Errorf("call %d: %s, want %s", i, got, want)
				}
			}
		})
	}
	table := newRouteTable(ups, Routes{Renamed: map[string]map[string]string{"b": {"n": "n-ga"}}})
	if rt := table.of("n"); len(rt.targets) != 1 || rt.first().model != "n-ga" || names(rt.order()) != "b" {
		t.Errorf("route of n: %+v", rt)
	}
	if len(table.order) != 2 || table.order[0].model != "m" || table.of("x") != nil {
		t.Errorf("models %+v", table.order)
	}
}

func TestRenameModel(t *testing.T) {
	for _, tc := range []struct {
		name, path, body, wantPath, wantBody string
	}{
		{"Chat", "/chat/completions", `{"model":"flash","stream":true}`, "/chat/completions", `{"model":"flash-ga","stream":true}`},
		{"Spaces", "/messages", `{ "max_tokens": 5, "model" : "flash" }`, "/messages", `{ "max_tokens": 5, "model" : "flash-ga" }`},
		{"NoModel", "/embeddings", `{"input":"x"}`, "/embeddings", `{"input":"x"}`},
		{"GeminiPath", "/models/flash:streamGenerateContent?alt=sse", `{"contents":[]}`, "/models/flash-ga:streamGenerateContent?alt=sse", `{"contents":[]}`},
		{"NestedModelUntouched", "/responses", `{"tools":[{"model":"flash"}],"model":"flash"}`, "/responses", `{"tools":[{"model":"flash"}],"model":"flash-ga"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path, body := renameModel(tc.path, []byte(tc.body), "flash", "flash-ga")
			if path != tc.wantPath || string(body) != tc.wantBody {
				t.Errorf("%s %s, want %s %s", path, body, tc.wantPath, tc.wantBody)
			}
		})
	}
	if path, body := renameModel("/chat/completions", []byte(`{"model":"m"}`), "m", "m"); path != "/chat/completions" || string(body) != `{"model":"m"}` {
		t.Errorf("same name changed the request: %s %s", path, body)
	}
}
