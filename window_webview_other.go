//go:build desktop && !linux

package main

// keepWebviewDataIn: elsewhere Wails takes the webview's data path as an
// option (options.Windows.WebviewUserDataPath, set in runWindow).
func keepWebviewDataIn(string) error { return nil }
