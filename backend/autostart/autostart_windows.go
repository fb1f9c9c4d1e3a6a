//go:build windows

package autostart

import (
	"errors"
	"fmt"
	"strings"

	"golang.org/x/sys/windows/registry"
)

const (
	runKey   = `Software\Microsoft\Windows\CurrentVersion\Run`
	runValue = "quotagate"
)

// EnableEntry sets the per-user Run key for c.
func EnableEntry(c Command) error {
	k, _, err := registry.CreateKey(registry.CURRENT_USER, runKey, registry.SET_VALUE)
	if err != nil {
		return fmt.Errorf("open HKCU\\%s: %w", runKey, err)
	}
	defer k.Close()
	if err := k.SetStringValue(runValue, join(c, quoteWindows)); err != nil {
		return fmt.Errorf("set HKCU\\%s\\%s: %w", runKey, runValue, err)
	}
	return nil
}

// DisableEntry deletes the Run value; deleting none is not an error.
func DisableEntry() error {
	k, err := registry.OpenKey(registry.CURRENT_USER, runKey, registry.SET_VALUE)
	if errors.Is(err, registry.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("open HKCU\\%s: %w", runKey, err)
	}
	defer k.Close()
	if err := k.DeleteValue(runValue); err != nil && !errors.Is(err, registry.ErrNotExist) {
		return fmt.Errorf("delete HKCU\\%s\\%s: %w", runKey, runValue, err)
	}
	return nil
}

// EntryEnabled reports whether the Run value exists.
func EntryEnabled() (bool, error) {
	k, err := registry.OpenKey(registry.CURRENT_USER, runKey, registry.QUERY_VALUE)
	if errors.Is(err, registry.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("open HKCU\\%s: %w", runKey, err)
	}
	defer k.Close()
	_, _, err = k.GetStringValue(runValue)
	if errors.Is(err, registry.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

// EnableHint is what to tell a user after InstallUnit.
const EnableHint = "it starts at your next sign-in\n"

// InstallUnit on Windows is the Run key: there is no per-user service manager.
func InstallUnit(c Command) (string, error) {
	return `HKCU\` + runKey + `\` + runValue, EnableEntry(c)
}

// UninstallUnit removes the Run key.
func UninstallUnit() (string, error) {
	return `HKCU\` + runKey + `\` + runValue, DisableEntry()
}

// quoteWindows quotes a command-line word the way CommandLineToArgvW reads it.
func quoteWindows(arg string) string {
	if arg != "" && !strings.ContainsAny(arg, " \t\"") {
		return arg
	}
	return `"` + strings.ReplaceAll(arg, `"`, `\"`) + `"`
}
