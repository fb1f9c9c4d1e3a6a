package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// routeSources are the packages that register the server's endpoints.
var routeSources = []string{"backend/server", "backend/gateway", "backend/admin"}

// registeredEndpoints reads routeSources for mux registrations with a
// method: the string literal "METHOD /path" given to Handle, HandleFunc or
// the admin handler's route. Subtree patterns without a method ("/v1/",
// "/admin/", "/") are the catch-alls that answer 404 or serve the
// dashboard, not endpoints.
func registeredEndpoints(t *testing.T) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	fset := token.NewFileSet()
	for _, dir := range routeSources {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range files {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, path, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(f, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok || len(call.Args) == 0 {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok || (sel.Sel.Name != "Handle" && sel.Sel.Name != "HandleFunc" && sel.Sel.Name != "route") {
					return true
				}
				lit, ok := call.Args[0].(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				if p, err := strconv.Unquote(lit.Value); err == nil && strings.Contains(p, " /") {
					out[p] = true
				}
				return true
			})
		}
	}
	return out
}

// endpointRow is a table row of docs/ whose first cell is `METHOD /path`.
var endpointRow = regexp.MustCompile("(?m)^\\| `([A-Z]+ /[^`?]*)")

// TestEveryEndpointIsDocumented: the endpoint tables under docs/ list
// exactly the endpoints the server registers — a new route without a row,
// or a row for a route that is gone, fails here.
func TestEveryEndpointIsDocumented(t *testing.T) {
	registered := registeredEndpoints(t)
	if len(registered) < 20 {
		t.Fatalf("found only %d registered endpoints in %v: has the registration changed shape?", len(registered), routeSources)
	}
	docs, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]string{}
	for _, path := range docs {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range endpointRow.FindAllStringSubmatch(string(b), -1) {
			documented[m[1]] = path
		}
	}
	var missing, stale []string
	for e := range registered {
		if documented[e] == "" {
			missing = append(missing, e)
		}
	}
	for e, path := range documented {
		if !registered[e] {
			stale = append(stale, e+" ("+path+")")
		}
	}
	sort.Strings(missing)
	sort.Strings(stale)
	if len(missing) > 0 {
		t.Errorf("registered but in no endpoint table under docs/: %q", missing)
	}
	if len(stale) > 0 {
		t.Errorf("documented but not registered: %q", stale)
	}
}
