package app

// Remote is a gateway already running on this data directory (a headless
// `quotagate serve`, typically started at login) that the window attaches to
// instead of starting a second one.
type Remote struct {
	BaseURL, Token, Dir string
}

func (r Remote) URL() string        { return r.BaseURL }
func (r Remote) AdminToken() string { return r.Token }
func (r Remote) DataDir() string    { return r.Dir }

// Close leaves the running gateway alone: closing the window does not stop it.
func (Remote) Close() error { return nil }
