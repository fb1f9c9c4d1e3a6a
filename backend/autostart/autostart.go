package autostart

import (
	"errors"
	"strings"
)

// Command is what starts at login: the executable and its arguments.
type Command struct {
	Exe  string
	Args []string
}

// Serve is the command that runs exe headless on dataDir.
func Serve(exe, dataDir string) Command {
	return Command{Exe: exe, Args: []string{"serve", "--data", dataDir}}
}

// ErrUnsupported: this system has no start-at-login registration quotagate knows.
var ErrUnsupported = errors.New("starting at login is not supported on this system")

// quoteExec quotes one argument of a desktop entry's Exec key (the Desktop
// Entry Specification's rules): reserved characters force double quotes,
// inside which " ` $ \ are escaped; a literal % is written %%.
func quoteExec(arg string) string {
	arg = strings.ReplaceAll(arg, "%", "%%")
	if arg != "" && !strings.ContainsAny(arg, " \t\n\"'\\><~|&;$*?#()`") {
		return arg
	}
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range arg {
		if strings.ContainsRune("\"`$\\", r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	b.WriteByte('"')
	return b.String()
}

// quoteSystemd quotes one word of a systemd ExecStart= line.
func quoteSystemd(arg string) string {
	if arg != "" && !strings.ContainsAny(arg, " \t\n\"'\\;$%") {
		return arg
	}
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, `$`, `$$`, `%`, `%%`)
	return `"` + r.Replace(arg) + `"`
}

func join(c Command, quote func(string) string) string {
	words := make([]string, 0, 1+len(c.Args))
	for _, w := range append([]string{c.Exe}, c.Args...) {
		words = append(words, quote(w))
	}
	return strings.Join(words, " ")
}
