//go:build unix

package app

import (
	"os"
	"os/signal"
	"syscall"
	"testing"
)

// TestSignalledOnceWailsHeardIt: when Wails' own channel has the signal
// (it then calls BeforeClose), signalled reports it — every time, not just
// when os/signal happened to fill our channel first.
func TestSignalledOnceWailsHeardIt(t *testing.T) {
	wails := make(chan os.Signal, 1)
	signal.Notify(wails, syscall.SIGUSR1)
	defer signal.Stop(wails)
	for i := range 300 {
		a := New(nil)
		ours := make(chan os.Signal, 1)
		signal.Notify(ours, syscall.SIGUSR1)
		QuitOn(a, ours, syscall.SIGUSR1)
		if a.signalled() {
			t.Fatalf("round %d: signalled before any signal", i)
		}
		if err := syscall.Kill(os.Getpid(), syscall.SIGUSR1); err != nil {
			t.Fatal(err)
		}
		<-wails
		if !a.signalled() {
			t.Fatalf("round %d: Wails heard the signal but BeforeClose would not have", i)
		}
		if !a.signalled() {
			t.Fatalf("round %d: a second close forgot the signal", i)
		}
		signal.Stop(ours)
	}
}
