package depcheck

import (
	"path"
	"strings"
	"testing"
)

// Allow fails t when pkg imports, directly or transitively, a package of
// this module that allowed does not list, or imports directly anything
// outside the standard library that allowed does not list: an allow-list,
// so a new arrow must be argued for here rather than slip in. The values
// say why each import is allowed.
func Allow(t *testing.T, pkg string, allowed map[string]string) {
	t.Helper()
	for _, dep := range deps(t, pkg) {
		if _, ok := allowed[dep]; !ok && (dep == Module || strings.HasPrefix(dep, Module+"/")) {
			t.Errorf("%s imports %s: not on its allow-list", pkg, dep)
		}
	}
	for _, imp := range imports(t, pkg) {
		if _, ok := allowed[imp]; !ok && !standard(imp) {
			t.Errorf("%s imports %s: not on its allow-list", pkg, imp)
		}
	}
}

// AllowStandard fails t when pkg imports directly a standard library
// package that allowed does not list: with Allow, the whole list of what a
// leaf may use, so that a wire format cannot start doing I/O (net/http, os)
// without someone writing down why.
func AllowStandard(t *testing.T, pkg string, allowed map[string]string) {
	t.Helper()
	for _, imp := range imports(t, pkg) {
		if _, ok := allowed[imp]; !ok && standard(imp) {
			t.Errorf("%s imports %s: not on its standard library allow-list", pkg, imp)
		}
	}
}

// StandardOnly fails t when pkg imports, directly or transitively, anything
// but the standard library: the allow-list of a leaf every part of
// quotagate may import. why completes "it imports the standard library
// only, …" with who imports it.
func StandardOnly(t *testing.T, pkg, why string) {
	t.Helper()
	name := path.Base(self(t, pkg))
	for _, dep := range deps(t, pkg) {
		if !standard(dep) {
			t.Errorf("%s imports %s: it imports the standard library only, %s", name, dep, why)
		}
	}
}

// standard reports whether path is a standard library package: its first
// element has no dot (a module path starts with a domain name).
func standard(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}
