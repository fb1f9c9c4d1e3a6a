package depcheck

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// thin lists, for the two front doors, every package of ours each may
// import directly, with why: app/ binds the window's few verbs and the
// root package (main.go and the launch) picks a mode and wires nothing.
// Anything else is policy or wiring that belongs in backend/server.
var thin = []struct {
	name, pkg string
	allowed   map[string]string
}{
	{"app", Module + "/app", map[string]string{
		"backend/ledger":    "ErrorMessage: an error as a person's sentence at the binding edge",
		"backend/audit":     "the save dialog's file name and the export's filter, as the admin endpoint reads it",
		"backend/autostart": "the start-at-login switch on the Settings tab",
		"backend/notify":    "desktop notifications (Wails v2.9.2 has none)",
	}},
	{"main", Module, map[string]string{
		"app":               "the Wails bindings",
		"backend/server":    "the one wiring path (server.Open)",
		"backend/config":    "--config and the embedded default",
		"backend/autostart": "the login entry's own launch",
		"backend/instance":  "a second launch shows the running window",
		"backend/postgres":  "the migrate verb (SQLite → PostgreSQL)",
		"backend/price":     "the prices update verb (replace the price table offline)",
		"backend/clock":     "QUOTAGATE_CLOCK_OFFSET read where the process starts, like the flags, and named in serve's banner",
		"frontend":          "the embedded dashboard",
	}},
}

func TestFrontDoorsStayThin(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	for _, d := range thin {
		t.Run(d.name, func(t *testing.T) {
			out, err := exec.Command("go", "list", "-f", "{{join .Imports \"\\n\"}}", d.pkg).Output()
			if err != nil {
				t.Fatalf("go list %s: %v", d.pkg, err)
			}
			for _, imp := range strings.Fields(string(out)) {
				rel, ours := strings.CutPrefix(imp, Module+"/")
				if !ours {
					continue
				}
				if _, ok := d.allowed[rel]; !ok {
					t.Errorf("%s imports %s: the front doors stay thin (policy and wiring live in backend/server)", d.pkg, imp)
				}
			}
		})
	}
}

// Only the front doors may know Wails: the backend serves a browser the
// same way (STYLE §2).
func TestOnlyFrontDoorsImportWails(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", Module+"/backend/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if i := slices.IndexFunc(f[1:], func(s string) bool { return strings.HasPrefix(s, "github.com/wailsapp/") }); i >= 0 {
			t.Errorf("%s imports %s: only app/ and main.go know Wails", f[0], f[1+i])
		}
	}
}
