//go:build !desktop || !linux

package main

// Only the Linux desktop build has a headless sibling to hand `serve` to
// (see headless_linux.go); everywhere else serve runs here.
func execHeadless([]string)      {}
func execHeadlessServe([]string) {}
