//go:build race

package e2e

// raceEnabled builds the doomwatch binary under test with -race too, so the binary shares the
// test's build cache and a data race in it fails the suite (exit code 66).
const raceEnabled = true
