//go:build !windows

package autostart

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestEntryEnableDisable(t *testing.T) {
	home := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, "config"))
	cmd := Serve("/opt/my apps/quotagate", "/home/u/.local/share/quota$gate")

	if on, err := EntryEnabled(); err != nil || on {
		t.Fatalf("before enabling: enabled=%v err=%v, want false", on, err)
	}
	if err := EnableEntry(cmd); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(home, "config", "autostart", "quotagate.desktop")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("enabling wrote no entry at %s: %v", p, err)
	}
	want := `Exec="/opt/my apps/quotagate" serve --data "/home/u/.local/share/quota\$gate"`
	if !strings.Contains(string(b), want+"\n") {
		t.Errorf("entry lacks %q:\n%s", want, b)
	}
	if on, err := EntryEnabled(); err != nil || !on {
		t.Fatalf("after enabling: enabled=%v err=%v, want true", on, err)
	}
	if v, err := exec.LookPath("desktop-file-validate"); err == nil {
		if out, err := exec.Command(v, p).CombinedOutput(); err != nil {
			t.Errorf("desktop-file-validate: %v\n%s", err, out)
		}
	}
	if err := DisableEntry(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Fatalf("disabling left %s (stat: %v)", p, err)
	}
	if err := DisableEntry(); err != nil {
		t.Fatalf("disabling twice: %v", err)
	}
}

func TestUnitInstallUninstall(t *testing.T) {
	home := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("HOME", home)
	p, err := InstallUnit(Serve("/usr/bin/quotagate", "/data/100%"))
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(home, ".config", "systemd", "user", "quotagate.service"); p != want {
		t.Fatalf("unit at %s, want %s", p, want)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{`ExecStart=/usr/bin/quotagate serve --data "/data/100%%"`, "WantedBy=default.target"} {
		if !strings.Contains(string(b), line+"\n") {
			t.Errorf("unit lacks %q:\n%s", line, b)
		}
	}
	link := filepath.Join(filepath.Dir(p), "default.target.wants", "quotagate.service")
	if target, err := os.Readlink(link); err != nil || target != "../quotagate.service" {
		t.Fatalf("unit not enabled: %s -> %q (%v)", link, target, err)
	}
	if _, err := UninstallUnit(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Fatalf("uninstall left %s", p)
	}
	if _, err := os.Lstat(link); !os.IsNotExist(err) {
		t.Fatalf("uninstall left the enabling link %s", link)
	}
}

func TestQuoteExec(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"/usr/bin/quotagate", "/usr/bin/quotagate"},
		{"serve", "serve"},
		{"a b", `"a b"`},
		{`say "hi"`, `"say \"hi\""`},
		{"50%", "50%%"},
		{`back\slash`, `"back\\slash"`},
		{"", `""`},
	} {
		if got := quoteExec(c.in); got != c.want {
			t.Errorf("quoteExec(%q) = %s, want %s", c.in, got, c.want)
		}
	}
}
