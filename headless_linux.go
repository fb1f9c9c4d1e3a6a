//go:build desktop && linux

package main

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
)

// execHeadless runs `quotagate serve` from the build without a window that
// `make build` and the packages install beside this one (quotagate-headless):
// this binary links WebKitGTK and GTK, about 170 shared libraries whose
// loading alone costs a headless gateway ~50 MB of RSS it never uses (87 MB
// idle here against 31 MB). It returns when args are not `serve`, or as
// execHeadlessServe does.
func execHeadless(args []string) {
	if c, err := parse(args, io.Discard); err != nil || c.command != "serve" {
		return
	}
	execHeadlessServe(args)
}

// execHeadlessServe replaces the process (same pid and environment) with the
// headless build running args, a `serve` command line. It returns only when
// there is no such binary, it is not this version, or the exec fails; serve
// then runs in this process. QUOTAGATE_IN_PROCESS=1 keeps it here.
func execHeadlessServe(args []string) {
	if os.Getenv("QUOTAGATE_IN_PROCESS") != "" {
		return
	}
	self, err := os.Executable()
	if err != nil {
		return
	}
	bin := filepath.Join(filepath.Dir(self), headlessBinary)
	// A binary left from another build must not serve in this one's place.
	out, err := exec.Command(bin, "--version").Output()
	if err != nil || strings.TrimSpace(string(out)) != "quotagate "+version {
		return
	}
	_ = syscall.Exec(bin, append([]string{bin}, args...), os.Environ())
}
