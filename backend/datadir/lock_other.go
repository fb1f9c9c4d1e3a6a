//go:build !unix && !windows

package datadir

import "os"

// lockFile is not enforced on this platform yet: one process per data dir
// is then the user's care (the desktop build targets Linux and macOS).
func lockFile(*os.File) (bool, error) { return false, nil }

func probe(*os.File) (bool, error) { return false, nil }
