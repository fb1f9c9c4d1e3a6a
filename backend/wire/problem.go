package wire

import "fmt"

// Problem is the first thing a response stream said that cannot be
// accounted for. Only the first is kept: what follows a broken event is
// often its consequence, and the first is what the audit should name.
type Problem struct{ first string }

// Fail is the error format and args describe, kept as the problem unless
// one came before.
func (p *Problem) Fail(format string, args ...any) error {
	err := fmt.Errorf(format, args...)
	if p.first == "" {
		p.first = err.Error()
	}
	return err
}

// String is the first problem, or "".
func (p *Problem) String() string { return p.first }
