//go:build race

package sim_test

// The race detector slows the simulator ~10×; a few seeds still exercise
// every code path there, the full table runs without it.
const raceEnabled = true
