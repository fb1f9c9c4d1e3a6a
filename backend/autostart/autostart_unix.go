//go:build !windows

package autostart

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
)

const name = "quotagate"

// configHome is $XDG_CONFIG_HOME, else $HOME/.config.
func configHome() (string, error) {
	if d := os.Getenv("XDG_CONFIG_HOME"); filepath.IsAbs(d) {
		return d, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("find the config directory: %w", err)
	}
	return filepath.Join(home, ".config"), nil
}

func supported() error {
	if runtime.GOOS == "darwin" {
		return ErrUnsupported
	}
	return nil
}

// EntryPath is where the XDG autostart entry lives.
func EntryPath() (string, error) {
	d, err := configHome()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "autostart", name+".desktop"), nil
}

// UnitPath is where the systemd user unit lives.
func UnitPath() (string, error) {
	d, err := configHome()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "systemd", "user", name+".service"), nil
}

// EnableEntry writes the autostart entry for c.
func EnableEntry(c Command) error {
	if err := supported(); err != nil {
		return err
	}
	p, err := EntryPath()
	if err != nil {
		return err
	}
	return write(p, entryText(c))
}

func entryText(c Command) string {
	return "[Desktop Entry]\n" +
		"Type=Application\n" +
		"Name=quotagate (gateway)\n" +
		"Comment=Start the quotagate gateway at login, without a window\n" +
		"Exec=" + join(c, quoteExec) + "\n" +
		"Icon=quotagate\n" +
		"Terminal=false\n" +
		"NoDisplay=true\n" +
		"X-GNOME-Autostart-enabled=true\n"
}

// DisableEntry removes the autostart entry; removing none is not an error.
func DisableEntry() error {
	p, err := EntryPath()
	if err != nil {
		return err
	}
	return remove(p)
}

// EntryEnabled reports whether the autostart entry exists.
func EntryEnabled() (bool, error) {
	p, err := EntryPath()
	if err != nil {
		return false, err
	}
	return exists(p)
}

// EnableHint is what to tell a user after InstallUnit.
const EnableHint = "it starts at your next login; to start it now: systemctl --user daemon-reload && systemctl --user start quotagate\n"

// InstallUnit writes the systemd user unit for c, enabled the way
// `systemctl --user enable` does it (a link in default.target.wants, so no
// user bus is needed), and returns its path.
func InstallUnit(c Command) (string, error) {
	if err := supported(); err != nil {
		return "", err
	}
	p, err := UnitPath()
	if err != nil {
		return "", err
	}
	if err := write(p, unitText(c)); err != nil {
		return p, err
	}
	link := wantsLink(p)
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		return p, fmt.Errorf("enable %s: %w", p, err)
	}
	if err := remove(link); err != nil {
		return p, err
	}
	if err := os.Symlink(filepath.Join("..", filepath.Base(p)), link); err != nil {
		return p, fmt.Errorf("enable %s: %w", p, err)
	}
	return p, nil
}

func wantsLink(unit string) string {
	return filepath.Join(filepath.Dir(unit), "default.target.wants", filepath.Base(unit))
}

func unitText(c Command) string {
	return "[Unit]\n" +
		"Description=quotagate LLM gateway (headless)\n" +
		"After=network.target\n\n" +
		"[Service]\n" +
		"ExecStart=" + join(c, quoteSystemd) + "\n" +
		"Restart=on-failure\n\n" +
		"[Install]\n" +
		"WantedBy=default.target\n"
}

// UninstallUnit removes the systemd user unit; removing none is not an error.
func UninstallUnit() (string, error) {
	p, err := UnitPath()
	if err != nil {
		return "", err
	}
	if err := remove(wantsLink(p)); err != nil {
		return p, err
	}
	return p, remove(p)
}

func write(path, text string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("create %s: %w", filepath.Dir(path), err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(text), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

func remove(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove %s: %w", path, err)
	}
	return nil
}

func exists(path string) (bool, error) {
	_, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read %s: %w", path, err)
	}
	return true, nil
}
