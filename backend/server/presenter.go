package server

import "sync/atomic"

// presenter holds the desktop window's show function, registered after Open
// (the window starts after its server). Until then, and in `serve`, there is
// no window: a second launch opens its own window onto this server.
type presenter struct{ show atomic.Pointer[func() bool] }

func (p *presenter) Show() bool {
	if f := p.show.Load(); f != nil {
		return (*f)()
	}
	return false
}

// SetPresenter registers the window that a second launch of quotagate on the
// same data directory brings forward; show reports whether it did.
func (s *Server) SetPresenter(show func() bool) { s.presenter.show.Store(&show) }
