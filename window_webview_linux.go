//go:build desktop && linux

package main

/*
#cgo pkg-config: glib-2.0
#include <glib.h>
*/
import "C"

import (
	"fmt"
	"os"
	"path/filepath"
)

// keepWebviewDataIn makes WebKitGTK keep the window's own files — local
// storage (the page's language, theme and notification switches), HSTS,
// media keys, its HTTP cache — under dir instead of the user's
// $XDG_DATA_HOME/quotagate and $XDG_CACHE_HOME/quotagate, which every data
// directory would share (and which is the default data directory itself).
// Wails 2.9.2 has no Linux option for it: WebKit's default context builds
// its paths from GLib's user data and cache directories, which GLib reads
// from the environment once and then keeps. So this resolves them here,
// before GTK starts, with XDG_DATA_HOME and XDG_CACHE_HOME pointing into
// dir, and puts the environment back: programs the window starts (the file
// manager) see the user's own. WebKit then writes dir/quotagate/ and
// dir/cache/quotagate/. GTK's other per-user data (recently used files)
// follows it there.
func keepWebviewDataIn(dir string) error {
	data, cache := dir, filepath.Join(dir, "cache")
	for _, d := range []string{data, cache} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("the window's data directory: %w", err)
		}
	}
	restore := setenvFor(map[string]string{"XDG_DATA_HOME": data, "XDG_CACHE_HOME": cache})
	gotData, gotCache := C.GoString(C.g_get_user_data_dir()), C.GoString(C.g_get_user_cache_dir())
	restore()
	if gotData != data || gotCache != cache {
		return fmt.Errorf("the window's data directory: GLib had already settled on %s and %s", gotData, gotCache)
	}
	return nil
}

// setenvFor sets vars and returns what puts the environment back.
func setenvFor(vars map[string]string) (restore func()) {
	type was struct {
		value string
		set   bool
	}
	old := map[string]was{}
	for k, v := range vars {
		value, set := os.LookupEnv(k)
		old[k] = was{value, set}
		os.Setenv(k, v)
	}
	return func() {
		for k, w := range old {
			if w.set {
				os.Setenv(k, w.value)
			} else {
				os.Unsetenv(k)
			}
		}
	}
}
