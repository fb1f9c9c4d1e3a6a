// Package autostart registers quotagate to start at login, headless
// (`quotagate serve`), so tools work before the window is opened; the window
// then attaches to that running gateway. Off by default.
//
// Two registrations, one per way a user asks:
//   - Entry: what the window's switch turns on and off — an XDG autostart
//     entry on Linux ($XDG_CONFIG_HOME/autostart/quotagate.desktop), the
//     per-user Run key on Windows.
//   - Unit: what `quotagate service install` writes on Linux — a systemd user
//     unit ($XDG_CONFIG_HOME/systemd/user/quotagate.service); on Windows it is
//     the same Run key as Entry.
//
// Paths come from the environment ($XDG_CONFIG_HOME, else $HOME/.config), so
// tests run in a temporary HOME.
package autostart
